"""The command line: `evolve VERB ...`. Each verb lives in a module of its own in this package (named as the verb;
`try_` for `try`), which adds its parser (`add_verb`) and runs it; domain errors become one line on stderr and
exit code 1, never a traceback. A new verb: a module with `add_verb`, listed in VERBS."""

from __future__ import annotations

import argparse
import sys

from evolver import __version__
from evolver.commands import (
    add,
    export,
    init,
    lineage,
    prompt,
    rejudge,
    share,
    show,
    start,
    status,
    try_,
    tui,
)
from evolver.commands.common import UserError
from evolver.evaluation.slots import EvaluationError
from evolver.records.config import ConfigError
from evolver.records.store import StoreError
from evolver.run.opening import EngineError

VERBS = (init, start, tui, rejudge, try_, add, share, export, status, show, prompt, lineage)  # --help's order

EPILOG = """\
a run, step by step:
  evolve init                      write a commented evolve.toml here
  git add -A && git commit         evolve reads seeds and evaluator files from HEAD
  evolve start --max-candidates 50 breed, evaluate, record; Ctrl-C stops, `evolve start` resumes
  evolve tui                       watch it live (or: evolve start --tui)
  evolve status                    what the run has found
  evolve show best                 the winner: diff against its parent, result, provenance
  git checkout best                inspect the winner with plain git
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evolve", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="Git-native evolutionary optimizer for GPU kernels: every candidate is a branch, every "
                    "result a git note, the winner is the branch `best`.")
    parser.add_argument("--version", action="version", version=f"evolve {__version__}")
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    def verb(name: str, help: str, description: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=description,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("--repo", metavar="PATH", help="work in this directory instead of the current one")
        return p

    for module in VERBS:
        module.add_verb(verb)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (ConfigError, StoreError, EngineError, EvaluationError, UserError) as exc:
        print(f"evolve: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("evolve: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
