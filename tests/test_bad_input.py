"""Bad input gives one clear line or the right status, and never damages the repository."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evolver.evaluation.command import scrubbed_env
from evolver.evaluation.processes import run_evaluator
from evolver.records.store import Store, StoreError
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
    assert seed.result is not None and seed.result.status == "timeout"
    assert "no correct candidate to breed from" in out


def test_garbage_printing_evaluator_is_a_crash(tmp_path: Path) -> None:
    repo, _ = run_with(tmp_path, "print('hello')\nprint('{not json')\nraise SystemExit(3)\n", timeout=30)
    seed = Store(repo).snapshot("r1").candidates["00001"]
    assert seed.result is not None and seed.result.status == "crash"
    assert "no JSON result (exit code 3)" in seed.result.error


def test_dirty_work_tree_is_left_alone(repo: Path) -> None:
    (repo / "examples/sort/seeds/mergesort/sort.py").write_text("broken = (\n")  # uncommitted
    before = git(repo, "status", "--porcelain"), (repo / ".git" / "index").read_bytes()
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "3")
    assert proc.returncode == 0 and "uncommitted changes" in proc.stderr
    # the seed comes from HEAD, so it is the committed (working) one
    assert Store(repo).snapshot("r1").candidates["00001"].status == "ok"
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
    from evolver.evaluation import evaluate
    from evolver.records.config import load_config

    monkeypatch.setattr(evaluate, "detect_gpus", lambda: [(0, "NVIDIA H200 / driver 580")])
    config = load_config(ROOT / "evolve.toml", ROOT)
    assert len(evaluate.make_slots(config)) == config.evaluation.per_gpu == 2  # the shipped config shares the GPU
    crowded = config.__class__(**{**config.__dict__, "evaluation": config.evaluation.__class__(
        **{**config.evaluation.__dict__, "slots": 3})})
    with pytest.raises(evaluate.EvaluationError, match="more evaluations on one of the 1 GPU"):
        evaluate.make_slots(crowded)


@pytest.mark.parametrize("key", ["mode", "confirm_mode"])
def test_a_mode_the_qr_judge_does_not_know_is_one_line_before_any_evaluation(key: str) -> None:
    """A typo in evolve.toml's mode (or --mode) would crash every evaluation of a day's run: the built-in judge's
    own modes (its specs.py) are checked when the run opens, naming the file and the key."""
    from dataclasses import replace

    from evolver.evaluation import evaluate
    from evolver.records.config import load_config
    from evolver.records.store import Store

    config = load_config(ROOT / "evolve.toml", ROOT)
    typo = replace(config, evaluation=replace(config.evaluation, **{key: "fulll"}))
    evaluator = evaluate.Evaluator(typo, Store(ROOT), Store(ROOT).head_commit())
    with pytest.raises(evaluate.EvaluationError) as raised:
        evaluator.check_runnable([])
    assert str(raised.value) == (f"{ROOT / 'evolve.toml'}: evaluation.{key}: 'fulll' is not a mode of the built-in "
                                 "'qr' judge (quick, full, final, tiny)")
    with pytest.raises(evaluate.EvaluationError, match="--mode: 'nope' is not a mode"):
        evaluate.Evaluator(config, Store(ROOT), Store(ROOT).head_commit()).check_mode("nope", "--mode")


def test_rejudge_in_a_mode_the_evaluator_does_not_know_records_nothing(repo: Path) -> None:
    """`evolve rejudge --mode` with a typo: the example's evaluator refuses the mode (a crash), and a crash in a
    mode evolve.toml never named is not recorded, so `best` stays where it was."""
    sort = repo / "examples" / "sort"
    assert evolve(sort, "start", "--max-candidates", "3").returncode == 0
    notes_before = git(repo, "notes", "--ref", "evolve", "list")
    best_before = git(repo, "rev-parse", "best")
    proc = evolve(sort, "rejudge", "best", "--mode", "nope")
    assert proc.returncode == 1 and "--mode nope: the evaluator crashed" in proc.stderr, proc.stderr
    assert "nothing was recorded" in proc.stderr and "Traceback" not in proc.stderr
    assert git(repo, "rev-parse", "best") == best_before
    assert git(repo, "notes", "--ref", "evolve", "list") == notes_before


def test_a_best_branch_deleted_or_moved_by_hand_is_said_as_it_is(repo: Path) -> None:
    """`best` deleted, or moved to a commit no run made: the verbs that read it say so (not "no candidate has passed"),
    and the next `evolve start` puts it back."""
    sort = repo / "examples" / "sort"
    assert evolve(sort, "start", "--max-candidates", "3").returncode == 0
    git(repo, "update-ref", "refs/heads/best", "HEAD")
    moved = evolve(sort, "show", "best")
    assert moved.returncode == 1 and "which is no candidate (moved by hand?)" in moved.stderr, moved.stderr
    git(repo, "branch", "-D", "best")
    gone = evolve(sort, "lineage", "best")
    assert gone.returncode == 1 and "no branch `best` (deleted?) though candidates have passed" in gone.stderr
    assert evolve(sort, "start", "--max-candidates", "4").returncode == 0
    assert evolve(sort, "show", "best").returncode == 0


def test_outside_a_repository(tmp_path: Path) -> None:
    proc = evolve(tmp_path, "status")
    assert proc.returncode == 1 and "not inside a git repository" in proc.stderr


def test_status_before_any_run(repo: Path) -> None:
    proc = evolve(repo / "examples" / "sort", "status")
    assert proc.returncode == 1 and "`evolve start` begins one" in proc.stderr
    assert "no run of the problem in" in proc.stderr, proc.stderr  # not the name a first run would be given
    named = evolve(repo / "examples" / "sort", "show", "1", "--run", "r7")
    assert named.returncode == 1 and "no run 'r7' of the problem" in named.stderr, named.stderr


# --- hostile replies, remotes and evaluators (docs/SECURITY.md) ---------------------------------------------

def llm_run(tmp_path: Path, steps: list[str], candidates: int, timeout_s: float = 1.5,
            base_url: str | None = None) -> tuple[Path, subprocess.CompletedProcess[str]]:
    from tests.fake_llm import FakeLLM

    with FakeLLM(steps, hang_s=4.0) as llm:
        config = example_config(
            llm=f'base_url = "{base_url or llm.url}"\nmodel = "fake-coder"\napi_key_env = ""\n'
                f"timeout_s = {timeout_s}\nmax_retries = 0\nedit_retries = 0\nmax_concurrent = 1",
            evaluation='command = "{python} check.py --kernel-dir {kernel_dir}"\nfiles = ["check.py"]\ngpus = []\n'
                       "slots = 1\ntimeout_s = 60",
            evolution="operators = { mutate = 1.0 }\nislands = 1\npopulation = 2\nseed = 7\npipeline_depth = 1")
        repo = make_repo(tmp_path / "repo", config)
        proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", str(candidates), timeout=120)
    return repo, proc


def statuses(repo: Path) -> dict[str, str | None]:
    return {c.id: (c.result.status if c.result else None) for c in Store(repo).snapshot("r1").candidates.values()}


def test_replies_the_store_cannot_hold_or_that_carry_nul_and_surrogates(tmp_path: Path) -> None:
    repo, proc = llm_run(tmp_path, ["longname", "nul"], 3)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    snap = Store(repo).snapshot("r1")
    long_name, nul = snap.candidates["00002"], snap.candidates["00003"]
    assert long_name.result is not None and long_name.result.status == "patch_failed"
    assert "longer than 255 bytes" in long_name.result.error
    assert nul.result is not None and nul.result.status == "ok"
    message = git(repo, "log", "-1", "--format=%B", nul.commit)
    assert "\x00" not in message and "Faster" in message


@pytest.mark.parametrize("step", ["notjson", "trickle"])
def test_llm_transport_faults_are_llm_errors_and_the_run_goes_on(tmp_path: Path, step: str) -> None:
    began = time.monotonic()
    repo, proc = llm_run(tmp_path, [step, "good"], 3, timeout_s=2.0)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert statuses(repo) == {"00001": "ok", "00002": "llm_error", "00003": "ok"}
    assert time.monotonic() - began < 60  # the trickle is cut at the request's deadline, not waited out


def test_an_unusable_base_url_is_an_llm_error_that_names_the_cause(tmp_path: Path) -> None:
    repo, proc = llm_run(tmp_path, [], 2, base_url="http://127.0.0.1:99999/v1")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    failed = Store(repo).snapshot("r1").candidates["00002"].result
    assert failed is not None and failed.status == "llm_error"
    assert "ExceptionGroup" not in failed.error, failed.error


def test_an_llm_that_never_answers_is_taken_down_and_the_run_stops_saying_why(tmp_path: Path) -> None:
    """A dead endpoint (connection refused, every retry spent) fails every child in a second: after DOWN_AFTER in a
    row the LLM operators stop asking, and with no other operator the run ends and says why, not after a budget of
    failed children."""
    from evolver.search.llm import DOWN_AFTER

    repo, proc = llm_run(tmp_path, [], 40, base_url="http://127.0.0.1:9/v1")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert f"LLM operators off for this session: {DOWN_AFTER} requests in a row got no reply" in proc.stdout
    assert "no operator can run: the LLM is down" in proc.stdout
    made = [s for cid, s in statuses(repo).items() if cid != "00001"]
    assert len(made) == DOWN_AFTER and set(made) == {"llm_error"}, made


def test_with_the_llm_down_the_other_operators_go_on(tmp_path: Path) -> None:
    """The same dead endpoint beside `tune`: once the LLM is down no child is drawn for it, and tune makes the rest.
    The weights are fixed odds (`bandit = false`): a bandit that has seen tune's children win draws mutate too
    seldom, on a loaded machine, to reach DOWN_AFTER failures in 24 children (7 and 6 of them: 2 of 12 runs)."""
    from evolver.search.llm import DOWN_AFTER

    config = example_config(
        llm='base_url = "http://127.0.0.1:9/v1"\nmodel = "fake-coder"\napi_key_env = ""\nmax_retries = 0\n'
            "max_concurrent = 1",
        evolution="operators = { mutate = 0.8, tune = 0.2 }\nbandit = false\nislands = 1\npopulation = 2\nseed = 7\n"
                  "pipeline_depth = 1")
    repo = make_repo(tmp_path / "repo", config)
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "24", timeout=120)
    assert proc.returncode == 0 and "reached max_candidates (24)" in proc.stdout, proc.stdout + proc.stderr
    assert "LLM operators off for this session" in proc.stdout
    ops = [c.op for c in sorted(Store(repo).snapshot("r1").candidates.values(), key=lambda c: c.id)]
    last_mutate = max(i for i, op in enumerate(ops) if op == "mutate")
    assert ops.count("mutate") == DOWN_AFTER and set(ops[last_mutate + 1:]) == {"tune"}, ops


def test_the_engine_lock_holds_across_worktrees(repo: Path, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "linked"))
    main = Store(repo)
    main.lock()
    try:
        with pytest.raises(StoreError, match="another `evolve start`"):
            Store(tmp_path / "linked").lock()
    finally:
        main.unlock()


def test_a_child_holding_stdout_open_does_not_hold_the_evaluation(tmp_path: Path) -> None:
    script = ("import subprocess, sys\n"
              "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
              "print('{\"status\": \"ok\", \"score\": 1.5}', flush=True)\n")
    began = time.monotonic()
    result = asyncio.run(run_evaluator([sys.executable, "-c", script], tmp_path, scrubbed_env(None), 60))
    assert result["status"] == "ok" and time.monotonic() - began < 10, result


def test_output_is_read_with_a_cap(tmp_path: Path) -> None:
    """50 MB of output before the result line, and a result whose details are 200 KB: both end as small
    results (the tail of the output is kept, oversized details are dropped)."""
    script = ("import sys\nsys.stdout.write('x' * (50 << 20))\n"
              "print()\nprint('{\"status\": \"ok\", \"score\": 2.0, \"blob\": \"' + 'y' * (200 << 10) + '\"}')\n")
    result = asyncio.run(run_evaluator([sys.executable, "-c", script], tmp_path, scrubbed_env(None), 60))
    assert result["status"] == "ok" and len(json.dumps(result)) < 10_000, str(result)[:300]
    assert "dropped" in result["details"]


def test_cli_rejects_bad_budgets_and_run_names(repo: Path) -> None:
    for args in (["start", "--max-candidates", "-3"], ["start", "--max-hours", "0"], ["start", "--run", "a/b"],
                 ["export", "--run", "a/b"], ["tui", "--poll", "-1"], ["tui", "--poll", "0"],
                 ["start", "--run", "a..b"], ["start", "--run", "a" * 65], ["status", "--run", "x.lock"]):
        proc = evolve(repo / "examples" / "sort", *args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stderr)


def test_a_non_utf8_config_is_one_line(repo: Path) -> None:
    (repo / "examples" / "sort" / "evolve.toml").write_bytes(b"[problem]\nkernel_dir = \"k\xff\"\n")
    proc = evolve(repo / "examples" / "sort", "start")
    assert proc.returncode == 1 and "not UTF-8" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("verb", [["start"], ["status"], ["tui"], ["show", "best"], ["lineage", "best"],
                                  ["prompt"], ["try"], ["export"]])
def test_a_broken_config_is_one_line_for_every_verb(repo: Path, verb: list[str]) -> None:
    """A broken evolve.toml is an error naming its line and key, never a traceback, and never ignored (the TUI
    falls back to git alone only where there is no evolve.toml at all)."""
    (repo / "examples" / "sort" / "evolve.toml").write_text("[problem]\nkernel_dir = 5\n")
    proc = evolve(repo / "examples" / "sort", *verb, timeout=60)
    assert proc.returncode == 1, (verb, proc.stdout[-500:], proc.stderr)
    assert "evolve.toml:2: problem.kernel_dir" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_an_evaluator_that_does_not_exist_stops_the_start(repo: Path) -> None:
    toml = repo / "examples" / "sort" / "evolve.toml"
    toml.write_text(toml.read_text().replace('command = "{python} check.py', 'command = "no-such-program check.py'))
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "2")
    assert proc.returncode == 1 and "not a program" in proc.stderr, proc.stdout + proc.stderr


def test_binary_files_and_modes_survive_into_children(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    seed = repo / "examples" / "sort" / "seeds" / "mergesort"
    blob = bytes(range(256)) * 4
    (seed / "table.bin").write_bytes(blob)
    (seed / "build.sh").write_text("#!/bin/sh\necho built\n")
    (seed / "build.sh").chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a binary file and an executable")
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    snap = Store(repo).snapshot("r1")
    for c in snap.candidates.values():
        listing = git(repo, "ls-tree", "-r", c.commit, "--", "examples/sort/kernel/")
        assert "100755 blob" in listing and "build.sh" in listing, listing
        assert subprocess.run(["git", "cat-file", "blob", f"{c.commit}:examples/sort/kernel/table.bin"], cwd=repo,
                              capture_output=True).stdout == blob
        assert c.kernel_tree == git(repo, "rev-parse", f"{c.commit}:examples/sort/kernel").strip()


def test_a_killed_engines_temporary_directories_are_removed_at_start(repo: Path) -> None:
    import hashlib
    import tempfile

    common = git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    prefix = f"evolve-eval-{hashlib.sha1(common.encode()).hexdigest()[:10]}-"
    leftover = Path(tempfile.mkdtemp(prefix=prefix))
    (leftover / "kernel").mkdir()
    other = Path(tempfile.mkdtemp(prefix="evolve-eval-0000000000-"))  # another repository's: not ours to touch
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not leftover.exists() and other.exists()
    other.rmdir()


def test_the_qr_judge_without_its_libraries_is_one_line_before_any_candidate(tmp_path: Path) -> None:
    """Without the gpu extra, `evolve start` on the QR problem says what to install, once, and makes
    nothing (it used to judge the seed and blame it: crash, ModuleNotFoundError)."""
    import importlib.util

    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here")
    repo = make_repo(tmp_path / "repo", example_config(
        evaluation='builtin = "qr"\ngpus = []\nslots = 1\ntimeout_s = 60\nsandbox = "off"'))
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "2")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs" in lines[0] and "cupy" in lines[0] and "[gpu]" in lines[0], proc.stderr
    assert Store(repo).runs() == []
