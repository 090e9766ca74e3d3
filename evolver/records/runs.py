"""A run's record (`refs/evolve/runs/<run>`, a JSON blob: run, base, created, kernel_dir, clone) and whose it
is: which run a verb means, the commit it evolves from, and whether this clone made it (a run has one writer,
the clone that created it; `evolve pull` brings others' runs, which this clone shows but never resumes)."""

from __future__ import annotations

import secrets
from typing import Any

from evolver.records.config import Config, ConfigError
from evolver.records.refs import RUN_REF
from evolver.records.store import Store


def own_clone(store: Store) -> str | None:
    """This clone's name, if it has created a run yet (read only: status and the TUI must not write)."""
    return store.git("config", "--get", "evolve.clone", check=False).strip() or None

def clone_id(store: Store) -> str:
    """This clone's name for the runs it creates (made once, when the first run is, in the git config)."""
    name = own_clone(store)
    if name is None:
        name = secrets.token_hex(3)
        store.git("config", "evolve.clone", name)
    return name

def is_mine(record: dict[str, Any] | None, me: str | None) -> bool:
    """Whether clone `me` (`own_clone`) created the run, as its record says: a record that names no clone (one
    pulled from a remote that wrote none, say) is nobody's here, never resumed."""
    return record is not None and me is not None and record.get("clone") == me

def own_runs(store: Store, kernel_dir: str | None = None) -> list[str]:
    """This clone's runs (of the problem whose kernel directory is `kernel_dir`), oldest first."""
    me = own_clone(store)
    return [run for run in store.runs(kernel_dir) if is_mine(store.get_meta(RUN_REF.format(run=run)), me)]


def choose_run(store: Store, config: Config, requested: str | None, new: bool) -> str:
    """The run to work on: the one asked for, the configured one, the latest, or a new one (`new`: never one that
    exists, since resuming it would be the opposite of what was asked)."""
    if requested:
        if new and requested in store.runs():
            raise ConfigError(f"--new-run --run {requested}: run {requested!r} exists; name a new run, or leave out "
                              "--new-run to resume it")
        return requested
    if config.run:
        return config.run
    # runs are per problem (another problem's are not resumed) and per clone (a pulled run has its writer)
    mine = own_runs(store, config.problem.kernel_dir)
    if mine and not new:
        return mine[-1]
    everyone = store.runs()
    n = len(everyone) + 1
    while f"r{n}" in everyone:
        n += 1
    return f"r{n}"

def run_base(store: Store, run: str | None) -> str:
    """The commit a run evolves from (its record's base); HEAD where there is no such run yet."""
    record = store.get_meta(RUN_REF.format(run=run)) if run else None
    return str((record or {}).get("base") or store.head_commit())
