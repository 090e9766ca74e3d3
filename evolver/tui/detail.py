"""The selected candidate in detail: diff against its parent, result (rationale, per-shape timings,
residuals), and the error or compiler log."""

from __future__ import annotations

import json
from typing import Any

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static, TabbedContent, TabPane

from evolver.records.candidates import PROVENANCE_KEYS, Candidate
from evolver.records.describe import replies_text


def result_text(c: Candidate, message: str, bad_lines: int) -> Text:
    text = Text()
    text.append(f"{c.id}  {c.op}  status {c.status}", style="bold")
    if c.score is not None:
        text.append(f"  score {c.score:.6g}")
    text.append("\n")
    if bad_lines:
        text.append(f"its note has {bad_lines} malformed line(s), skipped\n", style="red")
    for key in PROVENANCE_KEYS:
        if key in c.trailers:
            text.append(f"{key.lower()}: {c.trailers[key]}\n", style="dim")
    body = "\n".join(line for line in message.splitlines()[1:] if not line.startswith("Evolve-")).strip()
    if body:
        text.append("\n" + body + "\n")
    details: dict[str, Any] = c.result.details if c.result else {}
    shapes = details.get("shapes") or []
    if shapes:
        text.append("\nper shape (mean time per call)\n", style="bold")
        for s in shapes:
            text.append(f"  {s.get('shape', '?'):<28} {s.get('mean_us', 0):>12.1f} us  +-{s.get('std_us', 0):.1f}"
                        f"  ({s.get('runs', '?')} runs)\n")
    worst = details.get("worst")
    if worst:
        text.append("\nworst scaled residuals: " + ", ".join(f"{k} {v:.3g}" for k, v in worst.items()) + "\n")
    rest = {k: v for k, v in details.items() if k not in ("shapes", "worst", "gpu", "timings")}
    if rest:
        text.append("\n" + json.dumps(rest, sort_keys=True, default=str)[:2000] + "\n", style="dim")
    return text


def log_text(c: Candidate) -> Text:
    r = c.result
    log = str(r.line.get("log", "")) if r else ""
    if r is None or (not r.error and not log):
        return Text("no error", style="dim")
    text = Text(r.error + "\n", style="red")
    text.append(log)
    return text


class DetailPane(Vertical):
    def compose(self) -> ComposeResult:
        with TabbedContent():
            with TabPane("Diff", id="tab-diff"):
                yield VerticalScroll(Static("select a candidate", id="diff"))
            with TabPane("Result", id="tab-result"):
                yield VerticalScroll(Static("", id="result"))
            with TabPane("Log", id="tab-log"):
                yield VerticalScroll(Static("", id="log"))
            with TabPane("Reply", id="tab-reply"):
                yield VerticalScroll(Static("", id="reply"))
            with TabPane("Funnel", id="tab-funnel"):
                yield VerticalScroll(Static("no child yet", id="funnel"))

    def show_funnel(self, lines: list[str]) -> None:
        """What became of each operator's children: the run's funnel, not the selected candidate's."""
        self.query_one("#funnel", Static).update(Text("\n".join(lines) or "no child yet", no_wrap=False))

    def activate(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def show(self, c: Candidate, diff: str, message: str, bad_lines: int,
             replies: list[dict[str, Any]] | None = None) -> None:
        self.query_one("#diff", Static).update(
            Syntax(diff, "diff", theme="ansi_dark", word_wrap=False) if diff.strip() else
            Text("no change in the kernel directory (a seed, or an attempt that produced no code)", style="dim"))
        self.query_one("#result", Static).update(result_text(c, message, bad_lines))
        self.query_one("#log", Static).update(log_text(c))
        self.query_one("#reply", Static).update(Text(replies_text(c, replies or [])))
