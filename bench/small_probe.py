"""tsqr_wy's whole-matrix kernels on one shape (by default 20x32, the contract's smallest), side by side in one
process: the values of one constant of kernel.py (by default LANE_QR 0 and 1: col_qr and lane_qr; `--vary
COLK_N=0,192`: the path before colk_qr and colk_qr), timed two ways, rounds alternating between them so that a
drift of the clock falls on both:

- `single`: an L2 flush of 256 MiB, then CUDA events around the one call (the host's launch in it);
- `held`: the same behind a hold (torch.cuda._sleep, one thread spinning about 100 us, before the start event), so
  that the call's launches are queued when the GPU reaches it and only the GPU's part is timed, as the judge's hold
  (qrjudge/timing.py's Hold, which fills every SM) does for a call on one stream;
- `loop`, as GPU MODE's eval.py does: one flush, then LOOP calls back to back on as many distinct inputs between two
  events, divided by LOOP; and `host`, the host's own time a call in that loop (its launches, no waiting): a
  loop at the host's pace is launch-bound.

Each kernel's result is checked against torch's R up to signs first. Microseconds a call.

    python bench/small_probe.py [BATCH N] [--calls 200] [--loop 50] [--kernel FILE] [--vary NAME=A,B]   (a GPU)

`--vary "NAME=A,OTHER=B;NAME=C"` compares whole configurations instead, `;` between them. Each configuration keeps
CUDA graphs of its own (kernel.py caches one per shape, blind to its constants).

FILE: a kernel.py (default: seed_kernels/tsqr_wy's) or the file `evolve export --format gpumode` wrote.
"""

import argparse
import statistics
import time
from pathlib import Path

import torch
from apply_probe import KERNEL, load  # (bench/ is the script's directory, first on sys.path)


HOLD_CYCLES = 200_000  # about 100 us at the H100's and H200's clocks: longer than the host takes to launch a call


def between_events(fn, hold=False):
    """Milliseconds between two events around fn(), and the host's own milliseconds in fn() (no waiting); with
    `hold`, the GPU held busy (one thread spinning) from just before the start event while the host launches."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    if hold:
        torch.cuda._sleep(HOLD_CYCLES)
    start.record()
    began = time.perf_counter()
    fn()
    host = time.perf_counter() - began
    stop.record()
    stop.synchronize()
    return start.elapsed_time(stop), 1e3 * host


def configurations(vary):
    """{label: {constant: value}} from `--vary`: one constant's values (NAME=A,B) or whole configurations (;)."""
    if ";" not in vary:
        constant, values = vary.split("=")
        return {f"{constant}={v}": {constant: int(v)} for v in values.split(",")}
    return {part: {name: int(value) for name, value in (pair.split("=") for pair in part.split(","))}
            for part in vary.split(";")}


def use(k, values, graphs):
    """Set kernel.py's constants, and its CUDA graph cache to the configuration's own."""
    for constant, value in values.items():
        setattr(k, constant, value)
    if hasattr(k, "_GRAPHS"):
        k._GRAPHS = graphs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("shape", nargs="*", type=int, default=[20, 32])
    p.add_argument("--calls", type=int, default=200, help="rounds of each way")
    p.add_argument("--loop", type=int, default=50, help="calls a `loop` round (eval.py: 50 at 20x32)")
    p.add_argument("--kernel", type=Path, default=KERNEL)
    p.add_argument("--vary", default="LANE_QR=0,1", help="a constant of kernel.py and its values")
    args = p.parse_args()
    batch, n = args.shape
    k = load(args.kernel)
    kinds = configurations(args.vary)
    inputs = [torch.randn(batch, n, n, device="cuda") for _ in range(args.loop)]
    want = torch.linalg.qr(inputs[0].double(), mode="r")[1].abs()
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    times = {(name, way): [] for name in kinds for way in ("single", "held", "loop", "host")}
    graphs = {name: {} for name in kinds}
    for name, values in kinds.items():
        use(k, values, graphs[name])
        H, _ = k.custom_kernel(inputs[0])  # compiled and checked before any timing
        print(f"{name}: |R| against torch's {(torch.triu(H).double().abs() - want).abs().max().item():.1e}")
    for _ in range(args.calls):
        for name, values in kinds.items():
            use(k, values, graphs[name])
            flush.zero_()
            times[name, "single"].append(1e3 * between_events(lambda: k.custom_kernel(inputs[0]))[0])
            flush.zero_()
            times[name, "held"].append(1e3 * between_events(lambda: k.custom_kernel(inputs[0]), hold=True)[0])
            flush.zero_()
            ms, host = between_events(lambda: [k.custom_kernel(a) for a in inputs])
            times[name, "loop"].append(1e3 * ms / args.loop)
            times[name, "host"].append(1e3 * host / args.loop)
    print(torch.cuda.get_device_name(), f"{batch}x{n} from {args.kernel.name}, {args.calls} rounds, us a call "
          f"(loop: {args.loop} calls a round; host: the host's own time a call in the loop):")
    for (name, way), ts in times.items():
        print(f"  {name:12} {way:7} mean {statistics.fmean(ts):7.2f}  median {statistics.median(ts):7.2f}  "
              f"min {min(ts):7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
