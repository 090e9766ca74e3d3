"""`evolve add`: a kernel made outside the loop (by hand, by an agent in another terminal, on another branch)
recorded as a candidate of a run, a child of a parent (default: the run's best), with `Op: manual`; judged
at once by the run's evaluator with a fresh secret seed, and, where the run has a confirm mode and it would
win, confirmed before `best` moves: exactly the path of any other child from there on."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evolver.commands.common import (UserError, Verb, files_of_directory, open_repo, ref_files, resolve, run_name,
                                     run_of, run_winner, set_arg, with_settings)
from evolver.records.candidates import Candidate, Result, Snapshot, with_unit
from evolver.records.config import Config
from evolver.records.store import Store
from evolver.run.opening import OpenRun, open_run
from evolver.search.children import Children
from evolver.search.operators import Proposal


@dataclass
class Added:
    candidate: Candidate
    result: Result
    confirmation: Result | None
    best: Candidate | None


def add(config: Config, store: Store, run: str, files: Callable[[], dict[str, bytes]],
        pick_parent: Callable[[Snapshot], Candidate], message: str, say: Callable[[str], None] = print) -> Added:
    """Commit `files` as the kernel directory of a new child of `pick_parent(snapshot)` in `run`, judge it,
    and let `best` follow."""
    try:
        opened = open_run(config, store, run, create=False, say=say)
        parent = pick_parent(opened.snapshot)
        store.own_refs()
        kernel = files()
        proposal = Proposal("manual", parent, None, message or f"manual: a kernel added by hand to {parent.id}",
                            rationale=message, island=parent.island, merged=kernel)
        candidate = Children(config, store, opened.snapshot, opened.base, lambda c: None).commit(proposal)
        return asyncio.run(_judge(opened, candidate))
    finally:
        store.unlock()


async def _judge(opened: OpenRun, candidate: Candidate) -> Added:
    recorder, slot = opened.recorder, opened.slots[0]
    try:
        first = await opened.evaluator.evaluate(candidate.commit, slot)
        judged = recorder.record(candidate, first) or candidate
        confirmation = None
        if recorder.confirms:  # it would win: the thorough mode first, as for any child
            again = await opened.evaluator.evaluate(candidate.commit, slot, recorder.confirm_mode)
            again["confirm"] = True
            recorder.record(recorder.confirms.popleft(), again)
            confirmation = Result.of(again)
    finally:
        await opened.evaluator.close()
    recorder.update_best()
    return Added(judged, Result.of(first), confirmation, recorder.best())


def cmd_add(args: argparse.Namespace) -> int:

    config, store = open_repo(args)
    run = run_of(args, config, store)

    def kernel() -> dict[str, bytes]:  # read by `add` under the run's lock, `--set` applied (and said) first
        if args.ref:
            found = ref_files(config, store, args.ref)
        else:
            directory = Path(args.dir).resolve() if args.dir else config.root / config.problem.kernel_dir
            found = files_of_directory(directory) if directory.is_dir() else {}
            if not found:
                raise UserError(f"{directory}: no such directory, or nothing in it")
        files, changes = with_settings(found, args.settings)
        if changes:
            print("with " + "; ".join(changes), flush=True)
        return files

    def parent(snapshot: Snapshot) -> Candidate:
        if args.parent != "best":
            return resolve(snapshot, args.parent)
        best = run_winner(config, store, snapshot)
        if best is None:
            raise UserError(f"run {snapshot.run!r} has no correct candidate yet; name one with --parent")
        return best

    message = args.message or ("set by hand: " + ", ".join(args.settings) if args.settings else "")
    done = add(config, store, run, kernel, parent, message, say=lambda line: None)
    c, r = done.candidate, done.result
    score = f" {with_unit(r.score, c)}" if r.score is not None else ""
    print(f"added {c.run}/{c.id} (manual, a child of {c.parent_ids[0]}): {r.status}{score}"
          + (f"; why: {r.error.splitlines()[0][:200]}" if r.error and r.status != "ok" else ""))
    if done.confirmation is not None:
        value = f" {with_unit(done.confirmation.score, c)}" if done.confirmation.score is not None else ""
        print(f"confirmed in {config.evaluation.confirm_mode} mode: {done.confirmation.status}{value}")
    if done.best is not None:
        print(f"best of run {c.run}: {done.best.id}" + (" (this one)" if done.best.id == c.id else ""))
    return 0 if r.status == "ok" else 1


def add_verb(verb: Verb) -> None:
    p = verb("add", "record a kernel made outside the loop as a candidate",
             "Record a kernel directory made by hand, by an agent in another terminal or on another branch as a "
             "candidate of the run (Op: manual), a child of --parent (default: the run's best); it is judged at "
             "once by the run's evaluator with a fresh secret seed and confirmed like any child before `best` "
             "moves. Not while `evolve start` runs in the repository.")
    p.add_argument("dir", nargs="?", help="the kernel directory (default: the problem's kernel_dir)")
    p.add_argument("--ref", metavar="REF", help="take the kernel directory from this git ref instead")
    p.add_argument("--parent", metavar="ID", default="best", help="its parent (default: the run's best)")
    p.add_argument("-m", "--message", default="", help="what it changes (the commit message)")
    set_arg(p)
    p.add_argument("--run", metavar="NAME", type=run_name)
    p.set_defaults(func=cmd_add)
