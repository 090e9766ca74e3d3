"""The TUI driven by Textual's Pilot over hermetic repositories (fixed dates, scripted results)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from pathlib import Path

import pytest

from evolver.records.candidates import format_message
from evolver.records.refs import NOTES_REF
from evolver.records.store import Store
from evolver.search import summary as summary_mod
from evolver.tui.app import DetailLoaded, EvolveApp, Refreshed
from evolver.tui.header import RunHeader
from evolver.tui.lineage import LineageTree
from evolver.tui.population import PopulationTable
from tests.conftest import CLOCK, KERNEL, Scripted, git, make_repo, settle, shown

SOURCE = "CUTOFF = 2  # @tune CUTOFF: 1 2 4 8\nBINARY_INSERT = 0  # @tune BINARY_INSERT: 0 1\n"


def ok(score: float) -> dict:
    return {"status": "ok", "score": score, "details": {"shapes": [{"shape": "20x32 dense", "mean_us": score,
                                                                    "std_us": 1.0, "runs": 5}]}}


@pytest.fixture
def scripted(tmp_path: Path) -> Scripted:
    s = Scripted(make_repo(tmp_path / "repo"))
    s.add("00001", "seed", None, SOURCE, ok(100.0), Seed="examples/sort/seeds/mergesort")
    s.add("00002", "tune", "00001", SOURCE.replace("CUTOFF = 2", "CUTOFF = 4"), ok(80.0), Tune="CUTOFF=4 (was 2)")
    s.add("00003", "mutate", "00002", SOURCE.replace("= 0", "= 1"), {"status": "compile_error", "score": None,
          "error": "SyntaxError: invalid syntax"}, Model="coder", Tokens="1000+200", **{"Cost-USD": "0.002"})
    s.add("00004", "tune", "00002", SOURCE.replace("CUTOFF = 2", "CUTOFF = 8"), ok(64.0), Tune="CUTOFF=8 (was 4)")
    s.add("00005", "tune", "00001", SOURCE.replace("CUTOFF = 2", "CUTOFF = 1"), ok(120.0), Tune="CUTOFF=1 (was 2)")
    s.add("00006", "tune", "00004", SOURCE.replace("= 0", "= 1").replace("= 2", "= 8"), None, Tune="BINARY_INSERT=1")
    s.best("00004")
    return s


def app_for(s: Scripted, poll_s: float = 60.0) -> EvolveApp:
    app = EvolveApp(s.store, None, poll_s=poll_s, clock=lambda: CLOCK)
    app.animation_level = "none"  # snapshots must not catch a tab underline or a toast mid-animation
    return app


def shown_ids(table: PopulationTable) -> list[str]:
    """Candidate ids in display order."""
    return [table.get_row_at(i)[0].plain for i in range(table.row_count)]


def lineage_ids(app: EvolveApp) -> list[str]:
    """The first-parent chain the lineage tree shows (a crossover's other parent is a "merged with" leaf)."""
    out, node = [], app.query_one(LineageTree).root
    while steps := [n for n in node.children if not str(n.label).startswith("merged with")]:
        node = steps[0]
        out.append(str(node.data))
    return out


def test_opens_on_best_and_selection_drives_lineage_and_detail(scripted: Scripted) -> None:
    async def scenario() -> None:
        app = app_for(scripted)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            table = app.query_one(PopulationTable)
            assert table.selected_id() == "00004"  # best first
            assert lineage_ids(app) == ["00004", "00002", "00001"]
            await pilot.pause(0.3)
            assert "CUTOFF = 8" in shown(app, "#diff")
            header = shown(app, RunHeader)
            assert "best 64 (00004) 1.56x seed" in header and "done 5" in header and "evaluating 1" in header
            table.select("00003")
            await pilot.pause(0.3)
            assert lineage_ids(app) == ["00003", "00002", "00001"]
            await pilot.press("l")
            assert "SyntaxError" in shown(app, "#log")
            await pilot.press("v")
            assert "model: coder" in shown(app, "#result")

    asyncio.run(scenario())


def test_sort_and_filter(scripted: Scripted) -> None:
    async def scenario() -> None:
        app = app_for(scripted)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            table = app.query_one(PopulationTable)
            assert table.sort_by == "score"
            assert shown_ids(table)[:4] == ["00004", "00002", "00001",
                                                                                            "00005"]
            await pilot.press("s")  # id, newest first
            assert shown_ids(table) == sorted(shown_ids(table), reverse=True)
            await pilot.press("f")  # ok only
            assert table.status_filter == "ok" and table.row_count == 4
            await pilot.press("f")  # failed
            assert shown_ids(table) == ["00003"]
            await pilot.press("f")  # pending
            assert shown_ids(table) == ["00006"]
            await pilot.press("b")  # jump to best clears the filter that hides it
            assert table.selected_id() == "00004" and table.status_filter == "all"

    asyncio.run(scenario())


def test_new_candidates_and_results_appear_after_a_refresh(scripted: Scripted) -> None:
    async def scenario() -> None:
        app = app_for(scripted, poll_s=0.2)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            table = app.query_one(PopulationTable)
            assert table.row_count == 6
            scripted.store.append_note(scripted.commits["00006"], ok(50.0))
            scripted.add("00007", "tune", "00006", SOURCE.replace("= 2", "= 1"), ok(70.0), Tune="CUTOFF=1")
            scripted.best("00006")
            before = app.refreshes
            await settle(pilot, app, before + 2)
            assert table.row_count == 7
            assert table.get_row_at(0)[0].plain == "00006"  # re-sorted: the new best is on top
            assert "best 50 (00006)" in shown(app, RunHeader)

    asyncio.run(scenario())


def test_empty_repository_waits_for_a_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "examples/sort/evolve.toml").unlink()  # no evolve.toml either: the TUI reads git only
    git(repo, "commit", "-qam", "no config")

    async def scenario() -> None:
        app = EvolveApp(Store(repo), None, poll_s=0.2, clock=lambda: CLOCK)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            assert "no evolve run in this repository yet" in shown(app, RunHeader)
            s = Scripted(repo)
            s.add("00001", "seed", None, SOURCE, ok(10.0))
            await settle(pilot, app, app.refreshes + 2)
            assert app.query_one(PopulationTable).row_count == 1

    asyncio.run(scenario())


def test_only_failures_and_a_malformed_note(tmp_path: Path) -> None:
    s = Scripted(make_repo(tmp_path / "repo"))
    s.add("00001", "seed", None, SOURCE, {"status": "crash", "score": None, "error": "no CUDA device"})
    c2 = s.add("00002", "seed", None, SOURCE + "#\n", None)
    git(s.store.root, "notes", "--ref", NOTES_REF, "add", "-m", "{truncated json", c2)

    async def scenario() -> None:
        app = app_for(s)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            header = shown(app, RunHeader)
            assert "no correct candidate yet" in header and "1 malformed note line(s) skipped" in header
            from textual.widgets import Sparkline

            assert list(app.query_one("#best-curve", Sparkline).data or []) == []  # no bars before a correct one
            table = app.query_one(PopulationTable)
            table.select("00002")
            await pilot.pause(0.3)
            await pilot.press("v")
            assert "malformed" in shown(app, "#result")
            await pilot.press("s", "f", "down", "up")  # still alive and answering
            assert app.is_running

    asyncio.run(scenario())


def test_worktree_of_the_selected_candidate_leaves_the_users_tree_alone(scripted: Scripted) -> None:
    root = scripted.store.root
    before = git(root, "status", "--porcelain"), (root / ".git/index").read_bytes()

    async def scenario() -> None:
        app = app_for(scripted)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            await pilot.press("w")
            for _ in range(40):
                await pilot.pause(0.05)
                if (scripted.store.git_dir / "evolve/worktrees/r1-00004").exists():
                    break

    asyncio.run(scenario())
    tree = scripted.store.git_dir / "evolve/worktrees/r1-00004"
    assert "CUTOFF = 8" in (tree / KERNEL / "sort.py").read_text()
    assert (git(root, "status", "--porcelain"), (root / ".git/index").read_bytes()) == before


@pytest.mark.parametrize("keys", [(), ("f",), ("down", "down", "l")], ids=["best", "filtered", "failure-log"])
def test_snapshots(scripted: Scripted, snap_compare, keys: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    app = app_for(scripted)

    async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot, app)
        await pilot.press(*keys)
        for _ in range(100):  # until the selected candidate's diff and message are in
            await pilot.pause(0.05)
            if app.query_one(PopulationTable).selected_id() in app._details:
                break
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_incremental_summary_equals_a_full_one() -> None:
    """The refresh worker's Summary, fed only the ids that changed, agrees with a summary of everything after
    every step: new candidates, results arriving out of order, a result replaced, candidates removed."""
    import random

    from evolver.records.candidates import Candidate, Snapshot

    rng = random.Random(5)
    snap = Snapshot(run="r")
    summary = summary_mod.Summary()
    statuses = ("ok", "ok", "ok", "incorrect", "timeout", "compile_error", None)
    next_id = 1
    for step in range(60):
        changed: set[str] = set()
        for _ in range(rng.randint(1, 6)):
            cid = f"{next_id:05d}"
            next_id += 1
            op = "seed" if next_id < 4 else rng.choice(("mutate", "tune", "cross"))
            snap.candidates[cid] = Candidate(run="r", id=cid, commit=f"c{cid}", parents=(), created=1000 + step,
                                             subject="", trailers={"Op": op, "Tokens": "10+5", "Cost-USD": "0.01"})
            changed.add(cid)
        for cid in rng.sample(sorted(snap.candidates), min(4, len(snap.candidates))):  # results land anywhere
            status = rng.choice(statuses)
            result = () if status is None else ({"status": status, "t": 2000.0 + step + rng.random(),
                                                  "score": rng.uniform(1, 100) if status == "ok" else None},)
            snap.candidates[cid] = dataclasses.replace(snap.candidates[cid], results=result,
                                                       trailers={**snap.candidates[cid].trailers, "Cost-USD": "0.02"})
            changed.add(cid)
        if step % 17 == 16:  # a branch deleted by hand
            del snap.candidates[rng.choice(sorted(snap.candidates))]
        scored = [c for c in snap.candidates.values() if c.score is not None]
        snap.best_commit = min(scored, key=lambda c: c.score or 0).commit if scored else None
        got = summary.update(snap, changed & snap.candidates.keys(), now=5000.0)
        want = summary_mod.summarise(snap, now=5000.0)
        assert got[1:] == want[1:]
        for key, value in want[0].__dict__.items():
            assert getattr(got[0], key) == (pytest.approx(value) if isinstance(value, float) else value), key


def test_lineage_of_a_crossover_shows_both_parents(scripted: Scripted) -> None:
    s = scripted
    text = SOURCE.replace("CUTOFF = 2", "CUTOFF = 8").replace("BINARY_INSERT = 0", "BINARY_INSERT = 1")
    commit = s.store.write_candidate([s.commits["00004"], s.commits["00005"]], s.commits["00004"], KERNEL,
                                     {"sort.py": text.encode()},
                                     format_message("evolve r1/00007: cross 00004 x 00005", "", {
                                         "Id": "00007", "Run": "r1", "Op": "cross", "Parent": "00004,00005",
                                         "Island": "0", "Merge": "resolved"}))
    s.store.create_branch("refs/heads/evolve/r1/00007", commit)
    s.store.append_note(commit, {"t": CLOCK, "harness": "h", "gpu": "g", **ok(50.0)})
    s.commits["00007"] = commit
    s.best("00007")

    async def scenario() -> None:
        app = app_for(s)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            assert app.query_one(PopulationTable).selected_id() == "00007"
            assert lineage_ids(app) == ["00007", "00004", "00002", "00001"]
            cross = app.query_one(LineageTree).root.children[0]
            leaves = [(str(n.data), str(n.label)) for n in cross.children]
            assert any(cid == "00005" and label.startswith("merged with 00005") for cid, label in leaves), leaves

    asyncio.run(scenario())


def test_replies_help_and_an_honest_rate(scripted: Scripted) -> None:
    """The LLM's replies have their own tab (a), `?` lists the keys, and the header's rate is not made of two
    results a fraction of a second apart."""
    from evolver.records.refs import REPLIES_REF

    commit = scripted.commits["00002"]
    git(scripted.store.root, "notes", "--ref", REPLIES_REF, "add", "-m",
        '{"attempt": 1, "model": "coder", "reply": "Use insertion sort below 4.", "truncated": false}', commit)

    async def scenario() -> None:
        app = app_for(scripted)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            app.query_one(PopulationTable).move_cursor(row=shown_ids(app.query_one(PopulationTable)).index("00002"))
            await pilot.pause(0.3)
            await pilot.press("a")
            assert "attempt 1, coder: applied" in shown(app, "#reply")
            assert "Use insertion sort below 4." in shown(app, "#reply")
            await pilot.press("question_mark")
            await pilot.pause(0.1)
            assert any("d / v / l / a" in str(n.message) for n in app._notifications)

    asyncio.run(scenario())
    assert summary_mod.Summary._rate([100.0, 100.2]) is None
    assert summary_mod.Summary._rate([0.0, 1800.0, 3600.0]) == 2.0
    assert summary_mod.Summary._rate([0.0, 90000.0, 90060.0, 90120.0]) == 60.0  # the last hour only


def test_a_small_terminal_keeps_the_lineage_and_the_header_whole(scripted: Scripted) -> None:
    async def scenario() -> None:
        app = app_for(scripted)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, app)
            header = shown(app, RunHeader)
            assert "/h" in header and "$" in header and "best 64 (00004)" in header
            assert len(header) > 78 and app.query_one(RunHeader).region.height >= 2  # wrapped, not cut
            assert app.query_one(LineageTree).region.height >= 5, app.query_one(LineageTree).region

    asyncio.run(scenario())


def test_the_engine_of_start_tui_is_watched_and_can_be_left_running(scripted: Scripted, tmp_path: Path) -> None:
    """An engine that fails says why in the TUI (not only in its log); `x` quits and leaves one running."""
    import subprocess
    import sys

    log = tmp_path / "engine.log"
    with open(log, "wb") as out:
        failed = subprocess.Popen([sys.executable, "-c", "print('evolve: error: the repository lock is held'); "
                                   "raise SystemExit(1)"], stdout=out)
    failed.wait()

    async def failing() -> None:
        app = EvolveApp(scripted.store, None, poll_s=0.2, clock=lambda: CLOCK, engine=failed, engine_log=log)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app, 2)
            assert "engine stopped (exit 1)" in shown(app, RunHeader)
            assert any("the repository lock is held" in str(n.message) for n in app._notifications)

    asyncio.run(failing())
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        async def leaving() -> None:
            app = EvolveApp(scripted.store, None, poll_s=0.2, clock=lambda: CLOCK, engine=running, engine_log=log)
            async with app.run_test(size=(120, 40)) as pilot:
                await settle(pilot, app)
                await pilot.press("x")
            assert app.detached and running.poll() is None  # the TUI left it alone

        asyncio.run(leaving())
    finally:
        running.kill()
        running.wait()


def test_n_moves_to_the_problems_next_run_then_all_of_them(scripted: Scripted) -> None:
    other = Scripted(scripted.store.root, run="r1-ab12cd")  # a run `evolve pull` brought from another clone
    other.add("00001", "seed", None, SOURCE, ok(90.0), Seed="examples/sort/seeds/mergesort")
    other.add("00002", "tune", "00001", SOURCE.replace("CUTOFF = 2", "CUTOFF = 4"), ok(70.0), Tune="CUTOFF=4 (was 2)")

    async def scenario() -> None:
        app = EvolveApp(scripted.store, "r1", poll_s=60.0, clock=lambda: CLOCK)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            assert len(shown_ids(app.query_one(PopulationTable))) == 6
            await pilot.press("n")
            await settle(pilot, app, refreshes=2)
            assert app.snapshot is not None and app.snapshot.run == "r1-ab12cd"
            assert sorted(shown_ids(app.query_one(PopulationTable))) == ["00001", "00002"]
            assert "r1-ab12cd" in shown(app, RunHeader)
            await pilot.press("n")  # then both as one population: a letter per run
            await settle(pilot, app, refreshes=3)
            assert app.snapshot is not None and app.snapshot.run == "(all runs)"
            assert "(all runs)" in shown(app, RunHeader) and "best 64" in shown(app, RunHeader), shown(app, RunHeader)
            assert sorted(shown_ids(app.query_one(PopulationTable))) == [
                "a00001", "a00002", "a00003", "a00004", "a00005", "a00006", "b00001", "b00002"]
            await pilot.press("n")  # and round again
            await settle(pilot, app, refreshes=4)
            assert app.snapshot is not None and app.snapshot.run == "r1"

    asyncio.run(scenario())


def test_a_workers_result_that_arrives_during_shutdown_is_dropped(scripted: Scripted) -> None:
    """The refresh and the detail are computed in worker threads and posted back; one that arrives while the app
    shuts down (its screen's widgets already removed) is moot, not an exception (CI saw one: NoMatches for
    PopulationTable in detail_loaded). A thread posts both kinds all through the shutdown, six times."""
    stop = threading.Event()

    def flood(app: EvolveApp) -> None:
        while not stop.is_set():
            app.post_message(DetailLoaded("00004", "", "", []))
            app.post_message(Refreshed(None, set(), "watching"))
            time.sleep(0.0001)

    async def scenario() -> None:
        app = app_for(scripted)
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                await settle(pilot, app)
                threading.Thread(target=flood, args=(app,), daemon=True).start()
                await pilot.pause(0.2)
        finally:
            stop.set()

    for _ in range(6):
        asyncio.run(scenario())
