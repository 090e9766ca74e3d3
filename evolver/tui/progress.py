"""Progress: best score after each candidate as a sparkline, and the mix of outcomes."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Sparkline, Static

from evolver.records.results import FAILED


class ProgressPane(Vertical):
    def compose(self) -> ComposeResult:
        yield Static("best so far (by candidate)", classes="pane-title")
        yield Sparkline([], summary_function=min, id="best-curve")
        yield Static("", id="best-range")
        yield Static("", id="outcomes")

    def show(self, series: list[float], outcomes: dict[str, int]) -> None:
        # plotted inverted (lower score is better), so the curve climbs as the run improves
        top = max(series) if series else 0.0
        self.query_one("#best-curve", Sparkline).data = [top - v for v in series]  # none: no bars at all
        if series:
            gain = series[0] / series[-1] if series[-1] else 1.0
            self.query_one("#best-range", Static).update(
                f"{series[0]:.6g} -> {series[-1]:.6g}  ({gain:.2f}x over {len(series)} candidates)")
        else:
            self.query_one("#best-range", Static).update("no correct candidate yet")
        total = sum(outcomes.values()) or 1
        lines = []
        for status, count in outcomes.items():
            colour = "green" if status == "ok" else ("red" if status in FAILED else "yellow")
            bar = "█" * max(1, round(14 * count / total))
            lines.append(f"{status:<13}{count:>6} [{colour}]{bar}[/{colour}]")
        self.query_one("#outcomes", Static).update("\n".join(lines))
