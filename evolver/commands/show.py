"""`evolve show`: a candidate's result, provenance trailers and diff against its parent; `--reply`: what the
LLM answered, attempt by attempt."""

from __future__ import annotations

import argparse

from evolver.commands.common import Verb, candidate_args, open_repo, target
from evolver.records.describe import describe, replies_text
from evolver.records.refs import REPLIES_REF


def cmd_show(args: argparse.Namespace) -> int:
    config, store = open_repo(args)
    _, c = target(args, config, store)
    if args.reply:
        print(replies_text(c, store.note_lines(c.commit, REPLIES_REF)))
        return 0
    print("\n".join(describe(c)))
    message = store.message(c.commit)
    print("\n" + "\n".join("    " + line for line in message.splitlines()))
    if c.parents:
        print()
        print(store.diff(c.parents[0], c.commit, config.problem.kernel_dir) or "(no change in the kernel directory)")
    return 0


def add_verb(verb: Verb) -> None:
    p = verb("show", "one candidate: result, provenance, diff",
             "Show a candidate (an id such as 42 or 00042, or `best`): its result, its commit message with the "
             "provenance trailers, and its diff against its parent.")
    candidate_args(p)
    p.add_argument("--reply", action="store_true",
                   help="what the LLM answered instead, attempt by attempt, and why an answer was not applied")
    p.set_defaults(func=cmd_show)
