"""`evolve lineage`: a candidate's ancestry back to its seed, each step's operator and score change."""

from __future__ import annotations

import argparse

from evolver.commands.common import Verb, candidate_args, open_repo, target
from evolver.search.population import ancestry


def cmd_lineage(args: argparse.Namespace) -> int:
    config, store = open_repo(args)
    snapshot, c = target(args, config, store)
    by_commit = snapshot.by_commit()
    for step in ancestry(c, by_commit, limit=None):
        node = step.candidate
        delta = f"{100 * step.delta:+7.2f}%" if step.delta is not None else ""
        score = f"{node.score:12.6g}" if node.score is not None else f"{node.status:>12}"
        others = [by_commit[p].id for p in node.parents[1:] if p in by_commit]
        merge = f"  (merge with {', '.join(others)})" if others else ""
        what = node.trailers.get("Tune") or node.trailers.get("Seed") or node.subject.split(": ", 1)[-1]
        print(f"{node.id}  {node.op:<6} {score} {delta:>8}  {what[:70]}{merge}")
    return 0


def add_verb(verb: Verb) -> None:
    p = verb("lineage", "ancestry with score changes",
             "The first-parent ancestry of a candidate back to its seed, with each step's operator and score "
             "change against its parent (negative is faster).")
    candidate_args(p)
    p.set_defaults(func=cmd_lineage)
