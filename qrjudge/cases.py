"""Input generation for the QR contract: every case of docs/QR_CONTRACT.md, seeded, on any device.

What is generated (the specs, the benchmark, the test suites) is in qrjudge/specs.py, which needs no torch.

All cases start from float32 standard normal matrices drawn from a `torch.Generator`, so the same seed
gives the same batch on the same device. The harness draws a fresh secret seed per evaluation.
"""

from __future__ import annotations

import math

import torch

from qrjudge.specs import BENCHMARK, CASES, ILL, MIXED_WEIGHTS, Spec, benchmarks_for, tests_for

__all__ = ["BENCHMARK", "CASES", "EPS", "ILL", "Spec", "benchmarks_for", "make_batch", "mixed_cases", "tests_for"]
EPS = float(torch.finfo(torch.float32).eps)


def _ramp(n: int, start: float, stop: float, device: torch.device) -> torch.Tensor:
    return torch.linspace(start, stop, n, device=device) if n > 1 else torch.full((1,), start, device=device)


def _one_case(case: str, a: torch.Tensor, cond: float, gen: torch.Generator) -> torch.Tensor:
    """Apply `case` to a (batch, n, n) standard normal tensor, in place where possible."""
    n = a.shape[-1]
    dev = a.device
    frac = torch.arange(n, device=dev, dtype=torch.float32) / max(n - 1, 1)
    if case == "dense":
        return a * torch.pow(10.0, -cond * frac)[None, None, :]
    if case == "upper":
        a = torch.triu(a)
        d = torch.diagonal(a, dim1=-2, dim2=-1)
        d.copy_(torch.sign(d + (d == 0)) * (d.abs() + _ramp(n, 1.0, 0.25, dev)))
        return a
    if case == "rankdef":
        a[..., :, n - n // 4:] = 0.0
        return a
    if case == "nearrank":
        q = max(1, n // 4) if n > 1 else 0
        if q:
            noise = torch.randn(a.shape[0], n, q, generator=gen, device=dev)
            a[..., :, n - q:] = a[..., :, :q] + 1e-5 * noise
        return a
    if case == "clustered":
        scale = torch.ones(n, device=dev)
        half = n // 2
        if n > 1:
            scale[half:] = 4 * EPS
            scale[half] = math.sqrt(EPS)
        return a * scale[None, None, :]
    if case == "band":
        w = max(2, min(32, n // 32))
        i = torch.arange(n, device=dev)
        mask = (i[:, None] - i[None, :]).abs() <= w
        a = a * mask
        d = torch.diagonal(a, dim1=-2, dim2=-1)
        d.copy_(torch.sign(d + (d == 0)) * (d.abs() + _ramp(n, 1.0, 0.5, dev)))
        return a
    if case == "nearcollinear":
        base = a[..., :, :1]
        noise = torch.randn(a.shape, generator=gen, device=dev)
        return base + 1e-4 * noise
    if case == "rowscale":
        return a * torch.pow(10.0, -max(cond, 4.0) * frac)[None, :, None]
    raise ValueError(f"unknown case {case!r}")


def make_batch(spec: Spec, seed: int, device: torch.device | str) -> torch.Tensor:
    """A contiguous float32 (batch, n, n) tensor for `spec`, determined by `seed` and the device."""
    device = torch.device(device)
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    a = torch.randn(spec.batch, spec.n, spec.n, generator=gen, device=device, dtype=torch.float32)
    if spec.case != "mixed":
        return _one_case(spec.case, a, spec.cond, gen).contiguous()
    chosen = mixed_cases(spec, seed)
    out = torch.empty_like(a)
    for case in sorted(set(chosen)):  # a fixed order: the generator is consumed the same way each time
        idx = torch.tensor([i for i, c in enumerate(chosen) if c == case], device=device)
        out[idx] = _one_case(case, a[idx].clone(), spec.cond, gen)
    return out.contiguous()


def mixed_cases(spec: Spec, seed: int) -> list[str]:
    """The case of each matrix of a mixed batch: each draws its own (dense weighted 6); at least one dense
    and one ill-conditioned matrix sit at random positions, so sampling a few matrices cannot tell a
    kernel that the batch is easy."""
    names = list(MIXED_WEIGHTS)
    weights = torch.tensor([MIXED_WEIGHTS[c] for c in names])
    picks = torch.multinomial(weights, spec.batch, replacement=True, generator=torch.Generator().manual_seed(seed))
    chosen = [names[int(i)] for i in picks]
    if spec.batch >= 2:
        order = torch.randperm(spec.batch, generator=torch.Generator().manual_seed(seed + 1)).tolist()
        chosen[order[0]] = "dense"
        if spec.force == "all":  # every ill case once, hidden among dense matrices
            for position, case in zip(order[1:], ILL):
                chosen[position] = case
        elif spec.force or all(c == "dense" for c in chosen):
            chosen[order[1]] = spec.force or ILL[seed % len(ILL)]
    return chosen
