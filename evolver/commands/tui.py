"""`evolve tui`: watch a run live (evolver/tui/), from git alone."""

from __future__ import annotations

import argparse

from evolver.commands.common import Verb, positive, repo_dir, run_name, winner_for
from evolver.records.config import ConfigError, find_config, load_config
from evolver.records.store import Store


def add_verb(verb: Verb) -> None:
    p = verb("tui", "watch a run live", "The population, the lineage of the selected candidate (default `best`), "
             "its diff and result, and progress, read from git: works on a run in progress, a finished run, or a "
             "repository fetched from elsewhere. Keys: arrows/mouse select, s sort, f filter by status, b best, "
             "d/v/l/a diff/result/log/LLM replies, w check the candidate out into a separate worktree, r refresh, n the "
             "problem's next run (pulled ones too), "
             "? help, q quit.")
    p.add_argument("--run", metavar="NAME", type=run_name, help="the run to show (default: the latest)")
    p.add_argument("--poll", type=positive(float), default=2.0, metavar="S", help="seconds between looks at git (default 2)")
    p.set_defaults(func=cmd_tui)


def cmd_tui(args: argparse.Namespace) -> int:
    from evolver.tui.app import run_tui

    cwd = repo_dir(args)
    store = Store.discover(cwd)
    try:
        where = find_config(cwd)
    except ConfigError:  # no evolve.toml here: git alone (a repository fetched from elsewhere)
        run_tui(store, args.run, poll_s=args.poll)
        return 0
    config = load_config(where, store.root)  # a broken one is an error, as for every other verb
    from evolver.records.runs import own_runs

    runs = store.runs(config.problem.kernel_dir)
    mine = own_runs(store, config.problem.kernel_dir)
    # the run `status` shows: this clone's latest of this problem (n in the TUI moves to the others)
    run: str | None = args.run or config.run or ((mine or runs)[-1] if runs else None)
    run_tui(store, run, poll_s=args.poll, winner=winner_for(config, store, run) if run else None,
            min_gain=config.evaluation.min_gain)
    return 0
