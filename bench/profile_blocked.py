"""Where the time of a QR candidate goes, per benchmark shape: CUDA time per kernel (CUPTI, through
torch.profiler), per call. Usage on a GPU machine:

    python bench/profile_blocked.py [KERNEL_DIR] [NAME=VALUE ...]

NAME=VALUE overrides a module-level constant of kernel.py (an @tune parameter, say) in a temporary copy.
"""

import importlib.util
import sys
from collections import defaultdict
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from qrjudge.cases import BENCHMARK, make_batch

sys.path.insert(0, str(Path(__file__).parent))
from variant import variant  # noqa: E402

args = sys.argv[1:]
kernel_dir = Path(args.pop(0) if args and "=" not in args[0] else "seed_kernels/blocked_wy")
if args:
    kernel_dir = variant(kernel_dir, args)
print(f"== {kernel_dir} {' '.join(args)}")
spec = importlib.util.spec_from_file_location("candidate", kernel_dir / "kernel.py")
module = importlib.util.module_from_spec(spec)
sys.path.insert(0, str(kernel_dir))
spec.loader.exec_module(module)
CALLS = 3
for shape in BENCHMARK:
    a = make_batch(shape, 1, "cuda")
    module.custom_kernel(a)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        start.record()
        for _ in range(CALLS):
            module.custom_kernel(a)
        end.record()
        torch.cuda.synchronize()
    total = start.elapsed_time(end) * 1e3 / CALLS
    per_kernel = defaultdict(float)
    for event in prof.key_averages():
        if event.device_type == torch.autograd.DeviceType.CUDA or getattr(event, "self_device_time_total", 0):
            per_kernel[event.key[:60]] += getattr(event, "self_device_time_total", 0.0) / CALLS
    busy = sum(per_kernel.values())
    print(f"\n{shape.label}: {total:.1f} us per call, GPU busy {busy:.1f} us ({100 * busy / total:.0f}%)")
    for name, us in sorted(per_kernel.items(), key=lambda kv: -kv[1])[:6]:
        print(f"  {us:10.1f} us  {name}")
