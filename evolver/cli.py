"""The `evolve` command line: one subcommand per verb.

Domain errors (configuration, git, evaluator, LLM) become one line on stderr and exit code 1; a wrong
command line is exit code 2 (argparse). Nothing here imports textual, torch or cupy.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from evolver import __version__, export
from evolver.candidates import Candidate, Result, Snapshot
from evolver.config import CONFIG_NAME, ConfigError
from evolver.engine import run_engine
from evolver.evaluate import EvaluationError
from evolver.opening import EngineError, choose_run
from evolver.progress import Budget
from evolver.rejudge import rejudge
from evolver.starter import STARTER
from evolver.store import Store, StoreError
from evolver.views import (
    UserError,
    best_lines,
    branch_best,
    candidate_args,
    cmd_lineage,
    cmd_prompt,
    cmd_show,
    cmd_status,
    open_repo,
    run_name,
    target,
    winner_for,
)

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


def positive(kind: type) -> Any:
    """An argparse type: a number of `kind` above zero."""
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be above zero, not {text}")
        return value
    parse.__name__ = kind.__name__
    return parse


# --- verbs ---------------------------------------------------------------------------------------------

def cmd_init(args: argparse.Namespace) -> int:
    target = Path(args.path)
    if args.example:
        return _init_example(args.example, target, args.force)
    config = target / CONFIG_NAME
    if config.exists() and not args.force:
        raise UserError(f"{config} exists; use --force to overwrite it")
    config.write_text(STARTER, encoding="utf-8")
    print(f"wrote {config}: the QR problem on a GPU. Edit [problem] and [evaluation], commit, then `evolve start`.\n"
          "For a problem that runs on any machine first: `evolve init --example sort`.")
    return 0


def _init_example(name: str, target: Path, force: bool) -> int:
    """The example's evaluator, seed and evolve.toml, copied into `target`."""
    source = example_dir(name)
    files = [f for f in source.rglob("*") if f.is_file() and "__pycache__" not in f.parts]
    clashes = [str(target / f.relative_to(source)) for f in files if (target / f.relative_to(source)).exists()]
    if clashes and not force:
        raise UserError(f"{clashes[0]} exists; use --force to overwrite it")
    for f in files:
        (target / f.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target / f.relative_to(source))
    print(f"wrote the {name} example into {target}: {CONFIG_NAME}, its evaluator and its seed. Next:\n"
          "  git add -A && git commit -m 'evolve: the sort example'   (evolve reads seeds and evaluator from HEAD)\n"
          "  evolve start --max-candidates 30")
    return 0


def example_dir(name: str) -> Path:
    """An example shipped with evolve: inside the installed package, or in the clone it was installed from."""
    package = Path(__file__).resolve().parent
    for candidate in (package / "examples" / name, package.parent / "examples" / name):
        if (candidate / CONFIG_NAME).is_file():
            return candidate
    raise UserError(f"the {name!r} example is not part of this installation")


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
        return _start_with_tui(args, store, run, winner_for(config, store, run))
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
                    winner: Callable[[Snapshot], Candidate | None]) -> int:
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
        engine = subprocess.Popen(argv, cwd=Path(args.repo).resolve() if args.repo else Path.cwd(), stdout=log,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    app = None
    try:
        app = run_tui(store, run, winner=winner, engine=engine, engine_log=log_path)
    finally:
        if engine.poll() is None and app is not None and app.detached:
            print(f"the engine goes on in the background (pid {engine.pid}; log: {log_path}); `evolve tui` "
                  "watches it again", file=sys.stderr)
        elif engine.poll() is None:
            engine.send_signal(signal.SIGINT)
            print(f"stopping the engine (finishing evaluations in flight; log: {log_path}) ...", file=sys.stderr)
            engine.wait()
    return 0


def cmd_tui(args: argparse.Namespace) -> int:
    from evolver.tui.app import run_tui

    try:
        config, store = open_repo(args)
    except ConfigError:  # no evolve.toml here: git alone (a repository fetched from elsewhere)
        run_tui(Store.discover(Path(args.repo).resolve() if args.repo else Path.cwd()), args.run, poll_s=args.poll)
        return 0
    from evolver.sharing import own_runs

    runs = store.runs(config.problem.kernel_dir)
    mine = own_runs(store, config.problem.kernel_dir)
    # the run `status` shows: this clone's latest of this problem (n in the TUI moves to the others)
    run: str | None = args.run or config.run or ((mine or runs)[-1] if runs else None)
    run_tui(store, run, poll_s=args.poll, winner=winner_for(config, store, run) if run else None)
    return 0


def _verdict(result: Result | None) -> str:
    if result is None:
        return "no result"
    text = result.status + (f" {result.score:.6g}" if result.score is not None else "")
    version = result.details.get("judge")
    judge = f", anti-cheat version {version}" if isinstance(version, int) else ""
    return f"{text} (judge {result.harness or '?'}{judge})"


def cmd_rejudge(args: argparse.Namespace) -> int:
    config, store = open_repo(args)
    snapshot, chosen = target(args, config, store)
    say = (lambda line: None) if args.quiet else (lambda line: print(line, flush=True))
    done = rejudge(config, store, snapshot.run, lambda opened: opened.candidates[chosen.id], args.mode, say)
    c = done.candidate
    before = c.confirmation if done.result.confirm and c.confirmation else c.result
    print(f"{c.id}: judged again in {done.mode} mode: {_verdict(done.result)}")
    print(f"{'':{len(c.id)}}  before: {_verdict(before)}")
    if done.result.status != "ok" and done.result.error:
        print(f"{'':{len(c.id)}}  why: {done.result.error.splitlines()[0][:200]}")
    if done.best is None:
        print("best: no candidate of this run has a result from today's judge yet; `best` stays where it is until "
              "one does (`evolve start` judges new candidates with it)")
    else:
        moved = f" (it was {done.best_before})" if done.best_before not in (None, done.best.id) else ""
        print(f"best: {done.best.id}{moved}, score {done.best.score:.6g}")
    return 0


# --- parser --------------------------------------------------------------------------------------------

Verb = Callable[[str, str, str], argparse.ArgumentParser]  # name, one-line help, description -> its parser


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

    _verbs_that_run(verb)
    _verb_try(verb)
    _verb_add(verb)
    _verbs_that_share(verb)
    export.add_verb(verb)
    _verbs_that_read(verb)
    return parser


def _verbs_that_run(verb: Verb) -> None:
    p = verb("init", "write a commented evolve.toml (or a whole example)",
             "Write a commented starting evolve.toml in PATH (the QR problem; it needs a GPU), or with --example "
             "sort a small CPU problem that runs anywhere: its evolve.toml, evaluator and seed.")
    p.add_argument("path", nargs="?", default=".", help="directory to write into (default: here)")
    p.add_argument("--example", choices=("sort",), help="write this example problem instead")
    p.add_argument("--force", action="store_true", help="overwrite files that exist")
    p.set_defaults(func=cmd_init)

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

    p = verb("tui", "watch a run live", "The population, the lineage of the selected candidate (default `best`), "
             "its diff and result, and progress, read from git: works on a run in progress, a finished run, or a "
             "repository fetched from elsewhere. Keys: arrows/mouse select, s sort, f filter by status, b best, "
             "d/v/l/a diff/result/log/LLM replies, w check the candidate out into a separate worktree, r refresh, n the "
             "problem's next run (pulled ones too), "
             "? help, q quit.")
    p.add_argument("--run", metavar="NAME", type=run_name, help="the run to show (default: the latest)")
    p.add_argument("--poll", type=float, default=2.0, metavar="S", help="seconds between looks at git (default 2)")
    p.set_defaults(func=cmd_tui)

    p = verb("rejudge", "judge a candidate again with today's judge",
             "Evaluate a candidate (default `best`) again with the evaluator as it is now - after an update of "
             "evolve's QR harness, say, whose anti-cheat checks a result judged earlier never faced - in the mode "
             "that confirms `best` (or --mode). The new result joins the candidate's note; `best` moves if the "
             "candidate no longer wins. Not while `evolve start` runs in the repository.")
    candidate_args(p, optional=True)
    p.add_argument("--mode", metavar="MODE", help="the evaluation mode (default: [evaluation] confirm_mode, else mode)")
    p.add_argument("-q", "--quiet", action="store_true", help="only the summary")
    p.set_defaults(func=cmd_rejudge)


def _verb_try(verb: Verb) -> None:
    from evolver.trial import cmd_try

    p = verb("try", "judge a kernel directory as a candidate would be (for agents and people)",
             "Judge a kernel directory of the working tree exactly as a candidate is judged (the run's evaluator, "
             "in the sandbox, a fresh secret seed, the same timeout) and print the verdict, the score against "
             "`best` (or --against ID), the per-shape change, the failing gate and the compiler's report. Writes "
             "nothing to git. Exit code 0 only for a correct result, so an agent can loop on it.")
    p.add_argument("dir", nargs="?", help="the kernel directory (default: the problem's kernel_dir)")
    p.add_argument("--mode", metavar="MODE", help="the evaluation mode (default: [evaluation] mode)")
    p.add_argument("--against", metavar="ID", default="best", help="the candidate to compare with (default: best)")
    p.add_argument("--run", metavar="NAME", type=run_name, help="the run whose judge and candidates to use")
    p.add_argument("--json", action="store_true", help="the result as one JSON object")
    p.set_defaults(func=cmd_try)


def _verb_add(verb: Verb) -> None:
    from evolver.manual import cmd_add

    p = verb("add", "record a kernel made outside the loop as a candidate",
             "Record a kernel directory made by hand, by an agent in another terminal or on another branch as a "
             "candidate of the run (Op: manual), a child of --parent (default: the run's best); it is judged at "
             "once by the run's evaluator with a fresh secret seed and confirmed like any child before `best` "
             "moves. Not while `evolve start` runs in the repository.")
    p.add_argument("dir", nargs="?", help="the kernel directory (default: the problem's kernel_dir)")
    p.add_argument("--ref", metavar="REF", help="take the kernel directory from this git ref instead")
    p.add_argument("--parent", metavar="ID", default="best", help="its parent (default: the run's best)")
    p.add_argument("-m", "--message", default="", help="what it changes (the commit message)")
    p.add_argument("--run", metavar="NAME", type=run_name)
    p.set_defaults(func=cmd_add)


def _verbs_that_share(verb: Verb) -> None:
    from evolver.sharing import cmd_share

    for name, what in (("pull", "take in the runs, results and `best` of a git remote"),
                       ("push", "send this clone's runs and results to a git remote (pulls first)")):
        p = verb(name, what, f"{what[0].upper() + what[1:]}: each run's record, its candidates' branches and the "
                 "notes (merged, never overwritten); `best` is then the best of every run of the problem. A clone "
                 "resumes only its own runs. Not while `evolve start` runs in the repository.")
        p.add_argument("remote", nargs="?", default="origin", help="the git remote (default: origin)")
        p.set_defaults(func=cmd_share)


def _verbs_that_read(verb: Verb) -> None:
    p = verb("status", "summarise a run", "Counts by status, the best candidate, LLM tokens and cost.")
    p.add_argument("--run", metavar="NAME", type=run_name)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_status)

    p = verb("show", "one candidate: result, provenance, diff",
             "Show a candidate (an id such as 42 or 00042, or `best`): its result, its commit message with the "
             "provenance trailers, and its diff against its parent.")
    candidate_args(p)
    p.add_argument("--reply", action="store_true",
                   help="what the LLM answered instead, attempt by attempt, and why an answer was not applied")
    p.set_defaults(func=cmd_show)

    p = verb("prompt", "the prompt a mutation of a candidate would send, its size and price",
             "Print the messages that `mutate` would send to the LLM with this candidate as the parent (guidance, "
             "its source, its result and where its time goes, its lineage, ideas from other islands), fitted to "
             "the configured context budget (the coldest files outlined when the source does not fit), then "
             "their estimated size and what one request costs at the configured prices. Before any run, the "
             "parent is the first seed: see and price what a run will send before spending on it.")
    p.add_argument("candidate", nargs="?", help="candidate id or `best` (default: the latest run's best; before any "
                   "run, the first seed)")
    p.add_argument("--run", metavar="NAME", type=run_name)
    p.set_defaults(func=cmd_prompt)

    p = verb("lineage", "ancestry with score changes",
             "The first-parent ancestry of a candidate back to its seed, with each step's operator and score "
             "change against its parent (negative is faster).")
    candidate_args(p)
    p.set_defaults(func=cmd_lineage)


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
