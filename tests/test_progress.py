"""What `evolve start` prints while it runs: the budget line's rate, what is left and the binding limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolver.run.progress import Budget, budget_line, duration
from tests.conftest import evolve


def test_the_limit_reached_first_is_the_eta() -> None:
    line = budget_line(Budget(max_candidates=50, max_hours=2.0), elapsed_s=600, results=10, done=20,
                       spent_usd=0.0, spent_at_start=0.0)
    assert "10 results in 10m00s (60.0/h)" in line
    assert "30 of 50 candidates left" in line and "1h50m of 2 h left" in line
    assert line.endswith("ETA 30m00s (max_candidates)")
    line = budget_line(Budget(max_candidates=500, max_usd=5.0), elapsed_s=3600, results=100, done=100,
                       spent_usd=4.0, spent_at_start=2.0)
    assert "$1.00 of $5 left" in line and line.endswith("ETA 30m00s (max_usd)")


def test_the_recent_rate_is_shown_and_gives_the_eta() -> None:
    """A run's first results pay one-off costs (compiles, the seed's confirmation): once the engine has more than
    RECENT results, the line shows the rate of the last ones beside the session's, and the ETA follows it."""
    line = budget_line(Budget(max_candidates=100), elapsed_s=1200, results=20, done=20, spent_usd=0.0,
                       spent_at_start=0.0, recent=(10, 300.0))
    assert "20 results in 20m00s (60.0/h; the last 10: 120.0/h)" in line, line
    assert line.endswith("ETA 40m00s (max_candidates)"), line  # 80 left at 120 an hour, not 80 at 60
    assert budget_line(Budget(max_candidates=5), 10.0, 1, 1, 0.0, 0.0, recent=(0, 0.0)).count("the last") == 0


def test_no_budget_says_so_and_nothing_is_divided_by_zero() -> None:
    assert budget_line(Budget(), 0.0, 0, 0, 0.0, 0.0).endswith("no budget: until Ctrl-C")
    assert "ETA" not in budget_line(Budget(max_candidates=5), 0.0, 0, 0, 0.0, 0.0)
    assert duration(59) == "59s" and duration(3599) == "59m59s" and duration(7260) == "2h01m"


def on_a_terminal(cwd: Path, *args: str, timeout: float = 120) -> str:
    """The real CLI with its stdout on a pseudo-terminal (as in a shell), everything it wrote."""
    import os
    import pty
    import subprocess
    import sys
    import time

    main, secondary = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "evolver", *args], cwd=cwd, stdout=secondary,
                            stderr=secondary, stdin=subprocess.DEVNULL, env={**os.environ, "COLUMNS": "200"})
    os.close(secondary)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the other end closed: the process is gone
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=10)
    os.close(main)
    return out.decode("utf-8", "replace")


@pytest.mark.slow
def test_a_terminal_gets_a_live_budget_line_and_a_pipe_does_not(repo: Path) -> None:
    sort = repo / "examples" / "sort"
    shown = on_a_terminal(sort, "start", "--max-candidates", "4")
    assert "[   1/4] 00001 seed" in shown and "00004 tune" in shown  # the result lines, brackets intact
    assert "now 1 evaluating" in shown or "now 0 evaluating" in shown  # the live line (redrawn each second)
    piped = evolve(sort, "start", "--max-candidates", "6")
    assert piped.returncode == 0 and "evaluating, " not in piped.stdout  # a log gets no live line
