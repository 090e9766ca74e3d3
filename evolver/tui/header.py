"""The one-line summary at the top: run, time, counts, best, rate, spend."""

from __future__ import annotations

from textual.widgets import Static

from evolver.search.summary import Header
from evolver.tui.model import fmt_duration


class RunHeader(Static):
    def show(self, h: Header, engine_state: str = "") -> None:
        best = "no correct candidate yet"
        if h.best_id is not None and h.best_score is not None:
            elsewhere = "; branch best elsewhere" if h.branch_elsewhere else ""
            best = f"best [b]{h.best_score:.6g}[/b] ({h.best_id}{elsewhere})"
            if h.speedup_vs_seed:
                best += f" {h.speedup_vs_seed:.2f}x seed"
            if h.speedup_vs_baseline:
                best += f" {h.speedup_vs_baseline:.1f}x baseline"
        rate = f"{h.evals_per_hour:.0f}/h" if h.evals_per_hour else "-/h"
        warn = f"  [red]{h.malformed} malformed note line(s) skipped[/red]" if h.malformed else ""
        state = f"  [b]{engine_state}[/b]" if engine_state else ""
        self.update(f"[b]{h.run}[/b]  {fmt_duration(h.elapsed_s)}  done {h.done}  evaluating {h.pending}  "
                    f"failed {h.failed}  {best}  {rate}  {h.tokens:,} tok ${h.cost_usd:.2f}{warn}{state}")

    def message(self, text: str) -> None:
        self.update(text)
