"""The ancestry of the selected candidate as a tree: each step's operator and score change; a crossover
shows both parents."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Tree

from evolver.records.candidates import Candidate
from evolver.search.population import Step


def _label(c: Candidate, delta: float | None) -> Text:
    score = f"{c.score:.6g}" if c.score is not None else c.status
    text = Text(f"{c.id} {c.op:<6} {score}")
    if delta is not None:
        text.append(f" {100 * delta:+.1f}%", style="green" if delta < 0 else "red")
    what = c.trailers.get("Tune") or c.trailers.get("Seed") or ""
    if what:
        text.append(f"  {what}", style="dim")
    return text


class LineageTree(Tree[str]):
    def __init__(self, **kwargs: object) -> None:
        super().__init__("lineage", **kwargs)  # type: ignore[arg-type]
        self.show_root = False

    def show(self, steps: list[Step]) -> None:
        self.clear()
        node = self.root
        for step in steps:
            node = node.add(_label(step.candidate, step.delta), data=step.candidate.id, expand=True)
            for other in step.parents[1:]:  # the second parent of a crossover
                node.add_leaf(Text("merged with ").append(_label(other, None)), data=other.id)
        self.root.expand_all()
