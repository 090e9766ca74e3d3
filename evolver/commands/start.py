"""`evolve start`: breed, evaluate and record until the budget is spent (the loop: evolver/run/engine.py), with a
live budget line on a terminal, or with the TUI in front (`--tui`)."""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Iterator

from evolver.commands.common import Verb, best_lines, branch_best, open_repo, positive, repo_dir, run_name, winner_for
from evolver.records.candidates import Candidate, Snapshot
from evolver.records.runs import choose_run
from evolver.records.store import Store
from evolver.run.engine import run_engine
from evolver.run.progress import Budget


def add_verb(verb: Verb) -> None:
    p = verb("start", "run (or resume) the evolution", "Breed, evaluate and record candidates until the "
             "budget is spent. Resumes the latest run: candidates without a result are evaluated first. "
             "Ctrl-C once stops after the evaluations in flight; twice abandons them (still resumable).")
    p.add_argument("--max-candidates", type=positive(int), metavar="N", help="stop when the run has N candidates")
    p.add_argument("--max-hours", type=positive(float), metavar="H", help="stop after H hours of this session")
    p.add_argument("--max-usd", type=positive(float), metavar="D",
                   help="stop when the run's LLM spend reaches D dollars")
    p.add_argument("--run", metavar="NAME", type=run_name, help="work on this run (default: the latest, or a new one)")
    p.add_argument("--new-run", action="store_true", help="start a new run instead of resuming the latest")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines, only the summary")
    p.add_argument("--tui", action="store_true", help="watch the run in the TUI (the engine runs in the background)")
    p.set_defaults(func=cmd_start)


def cmd_start(args: argparse.Namespace) -> int:
    config, store = open_repo(args)
    b = config.budget
    budget = Budget(max_candidates=args.max_candidates if args.max_candidates is not None else b.max_candidates,
                    max_usd=args.max_usd if args.max_usd is not None else b.max_usd,
                    max_hours=args.max_hours if args.max_hours is not None else b.max_hours)
    run = choose_run(store, config, args.run, new=args.new_run)
    if store.is_dirty():
        print("note: the work tree has uncommitted changes; evolve builds candidates from commit HEAD and never "
              "touches your files", file=sys.stderr)
    if budget.max_candidates is None and budget.max_usd is None and budget.max_hours is None:
        print("note: no budget set; the run goes on until Ctrl-C (see --max-candidates)", file=sys.stderr)

    def say(line: str) -> None:
        if not args.quiet:
            print(line, flush=True)

    if args.tui:
        return _start_with_tui(args, store, run, winner_for(config, store, run), config.evaluation.min_gain)
    started = time.monotonic()
    with _live_line(sys.stdout.isatty() and not args.quiet) as status:
        summary = run_engine(config, store, run, budget, say, status)
    best = summary.best
    took = time.monotonic() - started
    spend = f", LLM spend so far ${summary.llm_cost_usd:.4f}" if summary.llm_cost_usd else ""
    print(f"run {run}: {summary.created} new candidate(s), {summary.evaluated} evaluated in {took:.0f} s{spend}"
          f"{'; ' + summary.reason if summary.reason else ''}")
    print("\n".join(best_lines(run, best, branch_best(store))))
    return 130 if summary.reason == "interrupted" else 1 if summary.failed else 0


@contextlib.contextmanager
def _live_line(on: bool) -> Iterator[Callable[[str], None] | None]:
    """On a terminal, the budget line kept at the bottom and redrawn each second (rich.live); the result lines
    scroll above it. Elsewhere (a pipe, a log, -q) nothing: the budget line every ten results is in the log."""
    if not on:
        yield None
        return
    from rich.live import Live
    from rich.text import Text

    with Live(Text(""), auto_refresh=False, transient=True) as live:
        yield lambda line: live.update(Text(line, style="dim", no_wrap=True, overflow="ellipsis"), refresh=True)


def _start_with_tui(args: argparse.Namespace, store: Store, run: str,
                    winner: Callable[[Snapshot], Candidate | None], min_gain: float) -> int:
    """The engine in a child process (its progress in .git/evolve/<run>.log), the TUI in front; leaving
    the TUI with q stops the engine the way Ctrl-C does (graceful, resumable), with x leaves it running."""
    import signal
    import subprocess

    from evolver.tui.app import run_tui

    argv = [sys.executable, "-m", "evolver", "start", "--run", run]
    for flag in ("max_candidates", "max_hours", "max_usd"):
        if getattr(args, flag) is not None:
            argv += [f"--{flag.replace('_', '-')}", str(getattr(args, flag))]
    log_path = store.git_dir / "evolve" / f"{run}.log"
    with open(log_path, "ab") as log:  # its own session: it may outlive the TUI (`x`)
        engine = subprocess.Popen(argv, cwd=repo_dir(args), stdout=log,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    app = None
    try:
        app = run_tui(store, run, winner=winner, engine=engine, engine_log=log_path, min_gain=min_gain)
    finally:
        if engine.poll() is None and app is not None and app.detached:
            print(f"the engine goes on in the background (pid {engine.pid}; log: {log_path}); `evolve tui` "
                  "watches it again", file=sys.stderr)
        elif engine.poll() is None:
            engine.send_signal(signal.SIGINT)
            print(f"stopping the engine (finishing evaluations in flight; log: {log_path}) ...", file=sys.stderr)
            engine.wait()
    return 0
