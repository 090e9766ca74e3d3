"""What `evolve start` prints while it runs: the budget line's rate, what is left and the binding limit."""

from __future__ import annotations

from evolver.progress import Budget, budget_line, duration


def test_the_limit_reached_first_is_the_eta() -> None:
    line = budget_line(Budget(max_candidates=50, max_hours=2.0), elapsed_s=600, results=10, done=20,
                       spent_usd=0.0, spent_at_start=0.0)
    assert "10 results in 10m00s (60.0/h)" in line
    assert "30 of 50 candidates left" in line and "1h50m of 2 h left" in line
    assert line.endswith("ETA 30m00s (max_candidates)")
    line = budget_line(Budget(max_candidates=500, max_usd=5.0), elapsed_s=3600, results=100, done=100,
                       spent_usd=4.0, spent_at_start=2.0)
    assert "$1.00 of $5 left" in line and line.endswith("ETA 30m00s (max_usd)")


def test_no_budget_says_so_and_nothing_is_divided_by_zero() -> None:
    assert budget_line(Budget(), 0.0, 0, 0, 0.0, 0.0).endswith("no budget: until Ctrl-C")
    assert "ETA" not in budget_line(Budget(max_candidates=5), 0.0, 0, 0, 0.0, 0.0)
    assert duration(59) == "59s" and duration(3599) == "59m59s" and duration(7260) == "2h01m"
