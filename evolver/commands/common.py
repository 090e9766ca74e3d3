"""What the verbs share: the repository and problem a command line names, the run and candidate it means, the
run's best, and the one-line error a user gets (`UserError`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evolver.records.candidates import Candidate, Snapshot, score_of, with_unit
from evolver.records.config import Config, find_config, load_config
from evolver.records.reader import candidate_at
from evolver.records.refs import BEST_REF, bad_run_name
from evolver.records.results import Recorder
from evolver.records.runs import choose_run, run_base
from evolver.records.store import Store
from evolver.search.tunables import apply_settings


def run_name(text: str) -> str:
    """An argparse type: a run name (`refs.bad_run_name`)."""
    why = bad_run_name(text)
    if why:
        raise argparse.ArgumentTypeError(why)
    return text

def candidate_args(p: argparse.ArgumentParser, optional: bool = False) -> None:
    """The candidate a verb works on (`best` if left out, where `optional`) and `--run`, its run."""
    if optional:
        p.add_argument("candidate", nargs="?", default="best", help="candidate id or `best` (default)")
    else:
        p.add_argument("candidate", help="candidate id or `best`")
    p.add_argument("--run", metavar="NAME", type=run_name)

class UserError(Exception):
    pass

def repo_dir(args: argparse.Namespace) -> Path:
    """The directory a verb works in: --repo, else here."""
    return Path(args.repo).resolve() if getattr(args, "repo", None) else Path.cwd()

def open_repo(args: argparse.Namespace) -> tuple[Config, Store]:
    cwd = repo_dir(args)
    store = Store.discover(cwd)
    config = load_config(find_config(cwd), store.root)
    return config, store

def run_of(args: argparse.Namespace, config: Config, store: Store) -> str:
    """The run a reading verb means: the one named, else this clone's latest, else the latest of any clone (a
    fresh clone shows what `evolve pull` brought)."""
    runs = store.runs(config.problem.kernel_dir)
    run = choose_run(store, config, getattr(args, "run", None), new=False)
    if run not in runs and not getattr(args, "run", None) and not config.run and runs:
        run = runs[-1]
    if run not in runs:
        named = f" {run!r}" if getattr(args, "run", None) or config.run else ""  # (not a name `start` would give)
        raise UserError(f"no run{named} of the problem in {config.path} (its runs: {', '.join(runs) or 'none yet'}"
                        "); `evolve start` begins one")
    return run

def resolve(snapshot: Snapshot, ref: str) -> Candidate:
    """A candidate of `snapshot` by id (42, 00042, or a branch name ending in it)."""
    key = ref.rsplit("/", 1)[-1]
    if key in snapshot.candidates:
        return snapshot.candidates[key]
    if key.isdigit() and f"{int(key):05d}" in snapshot.candidates:
        return snapshot.candidates[f"{int(key):05d}"]
    raise UserError(f"no candidate {ref!r} in run {snapshot.run!r}")

def target(args: argparse.Namespace, config: Config, store: Store) -> tuple[Snapshot, Candidate]:
    """The candidate the command line names, with its run: an id (in --run or the latest run), `best` with
    --run (that run's own best), or `best` (what the branch `best` holds, in whichever run of this problem)."""
    if args.candidate != "best":
        snapshot = store.snapshot(run_of(args, config, store))
        return snapshot, resolve(snapshot, args.candidate)
    if getattr(args, "run", None):
        snapshot = store.snapshot(run_of(args, config, store))
        mine = run_winner(config, store, snapshot)
        if mine is None:
            raise UserError(f"run {snapshot.run!r} has no correct candidate yet")
        return snapshot, mine
    held = branch_best(store)
    if held is None:
        raise UserError(_no_best(config, store))
    if held.run not in store.runs(config.problem.kernel_dir):
        raise UserError(f"`best` holds {held.run}/{held.id}, a candidate of another problem; name this problem's "
                        "run with --run")
    snapshot = store.snapshot(held.run)
    return snapshot, snapshot.candidates.get(held.id, held)

def _no_best(config: Config, store: Store) -> str:
    """Why `best` names no candidate: moved by hand to another commit, deleted, or none has passed yet."""
    commit = store.rev_parse(BEST_REF)
    if commit is not None:
        return (f"the branch `best` holds {commit[:12]}, which is no candidate (moved by hand?); `evolve start` puts "
                "it back, or name a candidate or --run")
    if any(c.status == "ok" for run in store.runs(config.problem.kernel_dir)
           for c in store.snapshot(run).candidates.values()):
        return ("there is no branch `best` (deleted?) though candidates have passed; `evolve start` puts it back, or "
                "name a candidate or --run")
    return "there is no `best` yet (no candidate has passed its evaluation)"

def branch_best(store: Store) -> Candidate | None:
    commit = store.rev_parse(BEST_REF)
    return candidate_at(store, commit) if commit else None

def run_winner(config: Config, store: Store, snapshot: Snapshot) -> Candidate | None:
    """A run's best as the engine decides it (today's judge, this machine's devices, confirmed scores with a
    confirm mode); on a machine without the run's devices, whichever device measured with today's judge."""
    return winner_for(config, store, snapshot.run)(snapshot)

def winner_for(config: Config, store: Store, run: str) -> Callable[[Snapshot], Candidate | None]:
    """`run_winner` for repeated snapshots of one run (the TUI): the judge and devices are found once."""
    recorder = recorder_for(config, store, run)
    return lambda snapshot: recorder(snapshot).best() if recorder is not None else None

def recorder_for(config: Config, store: Store, run: str) -> Callable[[Snapshot], Recorder] | None:
    """The engine's judgement of a run's snapshots (`results.Recorder`: today's judge, this machine's devices,
    confirmed scores with a confirm mode), made without running the engine; None without a usable judge."""
    from evolver.evaluation.evaluate import Evaluator, make_slots
    from evolver.evaluation.slots import EvaluationError

    base = run_base(store, run)
    try:
        evaluator = Evaluator(config, store, base)
    except EvaluationError:
        return None
    try:
        devices: set[str] | None = {s.fingerprint for s in make_slots(config)}
    except EvaluationError:
        devices = None
    mode = config.evaluation.confirm_mode
    confirm_version = evaluator.version_for(mode) if mode else ""

    def recorder(snapshot: Snapshot) -> Recorder:
        seen = devices if devices is not None else {r.gpu for c in snapshot.candidates.values()
                                                    for r in c.results if r.gpu}
        return Recorder(store, snapshot, evaluator.version, mode, confirm_version, seen, lambda line: None,
                        min_gain=config.evaluation.min_gain)
    return recorder

def best_lines(run: str, mine: Candidate | None, held: Candidate | None) -> list[str]:
    """What `evolve start` ends with and `evolve status` shows: the run's best and what the branch holds."""
    if mine is not None and held is not None and held.commit == mine.commit:
        return [f"best: {mine.id} score {with_unit(score_of(mine), mine)} (`git checkout best` or "
                "`evolve show best`)"]
    lines = [f"best of run {run}: {mine.id} score {with_unit(score_of(mine), mine)} (`git checkout "
             f"evolve/{run}/{mine.id}`)" if mine is not None else f"no correct candidate in run {run} yet"]
    if held is not None:
        why = ("judged by another judge than today's (an older harness, another mode or device; `evolve start` "
               "judges it again)" if held.run == run else "a better candidate of another run under the same judge")
        lines.append(f"the branch `best` holds {held.run}/{held.id}, score {with_unit(score_of(held), held)}: "
                     f"{why}, or `best` is checked out")
    return lines

def brief(c: Candidate | None) -> dict[str, Any] | None:
    """A candidate in a JSON summary (`status --json`, `try --json`)."""
    if c is None:
        return None
    return {"run": c.run, "id": c.id, "score": score_of(c), "commit": c.commit, "op": c.op,
            "unit": c.result.details.get("unit") if c.result else None,
            "harness": c.result.harness if c.result else None}


Verb = Callable[[str, str, str], argparse.ArgumentParser]  # name, one-line help, description -> its parser


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


def files_of_directory(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` (relative paths), byte for byte; caches and git metadata left out."""
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts and ".git" not in p.parts}


def ref_files(config: Config, store: Store, ref: str) -> dict[str, bytes]:
    """The problem's kernel directory as a git ref has it (a candidate's branch, `best`, any commit)."""
    commit = store.rev_parse(f"{ref}^{{commit}}")
    if commit is None:
        raise UserError(f"--ref {ref}: no such commit in {store.root}")
    found = store.read_files(commit, config.problem.kernel_dir)
    if not found:
        raise UserError(f"{ref}: no {config.problem.kernel_dir}/ there")
    return found


def with_settings(files: dict[str, bytes], settings: list[str]) -> tuple[dict[str, bytes], list[str]]:
    """Kernel files with `--set NAME=VALUE` applied to the tunables their text files declare, and what changed."""
    text = {}
    for path, data in files.items():
        try:
            text[path] = data.decode()
        except UnicodeDecodeError:
            continue  # not source: nothing to tune there
    try:
        changed, changes = apply_settings(text, settings)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    return {**files, **{path: t.encode() for path, t in changed.items() if t != text[path]}}, changes


def set_arg(p: argparse.ArgumentParser) -> None:
    """`--set NAME=VALUE`, repeatable: a tunable of the kernel set by hand."""
    p.add_argument("--set", metavar="NAME=VALUE", action="append", default=[], dest="settings",
                   help="set the kernel's tunable NAME (an @tune line) to VALUE first, in a copy: the directory "
                        "stays as it is (repeat for several)")
