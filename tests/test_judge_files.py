"""The judge's files, its seed and its code are out of the candidate's reach by construction (issue: Judge v3).

The QR judge's CPU self-test (`--device cpu --mode tiny`: the same supervisor, judge and runner as on a GPU)
is set up as a problem of its own, and a candidate that rewrites every copy of the judge's checker it can
find (tests/cheats/rewrite_judge.py) is judged through `evolve try`, with the sandbox on and off: the runner
confines itself (qrjudge/isolation.py), and the sandbox binds the judge's files read-only too. The judge
must still find the candidate's zeros wrong, and no file of the judge may have changed anywhere."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evolver.evaluation import sandbox
from evolver.records.store import Store
from tests.conftest import ROOT, evolve, git

pytest.importorskip("torch")

CHEATS = ROOT / "tests" / "cheats"
HONEST = ROOT / "tests" / "cpu_kernel" / "kernel.py"


def qr_cpu_problem(repo: Path, sandboxed: bool) -> Path:
    """A repository whose problem is judged by the QR harness's CPU self-test, the harness in the repository."""
    shutil.copytree(ROOT / "qrjudge", repo / "qrjudge", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests" / "cpu_kernel", repo / "seeds" / "householder")
    (repo / "evolve.toml").write_text(
        '[problem]\nkernel_dir = "kernel"\nseeds = ["seeds/householder"]\n[evaluation]\n'
        'command = "{python} -m qrjudge --kernel-dir {kernel_dir} --device cpu --mode tiny --stall 60"\n'
        f'files = ["qrjudge"]\ngpus = []\ntimeout_s = 120\nsandbox = "{"on" if sandboxed else "off"}"\n'
        '[evolution]\noperators = { tune = 1.0 }\n')
    git(repo.parent, "init", "-q", "-b", "main", str(repo))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the QR judge's CPU self-test as a problem")
    return repo


def same_files(a: Path, b: Path) -> bool:
    """Whether two copies of the judge hold the same source files, byte for byte (caches aside)."""
    def files(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts}
    return files(a) == files(b)


def cheat(tmp_path: Path, name: str) -> Path:
    d = tmp_path / name
    d.mkdir()
    shutil.copy(HONEST, d / "base.py")
    shutil.copy(CHEATS / f"{name}.py", d / "kernel.py")
    return d


@pytest.mark.slow
@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandbox-on", "sandbox-off"])
def test_a_candidate_cannot_write_the_judges_files(tmp_path: Path, sandboxed: bool) -> None:
    if sandboxed and sandbox.unavailable() is not None:
        pytest.skip(f"no sandbox on this machine: {sandbox.unavailable()}")
    repo = qr_cpu_problem(tmp_path / "repo", sandboxed)
    env = {"EVOLVE_SANDBOX": "on" if sandboxed else "off"}
    judged = evolve(repo, "try", str(cheat(tmp_path, "rewrite_judge")), "--json", env=env)
    assert '"status": "incorrect"' in judged.stdout, judged.stdout + judged.stderr
    assert git(repo, "status", "--porcelain") == ""  # the repository's harness is as committed
    assert same_files(ROOT / "qrjudge", repo / "qrjudge")  # and so is the one the tests run from


def test_judged_directly_the_candidate_reaches_no_copy_of_the_judge(tmp_path: Path) -> None:
    """Without evolve around it: the supervisor run in a directory holding the harness, as an evaluation lays
    it out. The runner's confinement alone keeps the files, whoever started the judge."""
    kernel = cheat(tmp_path, "rewrite_judge")
    shutil.copytree(ROOT / "qrjudge", tmp_path / "qrjudge", ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run([sys.executable, "-m", "qrjudge.supervisor", "--kernel-dir", str(kernel), "--device", "cpu",
                           "--mode", "tiny", "--stall", "30"], capture_output=True, text=True, timeout=180,
                          cwd=tmp_path)
    assert '"status": "incorrect"' in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert same_files(ROOT / "qrjudge", tmp_path / "qrjudge")


def test_the_seed_is_on_no_command_line(tmp_path: Path) -> None:
    kernel = cheat(tmp_path, "read_the_seed")
    shutil.copytree(ROOT / "qrjudge", tmp_path / "qrjudge", ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run([sys.executable, "-m", "qrjudge.supervisor", "--kernel-dir", str(kernel), "--device", "cpu",
                           "--mode", "tiny", "--stall", "30"], capture_output=True, text=True, timeout=180,
                          cwd=tmp_path)
    assert "seeds seen: []" in proc.stdout, proc.stdout
    judge = ROOT / "qrjudge" / "judge.py"
    assert '"--seed"' not in judge.read_text()  # the judge takes it on stdin only


def test_the_judges_files_are_fixed_when_the_run_opens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent (or anything else) that edits the installed judge while a run goes cannot slip a new judge in:
    evaluations are laid out from the copy read when the run opened, and the next evaluation stops the run."""
    from evolver.evaluation import evaluate
    from evolver.evaluation.judgefiles import JudgeChanged
    from evolver.records.config import load_config
    from tests.conftest import make_repo

    installed = tmp_path / "installed"
    shutil.copytree(ROOT / "qrjudge", installed, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(evaluate, "builtin_judge_dir", lambda name: installed)
    repo = make_repo(tmp_path / "repo")
    (repo / "evolve.toml").write_text('[problem]\nkernel_dir = "kernel"\nseeds = ["examples/sort/seeds/mergesort"]\n'
                                      '[evaluation]\nbuiltin = "qr"\n')
    config = load_config(repo / "evolve.toml", repo)
    store = Store(repo)
    ev = evaluate.Evaluator(config, store, store.head_commit(), purpose="try")
    laid_out = tmp_path / "laid-out"
    ev.prepare_judge(laid_out)
    assert (laid_out / "qrjudge" / "checker.py").read_bytes() == (installed / "checker.py").read_bytes()
    (installed / "checker.py").write_text("def check(*a, **k):\n    return True\n")
    again = tmp_path / "again"
    ev.prepare_judge(again)  # laid out from the run's copy, not from the changed source
    assert (again / "qrjudge" / "checker.py").read_bytes() == (ROOT / "qrjudge" / "checker.py").read_bytes()
    slot = evaluate.Slot(0, None, "cpu")
    with pytest.raises(JudgeChanged, match=r"checker\.py"):
        asyncio.run(ev.evaluate(laid_out / "kernel", slot))


def test_a_machine_where_the_runner_cannot_confine_itself_is_told_before_the_run(tmp_path: Path) -> None:
    """Here the runner can confine itself (the probe finds nothing to say); where it cannot, the probe returns
    why, which `evolve start` puts in its one-line refusal instead of a crash for every candidate."""
    from evolver.evaluation.builtin import confinement_problem

    assert confinement_problem(ROOT / "qrjudge") == ""
    fake = tmp_path / "qrjudge"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "isolation.py").write_text("class ConfineError(Exception):\n    pass\n\n\ndef confine(writable):\n"
                                       "    raise ConfineError('unshare: Operation not permitted')\n")
    assert confinement_problem(fake) == "unshare: Operation not permitted"
