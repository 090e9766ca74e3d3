"""What `best` means (docs/ARCHITECTURE.md, "Runs and `best`"): runs belong to one problem; the branch `best`
moves to a run's winner unless it holds a better one of another run judged the same way; `evolve start`'s
last lines and `evolve status` say the same about both."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evolver.records.store import Store
from tests.conftest import COUNTING, counting_repo, evolve, example_config, git

pytestmark = pytest.mark.slow
TUNE = "operators = { tune = 1.0 }\nislands = 1\npopulation = 4\nseed = 3"


def tail(text: str, n: int) -> list[str]:
    return [line.strip() for line in text.strip().splitlines()[-n:]]


def test_a_worse_new_run_leaves_best_and_start_and_status_agree(tmp_path: Path) -> None:
    repo = counting_repo(tmp_path / "repo", example_config(evaluation=COUNTING, evolution=TUNE))
    sort = repo / "examples" / "sort"
    first = evolve(sort, "start", "--max-candidates", "8")
    assert first.returncode == 0, first.stdout + first.stderr
    winner = git(repo, "rev-parse", "best").strip()
    r1 = Store(repo).snapshot("r1")
    held = r1.by_commit()[winner]
    assert held.score is not None and held.score < r1.candidates["00001"].score  # tune improved on the seed
    resumed = evolve(sort, "start", "--new-run", "--run", "r1", "--max-candidates", "9")  # a new run that exists
    assert resumed.returncode == 1 and "--new-run --run r1: run 'r1' exists" in resumed.stderr, resumed.stderr
    assert len(Store(repo).snapshot("r1").candidates) == len(r1.candidates)  # nothing resumed
    second = evolve(sort, "start", "--new-run", "--max-candidates", "1")  # the seed alone: worse
    assert second.returncode == 0, second.stdout + second.stderr
    assert git(repo, "rev-parse", "best").strip() == winner
    last = tail(second.stdout, 2)
    assert last[0].startswith("best of run r2: 00001 score") and "git checkout evolve/r2/00001" in last[0]
    assert last[1].startswith(f"the branch `best` holds r1/{held.id}, score")
    status = evolve(sort, "status").stdout  # the latest run of this problem: r2
    assert all(line in [s.strip() for s in status.splitlines()] for line in last), status
    shown = evolve(sort, "show", "best").stdout  # the branch's candidate, in its own run
    assert shown.startswith(f"candidate r1/{held.id}")
    assert evolve(sort, "show", "best", "--run", "r2").stdout.startswith("candidate r2/00001")


def test_a_second_problem_has_its_own_runs(tmp_path: Path) -> None:
    repo = counting_repo(tmp_path / "repo", example_config(evaluation=COUNTING, evolution=TUNE))
    sort = repo / "examples" / "sort"
    assert evolve(sort, "start", "--max-candidates", "3").returncode == 0
    other = repo / "examples" / "other"
    shutil.copytree(sort, other, ignore=shutil.ignore_patterns("kernel"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a second problem")
    run = evolve(other, "start", "--max-candidates", "3")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "new run 'r2'" in run.stdout  # not a resume of the first problem's r1
    store = Store(repo)
    assert store.runs("examples/sort/kernel") == ["r1"] and store.runs("examples/other/kernel") == ["r2"]
    assert evolve(sort, "status").stdout.startswith("run r1:")
    assert evolve(other, "status").stdout.startswith("run r2:")
    refused = evolve(other, "start", "--run", "r1", "--max-candidates", "4")
    assert refused.returncode == 1 and "another problem" in refused.stderr


def test_the_tui_header_names_the_same_best_as_start_and_status(tmp_path: Path) -> None:
    import asyncio

    from evolver.commands.common import winner_for
    from evolver.records.config import find_config, load_config
    from evolver.tui.app import EvolveApp
    from evolver.tui.header import RunHeader
    from tests.conftest import settle, shown

    repo = counting_repo(tmp_path / "repo", example_config(evaluation=COUNTING, evolution=TUNE))
    sort = repo / "examples" / "sort"
    assert evolve(sort, "start", "--max-candidates", "8").returncode == 0
    assert evolve(sort, "start", "--new-run", "--max-candidates", "1").returncode == 0
    store = Store(repo)
    config = load_config(find_config(sort), repo)

    async def scenario() -> None:
        app = EvolveApp(store, "r2", poll_s=60, winner=winner_for(config, store, "r2"))
        async with app.run_test(size=(160, 40)) as pilot:
            await settle(pilot, app)
            assert "(00001; branch best elsewhere)" in shown(app, RunHeader), shown(app, RunHeader)

    asyncio.run(scenario())


def test_the_latest_run_is_the_one_opened_last_not_the_last_by_name(tmp_path: Path) -> None:
    """After runs r1 to r10, `evolve start` and `evolve status` mean r10 (names sort as text: r9 after r10)."""
    repo = counting_repo(tmp_path / "repo", example_config(evaluation=COUNTING, evolution=TUNE))
    sort = repo / "examples" / "sort"
    assert evolve(sort, "start", "--max-candidates", "1").returncode == 0
    store = Store(repo)
    record = store.get_meta("refs/evolve/runs/r1")
    assert record is not None
    for n in range(2, 11):  # nine more runs of this clone, opened one after another
        store.set_meta(f"refs/evolve/runs/r{n}", {**record, "run": f"r{n}", "created": record["created"] + n})
    assert store.runs("examples/sort/kernel")[-3:] == ["r8", "r9", "r10"]
    resumed = evolve(sort, "start", "--max-candidates", "1")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "run r10:" in resumed.stdout and Store(repo).snapshot("r10").candidates, resumed.stdout
    assert "best of run r10" in evolve(sort, "status").stdout


def test_a_pulled_run_without_a_clone_is_never_resumed(tmp_path: Path) -> None:
    """A run record that names no clone (written by a remote, made to sort last) is not this clone's: `evolve
    start` opens a run of its own, and refuses the other by name; a run whose base is not in this clone's
    history is refused too (its judge's files would come from there)."""
    repo = counting_repo(tmp_path / "repo", example_config(evaluation=COUNTING, evolution=TUNE))
    sort = repo / "examples" / "sort"
    assert evolve(sort, "start", "--max-candidates", "1").returncode == 0
    store = Store(repo)
    mine = store.get_meta("refs/evolve/runs/r1")
    assert mine is not None
    foreign = {k: v for k, v in mine.items() if k != "clone"}
    store.set_meta("refs/evolve/runs/zz-pulled", {**foreign, "run": "zz-pulled", "created": mine["created"] + 60})
    started = evolve(sort, "start", "--max-candidates", "2")
    assert started.returncode == 0 and "run r1:" in started.stdout, started.stdout + started.stderr
    assert not Store(repo).snapshot("zz-pulled").candidates
    by_name = evolve(sort, "start", "--run", "zz-pulled", "--max-candidates", "3")
    assert by_name.returncode == 1 and "another clone" in by_name.stderr and "Traceback" not in by_name.stderr
    elsewhere = git(repo, "commit-tree", "-m", "a commit of another clone", f"{mine['base']}^{{tree}}").strip()
    store.set_meta("refs/evolve/runs/r1", {**mine, "base": elsewhere})
    refused = evolve(sort, "start", "--max-candidates", "3")
    assert refused.returncode == 1 and "not in this clone's history" in refused.stderr, refused.stderr
