"""`evolve pull` and `evolve push`: runs travel between clones through a git remote.

What travels: each run's record (`refs/evolve/runs/<run>`), its candidates' branches
(`refs/heads/evolve/<run>/*`) and the two notes refs (results and LLM replies). A run has one writer, the
clone that created it (its record names the clone: `evolve.clone` in the repository's git config); a clone
never resumes another's run, it shows it and lets `best` follow it. Pulling fetches into
`refs/evolve/incoming/` first, then: a run new to this clone is added under its own name (the first run
pushed under a name keeps it: a run of this clone with that name moves aside to `<name>-<clone>`, so every
clone knows every run by one name); the candidates a known run gained are added;
the notes are merged with git's `cat_sort_uniq` strategy, which keeps every line of both sides (a note's
lines are read back in the order of their times, `candidates.parse_note`); `best` is then decided again
over every run of the problem. Pushing pulls first (so the notes push is a fast-forward, and names are
settled) and pushes without force: nothing on the remote is ever overwritten.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from evolver.commands.common import Verb, open_repo, recorder_for
from evolver.records.config import Config
from evolver.records.refs import BEST_REF, NOTES_REF, REPLIES_REF, RUN_REF
from evolver.records.runs import clone_id, is_mine, own_clone, own_runs
from evolver.records.store import IDENTITY, Store, StoreError

INCOMING = "refs/evolve/incoming"


def _identity(record: dict[str, Any] | None) -> tuple[Any, ...]:
    record = record or {}
    return record.get("base"), record.get("created"), record.get("clone"), record.get("kernel_dir")


def _refs(store: Store, prefix: str) -> dict[str, str]:
    out = store.git("for-each-ref", "--format=%(objectname) %(refname)", prefix)
    return {ref: obj for obj, ref in (line.split(" ", 1) for line in out.splitlines() if line)}


def pull(config: Config, store: Store, remote: str, say: Callable[[str], None]) -> list[str]:
    """Fetch the remote's runs and notes and take them in; returns the local names of the runs that changed."""
    store.remote("fetch", "--no-tags", "--quiet", remote, f"+{RUN_REF.format(run='*')}:{INCOMING}/runs/*",
              f"+refs/heads/evolve/*:{INCOMING}/heads/*", f"+refs/notes/evolve*:{INCOMING}/notes/evolve*")
    changed = []
    for ref in sorted(_refs(store, f"{INCOMING}/runs/")):
        theirs = store.get_meta(ref)
        name = ref.rsplit("/", 1)[-1]
        local = _local_name(store, name, theirs, say)
        added = _take_run(store, name, local, theirs, say)
        if added:
            changed.append(local)
            say(f"run {local}: {added} candidate(s) from {remote}" + (f" (its run {name})" if local != name else ""))
    for notes in (NOTES_REF, REPLIES_REF):
        incoming = f"{INCOMING}/notes/{notes.rsplit('/', 1)[-1]}"
        if store.rev_parse(incoming) is None:
            continue
        if store.rev_parse(notes) is None:
            store.git("update-ref", notes, incoming)
        else:
            store.git("notes", "--ref", notes, "merge", "--quiet", "-s", "cat_sort_uniq", incoming, env=IDENTITY)
    reconcile_best(config, store, say)
    return changed


def _local_name(store: Store, name: str, theirs: dict[str, Any] | None, say: Callable[[str], None]) -> str:
    """The name this clone knows their run by: its own. Where a run of this clone holds it, the remote's
    came first, so this clone's run moves aside to `<name>-<clone>` (names then agree in every clone);
    where another clone's run holds it here, theirs comes in as `<name>-<their clone>`."""
    mine = store.get_meta(RUN_REF.format(run=name))
    if mine is None or _identity(mine) == _identity(theirs):
        return name
    if is_mine(mine, own_clone(store)):
        moved = rename_run(store, name, f"{name}-{clone_id(store)}")
        say(f"the remote has another run named {name}: this clone's is {moved} from now on")
        return name
    other = f"{name}-{(theirs or {}).get('clone', 'remote')}"
    held = store.get_meta(RUN_REF.format(run=other))
    if held is not None and _identity(held) != _identity(theirs):
        raise StoreError(f"run {name!r} from the remote clashes with runs {name!r} and {other!r} here")
    return other


def _take_run(store: Store, name: str, local: str, theirs: dict[str, Any] | None,
              say: Callable[[str], None]) -> int:
    """Their run's record and candidate branches under `local`; returns how many candidates were new."""
    if store.get_meta(RUN_REF.format(run=local)) is None and theirs is not None:
        store.set_meta(RUN_REF.format(run=local), {**theirs, "run": local})
    mine = _refs(store, f"refs/heads/evolve/{local}/")
    added = 0
    for ref, commit in _refs(store, f"{INCOMING}/heads/{name}/").items():
        target = f"refs/heads/evolve/{local}/{ref.rsplit('/', 1)[-1]}"
        if target not in mine:
            store.git("update-ref", target, commit, "0" * 40)
            added += 1
        elif mine[target] != commit:
            say(f"warning: {target} differs from the remote's; kept this clone's (a run has one writer)")
    return added


def push(config: Config, store: Store, remote: str, say: Callable[[str], None]) -> list[str]:
    """Pull (which also moves aside a run of this clone whose name the remote gives to another), then push
    this clone's runs and the notes; returns the runs pushed."""
    pull(config, store, remote, say)
    pushed = own_runs(store)
    refspecs = [spec for run in pushed for spec in (f"{RUN_REF.format(run=run)}:{RUN_REF.format(run=run)}",
                                                    f"refs/heads/evolve/{run}/*:refs/heads/evolve/{run}/*")]
    refspecs += [f"{notes}:{notes}" for notes in (NOTES_REF, REPLIES_REF) if store.rev_parse(notes)]
    if refspecs:
        store.remote("push", "--quiet", remote, *refspecs)
    return pushed


def rename_run(store: Store, old: str, new: str) -> str:
    """Move a run's record and branches to a new name (notes and `best` follow commits: untouched)."""
    if store.get_meta(RUN_REF.format(run=new)) is not None:
        raise StoreError(f"cannot rename run {old!r}: {new!r} exists")
    record = store.get_meta(RUN_REF.format(run=old)) or {}
    store.set_meta(RUN_REF.format(run=new), {**record, "run": new})
    for ref, commit in _refs(store, f"refs/heads/evolve/{old}/").items():
        store.git("update-ref", f"refs/heads/evolve/{new}/{ref.rsplit('/', 1)[-1]}", commit, "0" * 40)
        store.git("update-ref", "-d", ref, commit)
    store.git("update-ref", "-d", RUN_REF.format(run=old))
    return new


def reconcile_best(config: Config, store: Store, say: Callable[[str], None]) -> None:
    """`best` decided again over every run of the problem by the engine's own rule, run after run
    (`Recorder.update_best`: it moves only past a candidate that today's judge on these devices measured
    as better; a result of another judge or device yields)."""

    held = store.rev_parse(BEST_REF)
    for run in store.runs(config.problem.kernel_dir):
        recorder = recorder_for(config, store, run)
        if recorder is not None:
            recorder(store.snapshot(run)).update_best()
    now = store.rev_parse(BEST_REF)
    if now != held and now is not None:
        say(f"best: {now[:12]} (the best of every run of this problem)")


def cmd_share(args: argparse.Namespace) -> int:
    """`evolve pull` / `evolve push`, holding the repository's lock (never beside a running engine)."""

    config, store = open_repo(args)
    store.lock()
    try:
        say = print
        if args.verb == "pull":
            changed = pull(config, store, args.remote, say)
            print(f"pulled from {args.remote}: " + (", ".join(changed) if changed else "nothing new"))
        else:
            pushed = push(config, store, args.remote, say)
            print(f"pushed to {args.remote}: " + (", ".join(pushed) if pushed else "no run of this clone"))
    finally:
        store.unlock()
    return 0


def add_verb(verb: Verb) -> None:
    for name, what in (("pull", "take in the runs, results and `best` of a git remote"),
                       ("push", "send this clone's runs and results to a git remote (pulls first)")):
        p = verb(name, what, f"{what[0].upper() + what[1:]}: each run's record, its candidates' branches and the "
                 "notes (merged, never overwritten); `best` is then the best of every run of the problem. A clone "
                 "resumes only its own runs. Not while `evolve start` runs in the repository.")
        p.add_argument("remote", nargs="?", default="origin", help="the git remote (default: origin)")
        p.set_defaults(func=cmd_share)
