"""tsqr_wy's whole-matrix kernels for n <= 32 on one shape (20x32, the contract's smallest), timed side by side in
one process: col_qr (LANE_QR = 0), lane_qr (1) and lane_qr_loop (2). Each call after an L2 flush of 256 MiB, as the
judge times it (CUDA events around the call alone); rounds alternate between the kernels so that a drift of the
clock falls on all of them; each result checked against torch.geqrf's R up to signs. Microseconds a call.

    python bench/small_probe.py [BATCH N] [--calls 200]        (on a GPU machine; about 15 s)
"""

import argparse
import statistics

import torch
from apply_probe import load  # (bench/ is the script's directory, first on sys.path)

KINDS = {"col_qr": 0, "lane_qr": 1, "lane_qr_loop": 2}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("shape", nargs="*", type=int, default=[20, 32])
    p.add_argument("--calls", type=int, default=200)
    args = p.parse_args()
    batch, n = args.shape
    k = load()
    A = torch.randn(batch, n, n, device="cuda")
    want = torch.linalg.qr(A.double(), mode="r")[1].abs()
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    times: dict[str, list[float]] = {name: [] for name in KINDS}
    for name, value in KINDS.items():
        k.LANE_QR = value
        H, _ = k.custom_kernel(A)  # compiled and checked before any timing
        err = (torch.triu(H).double().abs() - want).abs().max().item()
        print(f"{name}: |R| against torch's {err:.1e}")
    for _ in range(args.calls):
        for name, value in KINDS.items():
            k.LANE_QR = value
            flush.zero_()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            k.custom_kernel(A)
            stop.record()
            stop.synchronize()
            times[name].append(1e3 * start.elapsed_time(stop))
    print(torch.cuda.get_device_name(), f"{batch}x{n}, {args.calls} calls each, us a call:")
    for name, ts in times.items():
        print(f"  {name:13} mean {statistics.fmean(ts):7.2f}  median {statistics.median(ts):7.2f}  min {min(ts):7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
