"""Opening a run: which run `evolve start` works on, and the checks and set-up before the loop (the lock, the
evaluator, the run record in git). Shared by `start`, `add` and `rejudge`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evolver.evaluation.evaluate import Evaluator, make_slots
from evolver.evaluation.sandbox import protect_memory, sandbox_line
from evolver.evaluation.slots import Slot
from evolver.records.candidates import Snapshot, now
from evolver.records.config import Config
from evolver.records.refs import RUN_REF
from evolver.records.results import Recorder
from evolver.records.runs import clone_id, is_mine, own_clone
from evolver.records.store import Store


class EngineError(Exception):
    """The run cannot go on; str() is the one-line reason."""


@dataclass
class OpenRun:
    """A run opened for work: the repository locked, the evaluator ready, the run read from git."""

    base: str
    evaluator: Evaluator
    slots: list[Slot]
    snapshot: Snapshot
    recorder: Recorder


def open_run(config: Config, store: Store, run: str, create: bool, say: Callable[[str], None]) -> OpenRun:
    """Lock the repository, make the evaluator ready and read the run from git (creating it if asked).
    Everything that can refuse to run is checked before the run is written to git."""
    protect_memory()
    store.lock()
    meta = store.get_meta(RUN_REF.format(run=run))
    if meta is None and not create:
        raise EngineError(f"no run {run!r} in this repository")
    if meta is not None and meta.get("kernel_dir") != config.problem.kernel_dir:
        raise EngineError(f"run {run!r} evolves {meta.get('kernel_dir')!r}, another problem than {config.path} "
                          f"(kernel_dir {config.problem.kernel_dir!r}); choose another run name")
    if meta is not None and create and not is_mine(meta, own_clone(store)):
        raise EngineError(f"run {run!r} was made by another clone ({meta.get('clone') or 'its record names none'}); "
                          "this clone shows it (`evolve status`) but never resumes it: start a run of your own")
    base = meta["base"] if meta else store.head_commit()
    if meta is not None and not store.in_history(str(base)):
        raise EngineError(f"run {run!r} evolves from {str(base)[:10]}, a commit that is not in this clone's history "
                          "(HEAD or a branch of yours): its judge's files would come from there; check it out "
                          "or merge it first")
    if meta is None:
        for seed in config.problem.seeds:
            if store.tree_entry(base, seed) is None:
                raise EngineError(f"seed directory {seed!r} is not in the commit HEAD ({base[:10]}); commit "
                                  "it first (evolve reads seeds from git, not from the work tree)")
    evaluator = Evaluator(config, store, base)
    slots = make_slots(config)
    evaluator.check_ready(slots)
    say(sandbox_line(evaluator.sandboxed, config.evaluation.network))
    if config.evaluation.backend == "ray":
        devices = sorted({s.fingerprint for s in slots})
        say(f"evaluations: a Ray cluster at {config.evaluation.address}, {len(slots)} at once, on {', '.join(devices)}")
    confirm_mode = config.evaluation.confirm_mode
    if meta is None:
        store.set_meta(RUN_REF.format(run=run), {"run": run, "base": base, "created": now(),
                                                  "kernel_dir": config.problem.kernel_dir, "clone": clone_id(store)})
        say(f"new run {run!r} from {base[:10]}")
    snapshot = store.snapshot(run)
    recorder = Recorder(store, snapshot, evaluator.version, confirm_mode,
                        evaluator.version_for(confirm_mode) if confirm_mode else "", {s.fingerprint for s in slots},
                        say, min_gain=config.evaluation.min_gain)
    return OpenRun(base, evaluator, slots, snapshot, recorder)
