"""What the host spends on each piece of a one-launch call of tsqr_wy (20x32: lane_qr), in microseconds, each
piece repeated in a loop on its own: the contexts custom_kernel enters (CuPy's device, its view of torch's
stream), the outputs' allocations, the pointers, the launch, and the whole call. In a loop of calls, as GPU MODE's
eval.py times 50 20x32 calls back to back, a shape whose kernels take less than its host work is timed at the
host's pace (bench/small_probe.py's `loop` and `host`).

    python bench/launch_cost.py [--repeat 20000]        (on a GPU machine; a few seconds)
"""

import argparse
import statistics
import time

import torch
from apply_probe import load  # (bench/ is the script's directory, first on sys.path)

LAUNCHES = 400  # calls of a piece that launches: lane_qr takes 15 us of GPU a call, so the queue stays short


def per_call_us(fn, repeat):
    """Median over five runs of `repeat` calls of fn, microseconds a call (the GPU drained after each run)."""
    runs = []
    for _ in range(5):
        began = time.perf_counter()
        for _ in range(repeat):
            fn()
        runs.append(1e6 * (time.perf_counter() - began) / repeat)
        torch.cuda.synchronize()
    return statistics.median(runs)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=20000)
    args = p.parse_args()
    k = load()
    cp = k.cp
    A = torch.randn(20, 32, 32, device="cuda")
    H, tau = k.custom_kernel(A)
    kernel = k._in_register_kernel("lane_qr")
    stream = k._stream(A.device)
    device = A.device

    def enter_device():
        with cp.cuda.Device(device.index):
            pass

    def enter_both():
        with cp.cuda.Device(device.index), k._stream(device):
            pass

    def launch():
        kernel((20,), (32,), (k._ptr(A), k._ptr(H), k._ptr(tau), cp.int32(32)))

    def launch_in_stream():
        with stream:
            launch()

    pieces = {
        "torch.cuda.current_stream(device).cuda_stream": lambda: torch.cuda.current_stream(device).cuda_stream,
        "torch._C._cuda_getCurrentRawStream(index)": lambda: torch._C._cuda_getCurrentRawStream(device.index),
        "torch.cuda.current_device()": torch.cuda.current_device,
        "cp.cuda.Device(index) entered and left": enter_device,
        "_stream(device) (the cached view)": lambda: k._stream(device),
        "both contexts entered and left (custom_kernel's)": enter_both,
        "A.contiguous()": A.contiguous,
        "torch.empty_like(A)": lambda: torch.empty_like(A),
        "torch.empty(batch, n) for tau": lambda: torch.empty(20, 32, device=device, dtype=torch.float32),
        "A.new_empty(batch, n)": lambda: A.new_empty(20, 32),
        "the four arguments (_ptr x3, cp.int32)": lambda: (k._ptr(A), k._ptr(H), k._ptr(tau), cp.int32(32)),
        "the launch (lane_qr, CuPy's current stream)": launch,
        "the launch inside the cached stream": launch_in_stream,
        "custom_kernel(A), the whole call": lambda: k.custom_kernel(A),
    }
    launching = {"the launch (lane_qr, CuPy's current stream)", "the launch inside the cached stream",
                 "custom_kernel(A), the whole call"}
    print(torch.cuda.get_device_name(), f"20x32, us a call of each piece (median of 5 runs of {args.repeat} calls; "
          f"of {LAUNCHES} where it launches, fewer than the launch queue holds, so the host never waits for it):")
    for name, fn in pieces.items():
        print(f"  {per_call_us(fn, LAUNCHES if name in launching else args.repeat):8.2f}  {name}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
