"""What the correctness check of one benchmark batch costs: Q from torch.linalg.householder_product (the
contract's reference, cuSOLVER one matrix at a time) against the checker's compact-WY `householder_q`, and
the whole `check`. Usage on a GPU machine:  python bench/checker_cost.py
"""

import time

import torch

from qrjudge.cases import BENCHMARK, make_batch
from qrjudge.checker import check, householder_q, strict_fp32


def seconds(fn, repeat=3):
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t)
    return best


print(f"{'shape':<28} {'householder_product':>20} {'householder_q':>14} {'max |dQ|':>9} {'check()':>9}")
for spec in {s.label: s for s in BENCHMARK}.values():
    a = make_batch(spec, 1, "cuda")
    h, tau = (t.contiguous() for t in torch.geqrf(a))  # geqrf's H is column-major; the contract's is not
    with strict_fp32():
        ref = torch.linalg.householder_product(h, tau)
        ours = householder_q(h, tau)
        diff = float((ref - ours).abs().max())
        t_ref = seconds(lambda: torch.linalg.householder_product(h, tau))
        t_ours = seconds(lambda: householder_q(h, tau))
    t_check = seconds(lambda: check(a, h, tau))
    print(f"{spec.label:<28} {t_ref * 1e3:17.1f} ms {t_ours * 1e3:11.1f} ms {diff:9.1e} {t_check * 1e3:6.1f} ms",
          flush=True)
