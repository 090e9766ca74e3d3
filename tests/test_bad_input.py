"""Bad input gives one clear line or the right status, and never damages the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolver.store import Store
from tests.conftest import ROOT, evolve, example_config, git, make_repo

pytestmark = pytest.mark.slow


def evaluator(command: str, timeout: float = 60) -> str:
    return f'command = "{command}"\nfiles = ["check.py"]\ngpus = []\nslots = 1\ntimeout_s = {timeout}'


def run_with(tmp_path: Path, check_py: str, timeout: float, n: int = 1) -> tuple[Path, str]:
    repo = make_repo(tmp_path / "repo", example_config(evaluation=evaluator(
        "{python} check.py --kernel-dir {kernel_dir}", timeout)))
    (repo / "examples/sort/check.py").write_text(check_py)
    git(repo, "commit", "-qam", "a bad evaluator")
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", str(n))
    assert "Traceback" not in proc.stderr
    return repo, proc.stdout + proc.stderr


def test_hanging_evaluator_times_out(tmp_path: Path) -> None:
    repo, out = run_with(tmp_path, "import time\ntime.sleep(120)\n", timeout=2, n=5)
    seed = Store(repo).snapshot("r1").candidates["00001"]
    assert seed.result is not None and seed.result["status"] == "timeout"
    assert "no correct candidate to breed from" in out


def test_garbage_printing_evaluator_is_a_crash(tmp_path: Path) -> None:
    repo, _ = run_with(tmp_path, "print('hello')\nprint('{not json')\nraise SystemExit(3)\n", timeout=30)
    seed = Store(repo).snapshot("r1").candidates["00001"]
    assert seed.result is not None and seed.result["status"] == "crash"
    assert "no JSON result (exit code 3)" in seed.result["error"]


def test_dirty_work_tree_is_left_alone(repo: Path) -> None:
    (repo / "examples/sort/seeds/mergesort/sort.py").write_text("broken = (\n")  # uncommitted
    before = git(repo, "status", "--porcelain"), (repo / ".git" / "index").read_bytes()
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "3")
    assert proc.returncode == 0 and "uncommitted changes" in proc.stderr
    # the seed comes from HEAD, so it is the committed (working) one
    assert Store(repo).snapshot("r1").candidates["00001"].result["status"] == "ok"  # type: ignore[index]
    assert (git(repo, "status", "--porcelain"), (repo / ".git" / "index").read_bytes()) == before


def test_uncommitted_seed_is_a_clear_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    new_seed = repo / "examples/sort/seeds/other"
    new_seed.mkdir()
    (new_seed / "sort.py").write_text("def sort_list(v):\n    return list(v)\n")
    cfg = repo / "examples/sort/evolve.toml"
    cfg.write_text(cfg.read_text().replace('seeds = ["seeds/mergesort"]', 'seeds = ["seeds/mergesort", "seeds/other"]'))
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "3")
    errors = [line for line in proc.stderr.splitlines() if line.startswith("evolve: error:")]
    assert proc.returncode == 1 and len(errors) == 1 and "not in the commit HEAD" in errors[0]
    assert "Traceback" not in proc.stderr and git(repo, "for-each-ref", "refs/evolve/", "refs/heads/evolve/") == ""


def test_qr_problem_without_a_gpu_says_so(tmp_path: Path) -> None:
    if (Path("/dev/nvidia0")).exists():
        pytest.skip("this machine has a GPU")
    proc = evolve(ROOT, "start", "--max-candidates", "1", "--run", "test-no-gpu")
    assert proc.returncode == 1 and "needs a CUDA GPU" in proc.stderr and "Traceback" not in proc.stderr
    assert "test-no-gpu" not in git(ROOT, "for-each-ref", "refs/evolve/")


def test_qr_with_more_slots_than_gpus_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evolver import evaluate
    from evolver.config import load_config

    monkeypatch.setattr(evaluate, "detect_gpus", lambda: [(0, "NVIDIA H200 / driver 580")])
    config = load_config(ROOT / "evolve.toml", ROOT)
    assert len(evaluate.make_slots(config)) == 1
    crowded = config.__class__(**{**config.__dict__, "evaluation": config.evaluation.__class__(
        **{**config.evaluation.__dict__, "slots": 2})})
    with pytest.raises(evaluate.EvaluationError, match="several evaluations on one"):
        evaluate.make_slots(crowded)


def test_outside_a_repository(tmp_path: Path) -> None:
    proc = evolve(tmp_path, "status")
    assert proc.returncode == 1 and "not inside a git repository" in proc.stderr


def test_status_before_any_run(repo: Path) -> None:
    proc = evolve(repo / "examples" / "sort", "status")
    assert proc.returncode == 1 and "`evolve start` begins one" in proc.stderr
