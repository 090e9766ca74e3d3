"""Captures of the TUI at 80x24 and 120x40 on a small scripted run (docs/tui/80x24.svg, docs/tui/120x40.svg).

    python bench/tui_capture.py [OUT_DIR]      (default: docs/tui/)
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evolver.tui.app import EvolveApp  # noqa: E402
from tests.conftest import CLOCK, Scripted, make_repo, settle  # noqa: E402
from tests.test_tui import SOURCE, ok  # noqa: E402


def scripted(repo: Path) -> Scripted:
    s = Scripted(make_repo(repo))
    s.add("00001", "seed", None, SOURCE, ok(100.0), Seed="examples/sort/seeds/mergesort")
    s.add("00002", "tune", "00001", SOURCE.replace("CUTOFF = 2", "CUTOFF = 4"), ok(80.0), Tune="CUTOFF=4 (was 2)")
    s.add("00003", "mutate", "00002", SOURCE + "def broken(:\n", {"status": "compile_error", "score": None,
                                                                   "error": "SyntaxError"}, Model="coder")
    s.add("00004", "tune", "00002", SOURCE.replace("CUTOFF = 2", "CUTOFF = 8"), ok(64.0), Tune="CUTOFF=8 (was 4)")
    s.best("00004")
    return s


async def capture(s: Scripted, size: tuple[int, int], path: Path) -> None:
    app = EvolveApp(s.store, None, poll_s=3600, clock=lambda: CLOCK)
    app.animation_level = "none"
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await pilot.pause(0.3)
        app.save_screenshot(str(path))


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "tui"
    with tempfile.TemporaryDirectory() as tmp:
        s = scripted(Path(tmp) / "repo")
        for size in ((80, 24), (120, 40)):
            path = out / f"{size[0]}x{size[1]}.svg"
            asyncio.run(capture(s, size, path))
            print(path)


if __name__ == "__main__":
    main()
