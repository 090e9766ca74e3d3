"""TUI benchmark on a run of N candidates (default 10,000), headless through Textual's Pilot at 120x40:

- first paint: from app start until the population table is filled (its first MAX_ROWS rows of the sort)
  and the header counts every candidate;
- refresh: after 10 new candidates and results land in git, the time from the poll to the table updated;
- keystroke latency while a refresh is running: a cursor move, from key press to the cursor moved.

    python bench/tui_10k.py [N]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from status_10k import build, git  # noqa: E402
from textual import events  # noqa: E402

from evolver.records.candidates import format_message  # noqa: E402
from evolver.records.store import Store  # noqa: E402
from evolver.tui.app import EvolveApp  # noqa: E402
from evolver.tui.header import RunHeader  # noqa: E402
from evolver.tui.population import MAX_ROWS, PopulationTable  # noqa: E402

ROUNDS = 10


def add_candidates(store: Store, start: int, count: int) -> None:
    parent = store.rev_parse("refs/heads/evolve/r1/00001") or ""
    for i in range(start, start + count):
        cid = f"{i:05d}"
        commit = store.write_candidate([parent], parent, "examples/sort/kernel", {"sort.py": f"X = {i}\n".encode()},
                                       format_message(f"evolve r1/{cid}: tune", "", {"Id": cid, "Op": "tune",
                                                                                     "Parent": "00001"}))
        store.create_branch(f"refs/heads/evolve/r1/{cid}", commit)
        store.append_note(commit, {"t": time.time(), "status": "ok", "score": 500.0 + i, "harness": "h", "gpu": "g"})


async def measure(repo: Path, n: int) -> None:
    store = Store(repo)
    app = EvolveApp(store, "r1", poll_s=3600)
    t0 = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one(PopulationTable)
        deadline = time.perf_counter() + 60
        while table.row_count < min(n, MAX_ROWS) or f"done {n}" not in str(app.query_one(RunHeader).content):
            await pilot.pause(0.01)
            assert time.perf_counter() < deadline, "the table did not fill within 60 s"
        await pilot.pause(0)
        first_paint = time.perf_counter() - t0
        refreshes, keys = [], []
        for round_ in range(ROUNDS):
            add_candidates(store, n + 1 + 10 * round_, 10)
            before = app.refreshes
            start = time.perf_counter()
            app.poll()
            # a keystroke while the refresh is in flight: posted as a terminal would, timed until the
            # cursor has moved (Pilot.press would also wait for the whole app to go idle)
            await pilot.pause(0.02)
            row = table.cursor_row
            k0 = time.perf_counter()
            app.post_message(events.Key("down" if round_ % 2 == 0 else "up", None))
            while table.cursor_row == row:
                await pilot.pause(0.001)
                assert time.perf_counter() - k0 < 30, "the cursor did not move"
            keys.append(time.perf_counter() - k0)
            while app.refreshes == before:
                await pilot.pause(0.001)
                assert time.perf_counter() - start < 30, "the refresh did not land"
            refreshes.append(time.perf_counter() - start)
        assert f"done {n + 10 * ROUNDS}" in str(app.query_one(RunHeader).content)
    print(f"{n} candidates, headless 120x40, this machine")
    print(f"first paint (table filled, header counting all {n}): {first_paint:.2f} s")
    print(f"refresh with 10 new candidates: median {1000 * statistics.median(refreshes):.0f} ms, "
          f"max {1000 * max(refreshes):.0f} ms ({ROUNDS} rounds)")
    print(f"keystroke during a refresh: median {1000 * statistics.median(keys):.0f} ms, max {1000 * max(keys):.0f} ms")


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    repo = Path(tempfile.mkdtemp(prefix="evolve-tui-"))
    build(repo, n)
    git(repo, "pack-refs", "--all")  # as the engine leaves them (it packs every 256 candidates)
    asyncio.run(measure(repo, n))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
