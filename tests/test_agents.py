"""The `agent` operator with scripted agents (tests/agents/): each child is taken from the kernel directory
only, judged by the run's evaluator, and every way an agent fails is a recorded attempt."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from evolver.records.store import Store
from tests.conftest import COUNTING, counting_repo, evolve, example_config, fake_llm, git

pytestmark = pytest.mark.slow
AGENTS = Path(__file__).parent / "agents"


def run_with(tmp_path: Path, script: str, timeout_s: float = 60, env: dict[str, str] | None = None) -> tuple[Path, str]:
    names = ", ".join(f'"{name}"' for name in ("EVOLVE_SANDBOX", "PYTHONPATH", *(env or {})))
    agent = (f'[agents.scripted]\ncommand = ["{sys.executable}", "{AGENTS / script}", "{{prompt}}", "{{kernel_dir}}"]\n'
             f'timeout_s = {timeout_s}\nusd_per_call = 0.25\nenv = [{names}]\n')
    repo = counting_repo(tmp_path / "repo", example_config(
        evaluation=COUNTING, evolution="operators = { agent = 1.0 }\nislands = 1\npopulation = 2\nseed = 1\n"
                                      "pipeline_depth = 1") + "\n" + agent)
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "2", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return repo, proc.stdout


def child(repo: Path):  # type: ignore[no-untyped-def]
    return Store(repo).snapshot("r1").candidates["00002"]


def test_an_agent_that_tries_its_kernel_makes_a_judged_child(tmp_path: Path) -> None:
    repo, _ = run_with(tmp_path, "tune_and_try.py")
    c = child(repo)
    assert c.op == "agent" and c.trailers["Agent"] == "scripted" and c.trailers["Cost-USD"] == "0.250000"
    assert c.status == "ok" and c.result is not None and c.result.cached_from is None  # judged by the run
    body = git(repo, "log", "-1", "--format=%B", c.commit)
    assert "--set CUTOFF=12 judged ok" in body and "evolve try said: ok" in body, body
    assert git(repo, "status", "--porcelain") == "" and "evolve-agent" not in git(repo, "worktree", "list")
    lineage = evolve(repo / "examples" / "sort", "lineage", "2").stdout
    assert "00002  agent" in lineage


@pytest.mark.parametrize("script, status, words", [
    ("hang.py", "llm_error", "still running after 2 s"),
    ("delete.py", "patch_failed", "deleted the kernel directory"),
    ("nothing.py", "patch_failed", "changed nothing"),
])
def test_an_agent_that_fails_is_a_recorded_attempt(tmp_path: Path, script: str, status: str, words: str) -> None:
    repo, _ = run_with(tmp_path, script, timeout_s=2)
    c = child(repo)
    assert c.op == "agent" and c.status == status and c.result is not None and words in c.result.error


def test_what_an_agent_changes_outside_the_kernel_is_dropped_and_named(tmp_path: Path) -> None:
    repo, _ = run_with(tmp_path, "outside.py")
    c = child(repo)
    assert c.status == "ok"
    message = git(repo, "log", "-1", "--format=%B", c.commit)
    assert "Changed outside the kernel directory (dropped)" in message and "NOTES.txt" in message
    assert "NOTES.txt" not in git(repo, "ls-tree", "-r", "--name-only", c.commit)


def test_a_process_an_agent_detaches_does_not_outlive_it(tmp_path: Path) -> None:
    """A process the agent started in a session of its own (out of reach of its session's kill) is found by the
    tag in its environment and killed once the agent is done, as an evaluation's strays are."""
    pid_file = tmp_path / "detached.pid"
    repo, _ = run_with(tmp_path, "detach.py", env={"DETACHED_PID_FILE": str(pid_file)})
    assert child(repo).status == "ok"
    pid = int(pid_file.read_text())
    for _ in range(100):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(") ", 1)[1].startswith("Z"):
                    break  # a zombie: killed, waiting for its reaper
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"the agent's detached process {pid} is still running")


def test_a_run_mixes_tune_mutate_and_an_agent(tmp_path: Path) -> None:
    from tests.fake_llm import FakeLLM

    agent = (f'[agents.scripted]\ncommand = ["{sys.executable}", "{AGENTS / "outside.py"}", "{{prompt}}", '
             f'"{{kernel_dir}}"]\ntimeout_s = 60\nusd_per_call = 0.01\n')
    scratch = tmp_path / "tmp"  # the run's own TMPDIR: another run on this machine cannot leave anything in it
    scratch.mkdir()
    with FakeLLM(["good"] * 20) as llm:
        repo = counting_repo(tmp_path / "repo", example_config(
            evaluation=COUNTING,
            llm=fake_llm(llm.url),
            evolution="operators = { tune = 1.0, mutate = 1.0, agent = 1.0 }\nislands = 1\npopulation = 4\n"
                      "seed = 5\npipeline_depth = 1") + "\n" + agent)
        head = git(repo, "rev-parse", "HEAD")
        proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "12", env={"TMPDIR": str(scratch)})
        assert proc.returncode == 0, proc.stdout + proc.stderr
    snap = Store(repo).snapshot("r1")
    ops = {c.op for c in snap.candidates.values()}
    assert {"seed", "tune", "mutate", "agent"} <= ops, ops
    from evolver.tui import model  # the TUI's population rows name each child's operator

    rows = model.rows(snap, None, snap.by_commit(), model.SeedIndex())
    assert {r.op for r in rows} == ops and any(r.op == "agent" and r.status == "ok" for r in rows)
    assert git(repo, "status", "--porcelain") == "" and len(git(repo, "worktree", "list").splitlines()) == 1
    assert git(repo, "rev-parse", "HEAD") == head  # the user's HEAD, index and tree untouched
    assert not list(scratch.iterdir())  # no agent or evaluation directory left


def test_an_agent_whose_program_is_missing_stops_the_start_in_one_line(tmp_path: Path) -> None:
    """An agent command naming no program of this machine would make every child of the run a "cannot start"
    attempt: `evolve start` says so before any candidate, naming the agent and the program."""
    repo = counting_repo(tmp_path / "repo", example_config(
        evaluation=COUNTING, evolution="operators = { agent = 1.0 }\nislands = 1\npopulation = 2\nseed = 1")
        + '\n[agents.ghost]\ncommand = ["no-such-agent-program", "{prompt}"]\n')
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "2")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "[agents.ghost] command: 'no-such-agent-program' is not a program on this machine" in proc.stderr
    assert all(not Store(repo).snapshot(run).candidates for run in Store(repo).runs())  # before any candidate
