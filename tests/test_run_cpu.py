"""End to end on the CPU example without an LLM: `evolve start` as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evolver.records.candidates import Candidate
from evolver.records.store import Store
from tests.conftest import evolve, git

pytestmark = pytest.mark.slow
PRESTARTED = '''command = "{python} check.py --kernel-dir {kernel_dir} --mode {mode} --wait-for-go"
files = ["check.py"]
gpus = []
slots = 2
timeout_s = 60
prestart = true'''


def test_thirty_candidates_branches_notes_and_best(repo: Path) -> None:
    before = git(repo, "status", "--porcelain"), (repo / ".git" / "index").read_bytes()
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "30")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "running with `tune` alone" in proc.stdout
    branches = [b for b in git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/evolve/").split() if b]
    assert len(branches) >= 30
    snap = Store(repo).snapshot("r1")
    assert all(len(c.results) == 1 for c in snap.candidates.values())
    # the engine's own stages before each child's evaluation are in its note (bench/run_stages.py)
    children = [c.result.line for c in snap.candidates.values() if c.op != "seed" and c.result is not None]
    assert children and all({"propose_s", "commit_s", "queued_s"} <= set(line.get("engine") or {}) for line in
                             children if "cached_from" not in line)
    scored = [c for c in snap.candidates.values() if c.score is not None]
    best = min(scored, key=lambda c: c.score or 0)
    assert git(repo, "rev-parse", "best").strip() == best.commit
    # the work tree and index are exactly as they were
    assert (git(repo, "status", "--porcelain"), (repo / ".git" / "index").read_bytes()) == before
    # plain git shows the winner
    git(repo, "checkout", "-q", "best")
    assert "CUTOFF" in (repo / "examples/sort/kernel/sort.py").read_text()
    git(repo, "checkout", "-q", "main")
    status = json.loads(evolve(repo / "examples" / "sort", "status", "--json").stdout)
    assert status["candidates"] == len(snap.candidates) and status["best"]["id"] == best.id
    tune = status["operators"]["tune"]  # the bandit's view: what each operator produced, at what cost
    assert tune["tried"] == len(snap.candidates) - 1 and 0 < tune["improved"] < tune["tried"]
    assert tune["cost_usd"] == pytest.approx(0.01 * tune["tried"])  # no LLM: evaluations only (eval_usd)
    text = evolve(repo / "examples" / "sort", "status").stdout
    assert f"tune: {tune['tried']} tried, {tune['improved']} beat their parent" in text
    lineage = evolve(repo / "examples" / "sort", "lineage", "best").stdout.splitlines()
    assert lineage[0].startswith(best.id) and "seed" in lineage[-1]
    show = evolve(repo / "examples" / "sort", "show", "best").stdout
    assert "Evolve-Op:" in show and ("diff --git" in show or best.op == "seed")


def test_second_start_resumes_the_same_run(repo: Path) -> None:
    cwd = repo / "examples" / "sort"
    assert evolve(cwd, "start", "--max-candidates", "5").returncode == 0
    proc = evolve(cwd, "start", "--max-candidates", "9")
    assert proc.returncode == 0
    snap = Store(repo).snapshot("r1")
    assert len(snap.candidates) == 9 and sorted(snap.candidates)[-1] == "00009"
    assert sum(1 for c in snap.candidates.values() if c.op == "seed") == 1


def test_exhausted_tune_space_stops_and_says_why(repo: Path) -> None:
    """The example has 48 parameter combinations: no tree is evaluated twice, and the run ends with a reason."""
    cwd = repo / "examples" / "sort"
    proc = evolve(cwd, "start", "--max-candidates", "80", "-q")
    assert proc.returncode == 0
    snap = Store(repo).snapshot("r1")
    trees = [c.kernel_tree for c in snap.candidates.values()]
    assert len(trees) == len(set(trees)) <= 48 + 1
    assert "tune has tried every reachable value" in proc.stdout


def test_prestarted_evaluators_judge_every_candidate_and_leave_nothing(repo: Path, tmp_path: Path) -> None:
    """evaluation.prestart: each evaluation's process was started before its candidate existed and waited for
    the go line; the results are the same kind as without it, and the spare processes and their temporary
    directories are gone when the run ends."""
    from tests.conftest import example_config

    (repo / "examples/sort/evolve.toml").write_text(example_config(evaluation=PRESTARTED))
    git(repo, "commit", "-qam", "prestart")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "12", env={"TMPDIR": str(tmpdir)})
    assert proc.returncode == 0, proc.stderr + proc.stdout
    snap = Store(repo).snapshot("r1")
    assert len(snap.candidates) == 12
    for c in snap.candidates.values():
        assert c.result is not None and c.result.status == "ok", c.result
        assert c.result.details["prestarted"] is True
    assert [p.name for p in tmpdir.iterdir() if p.name.startswith("evolve-eval-")] == []


SLOW_START_S = 4.0  # an evaluator's own start (a judge's `import torch`), paid before it reads its go line


def slow_to_start(repo: Path, confirm: bool = False) -> None:
    """The example with an evaluator that takes SLOW_START_S to start, prestarted, two slots (with `confirm`, a
    would-be best confirmed in `final` mode)."""
    from tests.conftest import example_config

    (repo / "examples/sort/slow_start.py").write_text(
        f"import runpy, sys, time\ntime.sleep({SLOW_START_S})\nsys.argv[0] = 'check.py'\n"
        "runpy.run_path('check.py', run_name='__main__')\n")
    evaluation = PRESTARTED.replace("{python} check.py", "{python} slow_start.py").replace(
        'files = ["check.py"]', 'files = ["check.py", "slow_start.py"]')
    (repo / "examples/sort/evolve.toml").write_text(example_config(
        evaluation=evaluation + ('\nmode = "quick"\nconfirm_mode = "final"' if confirm else "")))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "an evaluator slow to start")


def started_and_ended(c: Candidate) -> tuple[float, float]:
    assert c.result is not None and c.result.status == "ok", c.result
    return c.result.line["t"] - c.result.line["duration_s"], c.result.line["t"]


def test_no_child_is_judged_before_the_seeds_first_result(repo: Path) -> None:
    """The seed's first result is the run's critical path: its confirmation and every child's parent wait for it.
    A `tune` child judged beside it (session 25's early children) delayed it by 9 s on the H200 and lowered three
    runs' rates, so the other slot waits (with its evaluator prestarted) and the children come after, a bandit's
    choice each; the seed is confirmed once its result is in."""
    slow_to_start(repo, confirm=True)
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "3")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    seed, *children = sorted(Store(repo).snapshot("r1").candidates.values(), key=lambda c: c.id)
    assert seed.op == "seed" and [c.op for c in children] == ["tune", "tune"]
    assert all(started_and_ended(c)[0] >= started_and_ended(seed)[1] for c in children), proc.stdout
    assert all("Bandit" in c.trailers for c in children)
    assert seed.confirmation is not None, proc.stdout
    stages = subprocess.run([sys.executable, "bench/run_stages.py", str(repo)], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parents[1])
    lines = stages.stdout.splitlines()  # bench/run_stages.py's start of the run: began - written, in seconds
    first = next(i for i, line in enumerate(lines) if line.startswith("  0"))
    assert lines[first].split()[:2] == ["00001", "seed"], stages.stdout + stages.stderr
    assert lines[first + 1].startswith("      its stages (s): "), stages.stdout  # the seed's own, judged cold


def test_the_second_slots_first_child_finds_its_evaluator_started(repo: Path) -> None:
    """The engine prestarts each slot's first process as the run starts (`Evaluator.prestart_slots`): the second
    slot's first child comes once the seed is judged and finds a process past its start, so its evaluation does
    not pay it (the seed's, started with the run, does). Asked twice, a slot still has one."""
    import asyncio

    from evolver.evaluation.evaluate import Evaluator, make_slots
    from evolver.records.config import load_config

    slow_to_start(repo)
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "2")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    seed, child = sorted(Store(repo).snapshot("r1").candidates.values(), key=lambda c: c.id)
    assert child.op == "tune" and started_and_ended(child)[0] >= started_and_ended(seed)[1]
    assert seed.result is not None and child.result is not None
    assert seed.result.line["duration_s"] >= SLOW_START_S  # the seed waits for its process: nothing was earlier
    assert child.result.line["duration_s"] < SLOW_START_S, child.result.line  # its process had started with the run

    config = load_config(repo / "examples/sort/evolve.toml", repo)
    store = Store(repo)
    evaluator, slots = Evaluator(config, store, store.head_commit()), make_slots(config)

    async def waiting_twice_then_closed() -> tuple[list[int], list[int | None]]:
        await evaluator.prestart_slots(slots)
        await evaluator.prestart_slots(slots)
        alive = [len([p for p in evaluator._waiting.by_slot.get(s, []) if p.alive]) for s in slots]
        procs = [p.proc for s in slots for p in evaluator._waiting.by_slot[s]]
        await evaluator.close()
        return alive, [p.returncode if p else 0 for p in procs]

    alive, ended = asyncio.run(waiting_twice_then_closed())
    assert len(slots) == 2 and alive == [1, 1]
    assert all(code is not None for code in ended)  # `close` ends them


def test_a_run_resumed_under_another_judge_judges_its_best_again_and_goes_on(repo: Path) -> None:
    """A new harness (say, a new anti-cheat version) or another mode makes every earlier result incomparable:
    the resumed run judges its seed and best candidates again under today's judge and breeds on, instead of
    stopping with "no correct candidate" while its seed is `ok`."""
    cwd = repo / "examples" / "sort"
    assert evolve(cwd, "start", "--max-candidates", "4").returncode == 0
    config = cwd / "evolve.toml"
    config.write_text(config.read_text().replace("timeout_s = 60", 'timeout_s = 60\nmode = "quick"'))
    git(repo, "commit", "-qam", "quick mode")
    status = evolve(cwd, "status").stdout  # before: what `best` holds, and why it does not count yet
    assert "judged by another judge than today's" in status and "another run" not in status, status
    proc = evolve(cwd, "start", "--max-candidates", "7")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "judged by another judge" in proc.stdout and "no correct candidate" not in proc.stdout, proc.stdout
    assert "00001 seed   ok" in proc.stdout and "(judged again)" in proc.stdout, proc.stdout
    snap = Store(repo).snapshot("r1")
    assert len(snap.candidates) == 7  # the run went on
    again = [c for c in snap.candidates.values() if len(c.results) == 2]
    assert {c.op for c in again} >= {"seed"} and 1 <= len(again) <= 4  # the seed and the best, judged twice
    best = Store(repo).snapshot("r1").by_commit()[git(repo, "rev-parse", "best").strip()]
    assert best.result is not None and best.result.harness == again[0].results[-1].harness  # today's judge
