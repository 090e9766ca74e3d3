"""The QR judge's parts that run without a GPU: input cases, the gates, the static scan, the supervisor."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from qrjudge import cases  # noqa: E402
from qrjudge.cases import CASES, ILL, Spec, make_batch, mixed_cases  # noqa: E402
from qrjudge.checker import as_pair, check, householder_q, modes_left, sanity, strict_fp32  # noqa: E402
from qrjudge.guard import scan  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

CHEATS = Path(__file__).parent / "cheats"


def geqrf(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    h, tau = torch.geqrf(a)
    return h.contiguous(), tau.contiguous()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("n", [1, 2, 17, 40, 100])
def test_cpu_geqrf_passes_every_case(case: str, n: int) -> None:
    a = make_batch(Spec(4, n, 2, case), seed=n * 31 + 7, device="cpu")
    verdict = check(a, *geqrf(a))
    assert verdict.ok, verdict.reason
    assert verdict.factor < 20 and verdict.orth < 100


@pytest.mark.parametrize("case", CASES)
def test_wrong_factorisations_fail(case: str) -> None:
    a = make_batch(Spec(3, 48, 2, case), seed=11, device="cpu")
    h, tau = geqrf(a)
    broken_r = h.clone()
    broken_r[2, 3, 30] += 0.05 * float(a[2].abs().max())  # R off in one entry of one matrix
    verdict = check(a, broken_r, tau)
    assert not verdict.ok and verdict.matrix == 2
    broken_tau = tau.clone()
    broken_tau[1] = 0.0  # Q = I
    assert not check(a, h, broken_tau).ok or case == "upper"


@pytest.mark.parametrize("n", [1, 2, 3, 31, 64, 130])
def test_householder_q_is_the_library_product(n: int) -> None:
    """The checker's compact-WY Q equals householder_product (the contract's reference) to rounding: for
    real reflectors, for tau = 0 (rank-deficient columns) and for garbage (H, tau) a cheat might return."""
    a = make_batch(Spec(3, n, 2, "rankdef"), seed=n, device="cpu")
    h, tau = geqrf(a)
    garbage_h, garbage_tau = torch.randn(2, n, n) * 0.3, torch.rand(2, n) * 3
    with strict_fp32():
        for hh, tt in ((h, tau), (garbage_h, garbage_tau)):
            ref = torch.linalg.householder_product(hh.double(), tt.double())
            ours = householder_q(hh, tt).double()
            assert float((ours - ref).abs().max()) <= 1e-4 * max(1.0, float(ref.abs().max()))


def test_sanity_gates() -> None:
    a = make_batch(Spec(2, 8, 1, "dense"), 1, "cpu")
    h, tau = geqrf(a)
    assert sanity(a, (h, tau)) == ""
    assert "shape" in sanity(a, (h[:, :4], tau))
    assert "dtype" in sanity(a, (h.double(), tau))
    assert "contiguous" in sanity(a, (h.transpose(1, 2), tau))
    nan = h.clone()
    nan[1, 0, 0] = float("nan")
    assert "non-finite" in sanity(a, (nan, tau)) and "matrix 1" in sanity(a, (nan, tau))
    assert "fresh" in sanity(a, (a, tau))
    assert "return (H, tau)" in sanity(a, h)
    assert sanity(a, [h, tau]) == ""


def test_the_outputs_are_read_without_running_the_candidates_code() -> None:
    """A tuple or list is read through the base class's own methods (a subclass's `__iter__` or `__getitem__`
    would run the candidate's code in the runner's checks, after the timed region), and H and tau must be
    torch.Tensor itself, whose methods are torch's (a subclass's `__torch_function__` would run there too)."""
    a = make_batch(Spec(2, 8, 1, "dense"), 1, "cpu")
    h, tau = geqrf(a)
    ran = []

    class Later(tuple):
        def __iter__(self):
            ran.append("iter")
            return tuple.__iter__(self)

        def __getitem__(self, i):
            ran.append("getitem")
            return tuple.__getitem__(self, i)

        def __len__(self):
            ran.append("len")
            return 2

    assert sanity(a, Later((h, tau))) == "" and ran == []
    assert as_pair(Later((h, tau)))[0] is h and ran == []

    class Lazy(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            ran.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    assert "plain torch tensors" in sanity(a, (h.as_subclass(Lazy), tau)) and ran == []
    assert "plain torch tensors" in sanity(a, (h, tau.as_subclass(Lazy))) and ran == []


def test_a_torch_mode_left_active_is_named() -> None:
    """A torch function or dispatch mode still on torch's stacks after a call would run the candidate's code in the
    runner's own checks: `modes_left` names it, asking the stacks through functions bound at the judge's import, so
    a replaced `torch._C._len_torch_function_stack` (or `_len_torch_dispatch_stack`) changes nothing."""
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    class Quiet(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    class Watching(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    assert modes_left() == ""
    for mode, kind in ((Quiet(), "function"), (Watching(), "dispatch")):
        mode.__enter__()
        try:
            depth = f"_len_torch_{kind}_stack"  # the stack this mode is on, its depth replaced by a liar
            honest = getattr(torch._C, depth)
            setattr(torch._C, depth, lambda: 0)
            try:
                assert modes_left() == f"a torch {kind} mode left active by the candidate's code"
            finally:
                setattr(torch._C, depth, honest)
        finally:
            mode.__exit__(None, None, None)
    assert modes_left() == ""


def test_the_runner_waits_for_the_judges_copy_in_code_bound_before_any_candidate(monkeypatch) -> None:
    """`Channel.handover` (a call's `done`, then the wait for the judge's `kept`) runs nothing that a candidate
    could have replaced for a moment: with os.read, os.write, select, the clock, JSON and builtins.len all
    replaced by functions that raise, it still says `done` and waits for the judge's line."""
    import builtins
    import os
    import select
    import time

    from qrjudge import wire

    to_runner, runner_in = os.pipe()[::-1]
    runner_out, from_runner = os.pipe()[::-1]
    channel = wire.Channel(runner_in, runner_out)
    channel.reader.spin_s = 0.01
    os.write(to_runner, b'{"kept": true, "nonce": 7}\n')

    def replaced(*args, **kwargs):
        raise AssertionError("the candidate's code ran in the runner's wait")

    for owner, name in ((os, "read"), (os, "write"), (select, "select"), (time, "perf_counter"), (json, "dumps"),
                        (builtins, "len")):
        monkeypatch.setattr(owner, name, replaced)
    channel.handover(7)
    monkeypatch.undo()
    assert wire.LineReader(from_runner).readline() == b'{"done": true, "nonce": 7}\n'
    assert channel.reader.buffer == b""  # the judge's line read whole, nothing of the next message
    for fd in (to_runner, runner_in, runner_out, from_runner):
        os.close(fd)


def test_cases_have_their_structure() -> None:
    n = 64
    rankdef = make_batch(Spec(2, n, 0, "rankdef"), 3, "cpu")
    assert bool((rankdef[:, :, n - n // 4:] == 0).all())
    upper = make_batch(Spec(2, n, 0, "upper"), 3, "cpu")
    assert bool((torch.tril(upper, -1) == 0).all()) and bool((torch.diagonal(upper, dim1=1, dim2=2).abs() >= 0.25).all())
    band = make_batch(Spec(2, n, 0, "band"), 3, "cpu")
    assert bool((torch.triu(band, 3) == 0).all())
    clustered = make_batch(Spec(2, n, 0, "clustered"), 3, "cpu")
    assert float(clustered[:, :, n // 2 + 1:].abs().max()) < 1e-5
    dense = make_batch(Spec(2, n, 2, "dense"), 3, "cpu")
    assert float(dense[:, :, -1].abs().mean()) < 0.05 * float(dense[:, :, 0].abs().mean())
    assert torch.equal(make_batch(Spec(3, 32, 2, "mixed"), 9, "cpu"), make_batch(Spec(3, 32, 2, "mixed"), 9, "cpu"))
    assert not torch.equal(make_batch(Spec(3, 32, 2, "dense"), 9, "cpu"), make_batch(Spec(3, 32, 2, "dense"), 10, "cpu"))


def test_mixed_batches_hide_ill_conditioned_matrices() -> None:
    for seed in range(20):
        chosen = mixed_cases(Spec(16, 32, 2, "mixed"), seed)
        assert "dense" in chosen and any(c != "dense" for c in chosen)
        every = mixed_cases(Spec(32, 32, 2, "mixed", force="all"), seed)
        assert set(ILL) <= set(every)
    assert all(spec.n >= 1 for spec in cases.tests_for("full"))
    assert {s.force for s in cases.tests_for("full") if s.case == "mixed"} >= set(ILL) | {"all"}


def test_checker_turns_tf32_off_and_restores_flags() -> None:
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        with strict_fp32():
            assert torch.backends.cuda.matmul.allow_tf32 is False
        assert torch.backends.cuda.matmul.allow_tf32 is True
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
    with strict_fp32():  # again, once the flags were set by hand after it (newer torch then hides the precision)
        assert torch.backends.cuda.matmul.allow_tf32 is False


STATIC = {"geqrf_direct": "geqrf", "geqrf_getattr": "computed attribute", "geqrf_reduce": "getattr used as a value",
          "householder_product": "householder_product", "cpu_library": "import of 'numpy'", "tf32_global": "allow_tf32"}


@pytest.mark.parametrize("name", sorted(STATIC))
def test_static_scan_catches_library_calls(tmp_path: Path, name: str) -> None:
    (tmp_path / "kernel.py").write_text((CHEATS / f"{name}.py").read_text())
    findings = scan(tmp_path)
    assert findings and any(STATIC[name] in f for f in findings), findings


def test_static_scan_passes_the_seeds_and_ignores_comments(tmp_path: Path) -> None:
    for seed in ("naive", "blocked_wy", "tsqr_wy"):
        assert scan(ROOT / "seed_kernels" / seed) == []
    (tmp_path / "qr.cu").write_text("// no cusolver here\n/* nor\n magma */ int x;\n")
    (tmp_path / "kernel.py").write_text("import torch\nx = eval('1')\nimport ctypes\n")
    findings = scan(tmp_path)
    assert "kernel.py:2: forbidden name 'eval'" in findings
    assert any(f.startswith("kernel.py:3: import of 'ctypes'") for f in findings)
    assert not any(f.startswith("qr.cu") for f in findings)
    (tmp_path / "qr.cu").write_text('#include <cusolverDn.h>\n')
    assert any("library solver" in f for f in scan(tmp_path))


def harness(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "qrjudge.supervisor", *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    lines = proc.stdout.strip().splitlines()
    assert lines, proc.stderr
    return json.loads(lines[-1])


def test_supervisor_always_prints_one_json_line(tmp_path: Path) -> None:
    assert harness("--kernel-dir", str(tmp_path))["status"] == "compile_error"
    (tmp_path / "kernel.py").write_text((CHEATS / "geqrf_direct.py").read_text())
    result = harness("--kernel-dir", str(tmp_path), "--mode", "quick")
    assert result["status"] == "rejected" and "geqrf" in result["error"] and result["score"] is None
    assert len(result["harness_version"]) == 12 and isinstance(result["seed"], int)


def test_supervisor_without_a_gpu_says_so(tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    (tmp_path / "kernel.py").write_text("def custom_kernel(A):\n    return A\n")
    result = harness("--kernel-dir", str(tmp_path), "--mode", "quick")
    assert result["status"] == "crash" and "no CUDA device" in result["error"]


def prestarted(kernel_dir: Path, go: str | None) -> dict:
    """Start the harness with --prestart, fill the kernel directory afterwards, then send `go` (None: close
    stdin without a line, as when the caller dies)."""
    proc = subprocess.Popen([sys.executable, "-m", "qrjudge.supervisor", "--kernel-dir", str(kernel_dir), "--mode", "quick",
                             "--prestart"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    kernel_dir.mkdir(exist_ok=True)
    (kernel_dir / "kernel.py").write_text((CHEATS / "geqrf_direct.py").read_text())
    stdout, stderr = proc.communicate(go or "", timeout=120)
    lines = stdout.strip().splitlines()
    assert lines, stderr
    return json.loads(lines[-1])


def test_prestart_evaluates_the_kernel_written_after_the_start(tmp_path: Path) -> None:
    result = prestarted(tmp_path / "kernel", "go\n")
    assert result["status"] == "rejected" and "geqrf" in result["error"]  # it saw the late kernel.py
    assert result["timings"]["prestarted_s"] >= 0 and result["timings"]["wall_s"] >= 0


def test_prestart_without_a_go_line_ends_cleanly(tmp_path: Path) -> None:
    result = prestarted(tmp_path / "kernel", None)
    assert result["status"] == "crash" and "no go line" in result["error"] and result["score"] is None


def test_a_prestarted_judge_serves_the_mode_its_go_line_names(tmp_path: Path) -> None:
    """The engine keeps judges prestarted in the run's mode; a would-be best's confirmation (another mode,
    profiled) takes one too, its go line naming the mode: the verdict is that mode's, every test of it."""
    from qrjudge.specs import tests_for

    kernel_dir = tmp_path / "kernel"
    proc = subprocess.Popen([sys.executable, "-m", "qrjudge.supervisor", "--kernel-dir", str(kernel_dir), "--mode",
                             "quick", "--device", "cpu", "--prestart"], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    shutil.copytree(ROOT / "tests" / "cpu_kernel", kernel_dir)
    stdout, stderr = proc.communicate("go tiny\n", timeout=300)
    result = json.loads(stdout.strip().splitlines()[-1])
    assert result["status"] == "ok", (result.get("error"), stderr[-2000:])
    assert result["mode"] == "tiny" and result["tests"]["labels"] == [s.label for s in tests_for("tiny")]


def test_a_runner_under_mps_is_named_in_the_verdict() -> None:
    """MPS moves a GPU's timings (the seed's small batches 3-4% slower, notebook 2026-12-03/run83) and the contest
    times without it: each runner says at `warm`, before any candidate code exists, whether its context is an MPS
    client (timing.mps_enabled), and one that is marks the verdict (`gpu.mps`, a flag)."""
    from types import SimpleNamespace

    from qrjudge.stages import warm
    from qrjudge.timing import mps_enabled

    class Runner:
        def __init__(self, mps: bool | None) -> None:
            self.mps = mps

        def post(self, message: dict) -> int:
            assert message["op"] == "warm"
            return 7

        def reply(self, nonce: int, where: str) -> dict:
            return {"warm": True, "nonce": nonce, "mps": self.mps}

    def ctx() -> SimpleNamespace:
        return SimpleNamespace(runner=Runner(None), args=SimpleNamespace(device="cpu"),
                               device=SimpleNamespace(type="cpu"), timings={}, mps=False)

    plain, shared = ctx(), ctx()
    warm(plain, Runner(False))
    warm(shared, Runner(True))  # the timed runner of a shared GPU (`evaluate_sharing`)
    assert plain.mps is False and shared.mps is True
    assert mps_enabled() in (None, False)  # no GPU here: the driver cannot say, or no server
