"""The judge's parts that need no process and no GPU: the scan judges code not prose, the runner's
integrity snapshot, the supervisor's refusal of incomplete verdicts, the chance of catching a kernel that is
wrong now and then."""

from __future__ import annotations

import os
import time
import types
from pathlib import Path
from typing import Any

import pytest

from qrjudge import integrity
from qrjudge.guard import scan
from qrjudge.specs import BENCHMARK, benchmarks_for, incomplete
from qrjudge.specs import tests_for as suite_tests
from qrjudge.timing import PLANS, catch_probability, checked_matrices, min_runs

PROSE = '''"""Same compact form as torch.geqrf (LAPACK sgeqrf); see torch.linalg.householder_product, cusolver."""
# geqrf, linalg, cusolver, magma, scipy, sys.modules: a comment names what code may not call
import torch


def custom_kernel(A):
    """Like geqrf. Not torch.linalg.qr."""
    "a bare string statement is prose too: linalg"
    return A.clone(), A.new_zeros(A.shape[:2])
'''


def kernel(tmp_path: Path, source: str) -> Path:
    (tmp_path / "kernel.py").write_text(source)
    return tmp_path


def test_docstrings_and_comments_are_not_findings(tmp_path: Path) -> None:
    assert scan(kernel(tmp_path, PROSE)) == []


def test_strings_that_are_used_still_are(tmp_path: Path) -> None:
    used = PROSE + 'NAME = "geqrf"\nlabel = f"{NAME} orgqr"\nprint("householder_product")\n'
    findings = scan(kernel(tmp_path, used))
    assert len(findings) == 3 and all("string mentions" in f for f in findings)


HONEST_NAMES = '''import functools
import torch
import cupy


def qr(a):  # a helper named for what it does
    return a.clone(), a.new_zeros(a.shape[:2])


def custom_kernel(A):
    cpu = A.device.type == "cpu"  # an ordinary variable
    step = torch.compile(qr)
    module = cupy.RawModule(code="extern \\"C\\" __global__ void k() {}")
    module.compile()
    norms = torch.linalg.vector_norm(A, dim=1)
    return step(A) if cpu else qr(A)
'''


def test_ordinary_names_are_not_findings(tmp_path: Path) -> None:
    """A helper called qr, a variable called cpu, torch.compile, CuPy's RawModule.compile, torch.linalg's norms:
    the runtime guard refuses factorisations where they end, so a name is no evidence."""
    assert scan(kernel(tmp_path, HONEST_NAMES)) == []


def test_getattr_passed_around_is_a_finding(tmp_path: Path) -> None:
    source = "import functools\nimport torch\nf = functools.reduce(getattr, ['_C', 'x'], torch)\ny = getattr(torch, 'ones')\n"
    findings = scan(kernel(tmp_path, source))
    assert findings == ["kernel.py:3: getattr used as a value (attribute access with a computed name)"], findings


def test_annotations_are_code_wherever_they_stand(tmp_path: Path) -> None:
    """typing evaluates a string annotation (get_type_hints, and functools.singledispatch through it): its names
    are scanned as code, in an assignment, an argument, a return and nested in a subscript; typing's evaluators
    and a computed __annotations__ are eval in disguise. An honest string annotation is no finding."""
    source = ('import functools\nimport torch\n\n\nclass Hints:\n    ffi: "torch.ctypes"\n    ok: "torch.Tensor"\n\n\n'
              '@functools.singledispatch\ndef f(x: list["torch.ctypes.CDLL"]) -> "torch._C.sys":\n    return x\n\n\n'
              'Hints.__annotations__["lib"] = "torch." + "ctypes"\n')
    findings = scan(kernel(tmp_path, source))
    assert findings == ["kernel.py:15: forbidden attribute .__annotations__",
                        "kernel.py:6: in an annotation: forbidden attribute .ctypes",
                        "kernel.py:11: in an annotation: forbidden attribute .CDLL",
                        "kernel.py:11: in an annotation: forbidden attribute .ctypes",
                        "kernel.py:11: in an annotation: forbidden attribute .sys"], findings
    assert scan(kernel(tmp_path, 'import torch\n\n\ndef f(a: "torch.Tensor") -> "tuple[torch.Tensor, int]":\n'
                                 '    return a, 1\n')) == []


def test_imports_by_a_string_are_findings(tmp_path: Path) -> None:
    """A module reached by a string, not an import: torch's own helper, and a pickle (torch.load without
    weights_only=True imports and calls whatever the bytes name); loading weights is no finding."""
    source = ("import io\nimport torch\n\nm = torch._utils._import_dotted_name('cupyx.' + 'cusparse')\n"
              "f = torch.load(io.BytesIO(b''), weights_only=False)\ng = torch.load('w.pt', weights_only=True)\n")
    findings = scan(kernel(tmp_path, source))
    assert sorted(f for f in findings if "import of 'io'" not in f) == [
        "kernel.py:4: forbidden attribute ._import_dotted_name",
        "kernel.py:5: unpickling without weights_only (a pickle imports and calls what it names)"], findings


@pytest.mark.parametrize("name", ["numpy.py", "math.py", "functools.py", "torch"])
def test_a_file_that_shadows_a_module_is_a_finding(tmp_path: Path, name: str) -> None:
    """`import numpy` beside a numpy.py yields the real numpy once torch has imported it: refused."""
    kernel(tmp_path, "import torch\n")
    (tmp_path / name).mkdir() if "." not in name else (tmp_path / name).write_text("x = 1\n")
    assert any("shadows the module" in f for f in scan(tmp_path)), scan(tmp_path)


def test_reading_a_docstring_back_is_a_finding(tmp_path: Path) -> None:
    source = PROSE + "import torch\nf = getattr(torch, custom_kernel.__doc__.split()[1])\n"
    assert any("__doc__" in f for f in scan(kernel(tmp_path, source)))


def test_introspection_and_processes_are_findings(tmp_path: Path) -> None:
    source = "import os\nframe = os.sys._getframe(1)\nos.system('id')\npid = os.fork()\n"
    text = " ".join(scan(kernel(tmp_path, source)))
    for name in (".sys", "._getframe", ".system", ".fork"):
        assert name in text, name


def test_integrity_names_a_replaced_function_and_a_replaced_method() -> None:
    module = types.ModuleType("fake_torch")
    module.clock = time.perf_counter  # type: ignore[attr-defined]
    module.flag = True  # type: ignore[attr-defined]

    class Event:
        def elapsed_time(self, other: object) -> float:
            return 1.0

    snapshot = integrity.Snapshot(integrity.namespaces(module, Event))
    assert snapshot.changed() == ""
    module.flag = False  # type: ignore[attr-defined]  # data is not watched
    module.submodule = types.ModuleType("lazy")  # type: ignore[attr-defined]  # new entries are allowed
    assert snapshot.changed() == ""
    original = Event.elapsed_time
    Event.elapsed_time = lambda self, other: 0.9 * original(self, other)  # type: ignore[method-assign]
    assert snapshot.changed().endswith("Event.elapsed_time was replaced")
    Event.elapsed_time = original  # type: ignore[method-assign]
    assert snapshot.changed() == ""
    module.clock = lambda: 0.0  # type: ignore[attr-defined]
    assert snapshot.changed() == "fake_torch.clock was replaced"
    del module.clock
    assert snapshot.changed() == "fake_torch.clock was removed"


def test_integrity_sees_a_function_whose_code_was_swapped() -> None:
    module = types.ModuleType("harnessish")

    def check(x: float) -> bool:
        return x < 1.0

    module.check = check  # type: ignore[attr-defined]
    snapshot = integrity.Snapshot(integrity.namespaces(module))
    check.__code__ = (lambda x: True).__code__
    assert snapshot.changed() == "harnessish.check was replaced"


def complete_verdict(mode: str) -> dict:
    shapes = [{"shape": s.label, "mean_us": 10.0, "median_us": 10.0, "runs": 3, "checked": 3} for s in benchmarks_for(mode)]
    return {"status": "ok", "score": 10.0, "shapes": shapes, "tests": {"labels": [t.label for t in suite_tests(mode)]}}


def test_the_supervisor_believes_only_complete_verdicts() -> None:
    assert incomplete(complete_verdict("full"), "full") == ""
    missing_test = complete_verdict("full")
    missing_test["tests"]["labels"].pop()
    assert "correctness test" in incomplete(missing_test, "full")
    missing_shape = complete_verdict("full")
    missing_shape["shapes"].pop()
    assert "benchmark shape" in incomplete(missing_shape, "full")
    unchecked = complete_verdict("full")
    del unchecked["shapes"][3]["checked"]
    assert "checks are missing" in incomplete(unchecked, "full")
    wrong_score = complete_verdict("full")
    wrong_score["score"] = 1.0
    assert "geometric mean" in incomplete(wrong_score, "full")
    assert incomplete(complete_verdict("quick"), "full")  # a quick verdict is not a full one


@pytest.mark.parametrize("mode", ["full", "final"])
def test_the_shortest_evaluation_still_catches_a_kernel_wrong_on_one_call_in_ten(mode: str) -> None:
    """Every shape at its fewest timed calls (a stable kernel stops there, a slow one in one round): the chance
    that a kernel wrong on 10% of its calls, each wrong call wrong on a single matrix, has one of them checked
    is still at least 0.99 per evaluation."""
    plan = PLANS[mode]
    fewest = []
    for spec in benchmarks_for(mode):
        sample = checked_matrices(plan, spec.batch, spec.n)
        fewest.append((min_runs(plan, spec.batch, sample), sample / spec.batch))
    assert catch_probability(fewest) >= 0.99
    assert catch_probability([(3, 1.0)] * 3 + [(3, 0.5)] * 9) < 0.99  # what three calls a shape gave


def test_heavy_shapes_are_checked_on_a_sample_of_every_call_in_full_and_whole_in_final() -> None:
    full, final = PLANS["full"], PLANS["final"]
    assert [checked_matrices(full, s.batch, s.n) for s in BENCHMARK] == [20, 40, 40, 74, 74, 74, 74, 9, 9, 9, 1, 1]
    assert all(checked_matrices(final, s.batch, s.n) == s.batch for s in BENCHMARK)
    assert min_runs(full, 640, 74) == full.min_runs and min_runs(full, 20, 20) == full.min_checked_runs


def test_runners_of_different_gpus_pin_to_different_cpus() -> None:
    from qrjudge.isolation import cpu_share

    cpus = list(range(16))
    shares = [cpu_share(cpus, str(gpu), 4) for gpu in range(4)]
    assert shares[1] == [1, 5, 9, 13] and sorted(c for share in shares for c in share) == cpus  # disjoint, and every CPU used
    assert cpu_share(cpus, "2,3", 4) == shares[2]  # the first visible GPU decides
    assert cpu_share(cpus, "", 4) == cpu_share(cpus, "0", 1) == cpus  # one evaluation per host: every CPU
    assert len(cpu_share(cpus, "GPU-3f1c9a", 4)) == 4  # a UUID: a share by hash
    assert cpu_share([0, 1], "3", 4) == [0, 1]  # fewer CPUs than GPUs: no split


def test_the_hold_adds_one_and_a_half_flushes_to_the_flush_at_most_100_us() -> None:
    """The hold hides a slow host's launches (host time, about 70 us more on the H200 VM), not more: 160 us on
    an H200 (a 64 us flush), never more than 100 us beyond a long flush."""
    from qrjudge.timing import hold_for

    assert hold_for(64.0) == 160.0 and hold_for(30.0) == 75.0 and hold_for(900.0) == 1000.0
    assert all(hold_for(f) - f <= 100.0 and hold_for(f) >= f for f in (1.0, 10.0, 66.7, 70.0, 500.0))


def test_the_hold_fills_every_thread_slot_of_an_sm() -> None:
    from qrjudge.timing import hold_block

    for slots in (2048, 1536, 1024, 768):
        assert slots % hold_block(slots) == 0
    assert hold_block(2048) == 1024 and hold_block(1536) == 512 and hold_block(768) == 256


def test_a_long_import_shows_progress_for_a_while_then_falls_silent() -> None:
    """A compiling import keeps the supervisor's stall watchdog at bay, but only up to the judge's limit."""
    import io
    import json

    from qrjudge.verdict import Report, heartbeat

    out = io.StringIO()
    with heartbeat(Report(out), "import", "k", every=0.05, limit=0.3):
        time.sleep(0.6)
    beats = [json.loads(line) for line in out.getvalue().splitlines()]
    assert 3 <= len(beats) <= 7 and all(b["stage"] == "import" and "still running" in b["label"] for b in beats)


def test_short_shapes_are_timed_again_spread_over_the_benchmark() -> None:
    """A short shape's extra rounds come halfway through the shapes and at the end, each with its share of the
    calls but never fewer than every check needs."""
    from qrjudge.timing import round_plan, rounds_at

    assert rounds_at(12, 3) == [6, 12] and rounds_at(4, 3) == [2, 4] and rounds_at(3, 2) == [3]
    assert rounds_at(12, 1) == []
    full, final = round_plan(PLANS["full"]), round_plan(PLANS["final"])
    assert (full.max_runs, full.min_checked_runs, full.cap_s) == (20, 14, PLANS["full"].cap_s / 3)
    assert final.max_runs == 100 and final.min_runs == PLANS["final"].min_runs


def test_a_shape_is_scored_by_its_fastest_round_with_every_call_counted() -> None:
    from qrjudge.timed import fastest_round

    def timed(mean: float, runs: int) -> dict[str, object]:
        return {"shape": "20x32", "mean_us": mean, "min_us": mean - 1, "runs": runs, "checked": runs,
                "timed_s": mean * runs / 1e6, "warmup_ms": 1.5}
    shape = fastest_round([timed(72.9, 20), timed(31.7, 12), timed(56.4, 20)])
    assert shape["mean_us"] == 31.7 and shape["min_us"] == 30.7  # the fastest round's figures
    assert shape["runs"] == shape["checked"] == 52  # every round's checked calls count towards catching
    assert shape["round_means_us"] == [72.9, 31.7, 56.4]
    assert shape["timed_s"] == pytest.approx((72.9 * 20 + 31.7 * 12 + 56.4 * 20) / 1e6)
    assert shape["warmup_ms"] == 4.5  # every round's warm-up call (untimed, inside the hold where one is taken)


def test_the_judges_clock_rejects_a_runner_it_cannot_explain_unless_the_host_was_too_busy_to_tell() -> None:
    """Time the judge's clock sees beyond the runner's report is a rejection (a misreporting runner, work that
    escaped the timed stream); where the runner and the judge waited for a CPU as long a call, an honest runner
    shows the same, so the evaluation ends as a crash that says why, accusing no one; within the slack nothing
    happens."""
    from qrjudge.timed import WALL_SLACK, clocks_agree
    from qrjudge.verdict import Verdict

    events, walls, slack = [1266.0] * 44, [1300.0] * 44, WALL_SLACK["cuda"]
    # waits for a CPU over the 44 calls: 2 ms (a quiet host), 600 ms (13.6 ms a call), unreadable
    quiet, busy, unread = {"waited_ms": 2.0}, {"waited_ms": 600.0}, {"waited_ms": None}
    assert clocks_agree("benchmark 40x352", events, walls, 250.0, slack, busy) == 250.0
    for host, status, words in ((quiet, "rejected", "tampered with"), (unread, "rejected", "tampered with"),
                                (busy, "crash", "too busy to tell tampering from waiting")):
        with pytest.raises(Verdict) as caught:
            clocks_agree("benchmark 40x352", events, walls, 12761.0, slack, host)
        assert caught.value.status == status, caught.value.error
        assert "judge's clock saw 12761 us" in caught.value.error
        assert words in caught.value.error and "benchmark 40x352" in caught.value.error
        assert ("retry" in caught.value.fields) == (status == "crash")  # the engine judges a crash once more
    with pytest.raises(Verdict) as caught:  # the device busy long after the call: the runner's own wall clock
        clocks_agree("benchmark 20x32", [24.0] * 60, [9000.0] * 60, 100.0, slack, quiet)
    assert caught.value.status == "rejected" and "escaped the timed stream" in caught.value.error


class _SharedOutputs:
    """The judge's view of the shared buffers, for a Stash without a runner."""

    def __init__(self, h: Any, tau: Any) -> None:
        self.h, self.tau = h, tau

    def views(self, batch: int, n: int) -> tuple[None, Any, Any]:
        return None, self.h, self.tau


def _stash(h: Any, tau: Any, spec: Any) -> Any:
    import torch

    from qrjudge.kept import Stash

    return Stash(types.SimpleNamespace(arena=_SharedOutputs(h, tau), torch=torch, deferred=None), spec)


def test_a_sampled_check_names_the_call_and_the_matrix_of_its_batch() -> None:
    """Heavy shapes keep a secret sample of each call's matrices (qrjudge/judge.py, Stash): a wrong matrix in
    the sample fails the call, named by its place in the call's batch, not in the checked concatenation."""
    import torch

    from qrjudge.cases import make_batch
    from qrjudge.verdict import Verdict
    from qrjudge.specs import Spec

    spec = Spec(8, 6, 1, "dense")
    a = make_batch(spec, 3, "cpu")
    h, tau = (t.contiguous() for t in torch.geqrf(a))
    stash = _stash(h, tau, spec)
    first = stash.add(1, a, [5, 2])
    assert first.rows.tolist() == [2, 5] and first.h.shape == (2, 6, 6) and stash.unchanged(first)
    h[3] += 1.0  # outside the sample: this call's check cannot see it
    assert stash.unchanged(first)
    stash.add(2, a, [4, 3])  # inside
    with pytest.raises(Verdict) as caught:
        stash.check()
    assert caught.value.status == "incorrect"
    assert "timed call 2" in caught.value.error and "matrix 3 of the batch" in caught.value.error, caught.value.error
    h[5] = 0.0  # a late write to a kept matrix
    assert not stash.unchanged(first)


def test_a_whole_call_is_kept_where_every_matrix_is_checked() -> None:
    import torch

    from qrjudge.cases import make_batch
    from qrjudge.specs import Spec

    spec = Spec(4, 5, 1, "dense")
    a = make_batch(spec, 4, "cpu")
    h, tau = (t.contiguous() for t in torch.geqrf(a))
    stash = _stash(h, tau, spec)
    kept = stash.add(1, a, None)
    assert kept.rows is None and kept.h.shape == h.shape and kept.h.data_ptr() != h.data_ptr()
    stash.check()
    assert stash.kept == 1 and not stash.items


def test_a_deferred_check_still_fails_the_wrong_call_and_keeps_to_its_budget() -> None:
    """On a shared GPU the kept calls are checked after the timed region (qrjudge/judge.py, Deferred): a wrong
    call is caught then, named as before; a stash larger than what is left of the budget is checked at once."""
    import torch

    from qrjudge.cases import make_batch
    from qrjudge.kept import Deferred
    from qrjudge.verdict import Verdict
    from qrjudge.specs import Spec

    spec = Spec(4, 5, 1, "dense")
    a = make_batch(spec, 5, "cpu")
    h, tau = (t.contiguous() for t in torch.geqrf(a))
    stash = _stash(h, tau, spec)
    stash.ctx.deferred = Deferred(budget=a.numel() * 8)  # room for one kept call
    stash.add(1, a, None)
    stash.settle()
    assert not stash.items and len(stash.ctx.deferred.stashes) == 1  # deferred, not checked
    h[2] += 1.0
    stash.add(2, a, None)
    with pytest.raises(Verdict) as at_once:  # no room left: checked now
        stash.settle()
    assert "timed call 2" in at_once.value.error and "matrix 2 of the batch" in at_once.value.error
    h[2] -= 1.0
    held = stash.ctx.deferred.stashes[0]
    held.items[0].h[1] = 0.0  # what the first call left, wrong, found only by the deferred check
    with pytest.raises(Verdict) as later:
        stash.ctx.deferred.check()
    assert later.value.status == "incorrect" and "timed call 1" in later.value.error, later.value.error


def _fake_judge(lines: str, then_sleep: float) -> Any:
    """A process that prints `lines` on stdout as the judge would, then neither speaks nor exits for a while."""
    import subprocess
    import sys

    code = f"import sys, time\nsys.stdout.write({lines!r})\nsys.stdout.flush()\ntime.sleep({then_sleep})\n"
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, start_new_session=True)


def test_the_supervisor_returns_an_ok_verdict_without_waiting_for_the_judges_exit() -> None:
    """The judge's exit after an ok verdict (its CUDA context torn down) is off the critical path."""
    from qrjudge.supervisor import Progress, _watch

    proc = _fake_judge('{"stage": "bench"}\n{"final": {"status": "ok", "score": 1.0}}\n', 30)
    began = time.monotonic()
    assert _watch(proc, Progress(proc.stdout), 60, began + 60, 60) == ""
    assert time.monotonic() - began < 10 and proc.poll() is None
    proc.kill()
    proc.wait()


def test_after_any_other_verdict_the_supervisor_waits_for_the_exit_but_not_forever(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Its last words (the log) come with the exit; a judge that never exits is killed after EXIT_S."""
    from qrjudge import supervisor as qr

    monkeypatch.setattr(qr, "EXIT_S", 0.5)
    proc = _fake_judge('{"final": {"status": "crash", "error": "x"}}\n', 30)
    progress = qr.Progress(proc.stdout)
    assert qr._watch(proc, progress, 60, time.monotonic() + 60, 60) == ""
    assert proc.returncode is not None and progress.final == {"status": "crash", "error": "x"}
    quiet = _fake_judge("", 0)  # no verdict, an exit: returns as soon as its stdout ends
    assert qr._watch(quiet, qr.Progress(quiet.stdout), 60, time.monotonic() + 60, 60) == "" and quiet.returncode == 0


ROUTES = '''
import functools, sys
import torch
from qrjudge import guard

guard.install()
A = torch.randn(2, 8, 8)
spd = A @ A.mT + 8 * torch.eye(8)
refused = {
    "torch.geqrf": lambda: torch.geqrf(A), "Tensor.geqrf": lambda: A.geqrf(),
    "torch.ops.aten": lambda: torch.ops.aten.geqrf.default(A),
    "reduce(getattr) on torch._C": lambda: functools.reduce(getattr, ["_C", "_VariableFunctions", "geqrf"], torch)(A),
    "torch._C._linalg": lambda: torch._C._linalg.linalg_qr(A),
    "cholesky through ops": lambda: torch.ops.aten.linalg_cholesky_ex.default(spd),
    "torch.linalg.qr": lambda: torch.linalg.qr(A), "householder_product": lambda: torch.linalg.householder_product(A, A[:, 0]),
    "svd": lambda: torch.linalg.svd(A), "lu": lambda: torch.linalg.lu_factor(A), "solve": lambda: torch.linalg.solve(spd, A),
    "2-norm (an svd inside)": lambda: torch.linalg.matrix_norm(A, ord=2),
    "a sparse solver": lambda: torch.sparse.spsolve(spd[0].to_sparse_csr(), A[0, :, 0]),
    "a sparse triangular solve": lambda: torch.triangular_solve(A[0], spd[0].triu().to_sparse_csr(), upper=True),
    "geqrf's out= overload": lambda: torch.geqrf(A, out=(torch.empty_like(A), A.new_empty(2, 8))),
    "linalg.qr's out= overload": lambda: torch.linalg.qr(A, out=(torch.empty_like(A), torch.empty_like(A))),
    "cholesky's out= overload": lambda: torch.linalg.cholesky(spd, out=torch.empty_like(spd)),
    "an out overload through ops": lambda: torch.ops.aten.geqrf.a(A, a=torch.empty_like(A), tau=A.new_empty(2, 8)),
    "numpy.linalg.qr": lambda: __import__("numpy").linalg.qr(A.numpy()),
}
for label, call in refused.items():
    try:
        call()
    except guard.GuardError:
        continue
    sys.exit(f"not refused: {label}")
allowed = [A @ A, torch.bmm(A, A), torch.linalg.vector_norm(A, dim=1), A.triu(), A.cpu().numpy().sum()]
print(len(refused), "refused;", guard.intact() or "intact")
'''


def test_every_route_to_a_factorisation_ends_at_the_guard() -> None:
    """In a process of its own (the guard is for good): torch's, its dispatcher's and NumPy's routes to a
    factorisation are refused however they are reached; matrix products and norms are not."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    proc = subprocess.run([sys.executable, "-c", ROUTES], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "19 refused; intact", proc.stdout + proc.stderr[-2000:]



CUSPARSE = {  # CuPy 14's binding (cupy_backends.cuda.libs.cusparse): refused, left alone
    "refused": ["scsrsm2_solve", "spSM_solve", "spSV_solve", "scsric02", "scsrilu02", "sgtsv2", "scsrsv2_analysis"],
    "allowed": ["spMV", "spMM", "createMatDescr", "scsr2csc"]}
CUPYX_CUSPARSE = "from cupy_backends.cuda.libs import cusparse as _cusparse\n\n\ndef spsm(*args):\n" \
                 "    return _cusparse.spSM_solve()\n\n\ndef spmm(*args):\n    return _cusparse.spMM()\n"


def test_cusparse_solvers_are_refused_in_cupys_binding_and_so_above_it(tmp_path: Path) -> None:
    """cuSPARSE cannot be masked (torch links it): its triangular solves and incomplete factorisations (a complete
    one on a dense pattern) are refused in CuPy's binding, so cupyx.cusparse's spsm, which calls it, is refused too
    (stand-ins with CuPy 14's names); its products are not."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    for package in ("cupy", "cupy_backends", "cupy_backends/cuda", "cupy_backends/cuda/libs", "cupyx"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "cupy_backends/cuda/libs/cusparse.py").write_text(
        "".join(f"def {name}(*args):\n    return 'ran'\n" for name in CUSPARSE["refused"] + CUSPARSE["allowed"]))
    (tmp_path / "cupyx/cusparse.py").write_text(CUPYX_CUSPARSE)
    probe = f"""
from cupy_backends.cuda.libs import cusparse
from qrjudge import guard
guard.install()
import cupyx.cusparse  # imported by the candidate, after the guard
for name in {CUSPARSE["refused"]!r}:
    try:
        getattr(cusparse, name)()
        raise SystemExit("not refused: " + name)
    except guard.GuardError:
        pass
assert all(getattr(cusparse, name)() == "ran" for name in {CUSPARSE["allowed"]!r})
try:
    cupyx.cusparse.spsm()
    raise SystemExit("not refused: cupyx.cusparse.spsm")
except guard.GuardError:
    pass
print("ok", cupyx.cusparse.spmm())
"""
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": f"{tmp_path}:{ROOT}"})
    assert proc.returncode == 0 and proc.stdout.strip() == "ok ran", proc.stdout + proc.stderr[-2000:]


def test_scipys_lapack_is_among_the_masked_libraries_and_numpys_is_not(tmp_path: Path) -> None:
    """The runner masks the solver libraries it could load (qrjudge/isolation.py): SciPy's bundled OpenBLAS, whose
    LAPACK only scipy.linalg loads, among them; NumPy's own copy stays (CuPy needs NumPy at import)."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    site = tmp_path / "site-packages"
    for lib in ("scipy.libs/libscipy_openblas-1a2b3c.so", "numpy.libs/libscipy_openblas64_-4d5e6f.so"):
        (site / lib).parent.mkdir(parents=True)
        (site / lib).write_bytes(b"")
    probe = f"import sys\nsys.path.append({str(site)!r})\nfrom qrjudge import isolation\nprint(isolation.solver_libraries())"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    masked = proc.stdout
    assert "scipy.libs/libscipy_openblas-1a2b3c.so" in masked and "numpy.libs" not in masked, masked + proc.stderr


def test_torch_compiles_import_after_the_runners_snapshots_changes_nothing_they_watch() -> None:
    """The runner no longer imports torch.compile's compiler at start (4-6.5 s a process on the H200 machine): a
    candidate that uses it imports it after the runner's snapshots are taken, which must then still see nothing
    changed (its one replacement, torch.manual_seed, is left out of the broad snapshot and nothing of the runner's
    calls it), while a replacement of anything else in those namespaces is still seen. In a fresh process, as the
    runner's (this one may have imported the compiler already)."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    script = r"""
import builtins, sys, torch
from qrjudge import integrity, runner, timing
assert "torch._dynamo" not in sys.modules
critical = integrity.Snapshot(runner.critical(timing.HostTimer(), cuda=False))
broad = integrity.Snapshot(integrity.namespaces(torch, torch.Tensor, torch._C.TensorBase, builtins),
                           unwatched=runner.COMPILER_REPLACES)
torch.compile(lambda x: x + 1, backend="eager")(torch.ones(2))  # as a candidate's epilogue does
assert "torch._dynamo" in sys.modules
print(repr(critical.changed()), repr(broad.changed()))
torch.equal = lambda a, b: True
print(repr(broad.changed()))
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    compiled, patched = proc.stdout.splitlines()[-2:]
    assert compiled == "'' ''" and patched == "'torch.equal was replaced'", proc.stdout


def test_the_judge_tells_the_runners_to_import_the_compiler_only_for_a_candidate_that_names_it(tmp_path: Path) -> None:
    """A candidate whose files name torch.compile's compiler has the runners import it before their snapshots (as
    every runner did at start, 4-6.5 s); the seed, and prose that mentions it, do not."""
    from qrjudge.guard import uses_compiler
    from tests.conftest import ROOT

    for name, text, uses in [("decorated", "import torch\n@torch.compile(backend='eager')\ndef f(x): return x\n", True),
                             ("imported", "from torch import nn, compile as c\n", True),
                             ("dynamo", "import torch._dynamo\n", True),
                             ("plain", "import torch\nimport cupy as cp\nm = cp.RawModule(code='')\nm.compile()\n", False)]:
        kernel = tmp_path / name
        kernel.mkdir()
        (kernel / "kernel.py").write_text(text)
        assert uses_compiler(kernel) is uses, name
    assert not uses_compiler(ROOT / "seed_kernels" / "tsqr_wy")


def test_a_slow_hosts_wall_clock_is_measured_against_the_references_in_calibration() -> None:
    """On an H100 in a microVM (2026-12-06) an honest 20x32 call's wall clock ran 0.9-1.4 ms over its 24-210 us of
    events, where the check allowed 1 ms: the seed was rejected as work escaping its stream, by this judge and the
    one before. The reference function's calls in calibration show the host's own overhead, and it is allowed."""
    from qrjudge.timed import WALL_SLACK, clocks_agree
    from qrjudge.verdict import Verdict

    events, walls, quiet = [70.0] * 60, [1144.0] * 60, {"waited_ms": 2.0}
    assert clocks_agree("benchmark 20x32", events, walls, 100.0, WALL_SLACK["cuda"], quiet, wall_overhead=900.0) == 100.0
    with pytest.raises(Verdict) as caught:  # without it (the judge before): rejected
        clocks_agree("benchmark 20x32", events, walls, 100.0, WALL_SLACK["cuda"], quiet)
    assert "escaped the timed stream" in caught.value.error
    with pytest.raises(Verdict) as caught:  # 20 ms escaped beyond the host's overhead: still rejected
        clocks_agree("benchmark 20x32", events, [21144.0] * 60, 100.0, WALL_SLACK["cuda"], quiet, wall_overhead=900.0)
    assert "the reference's wall 900 us over its events in calibration" in caught.value.error
