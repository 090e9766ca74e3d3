"""Evaluation: run the evaluator on one candidate, in isolation, and map every outcome to a status.

The candidate's kernel directory and the evaluator's files (from the run's base commit, or the harness
shipped with evolve) are materialised in a temporary directory; the evaluator runs there inside the sandbox
(evolver/evaluation/sandbox.py: no view of the engine, the repository, the user's files or the network), with an
environment that carries no secrets, pinned to one GPU slot. Every process it starts carries a tag in its
environment; at the end (exit or timeout) the sandbox's PID namespace, the process group and a sweep for
the tag kill whatever is left. Output is read with a cap; the last JSON line on stdout is the result, and an
`ok` must carry what the judge promises. Called by the engine; returns plain dicts for the notes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeGuard

from evolver.evaluation import sandbox
from evolver.evaluation.builtin import PACKAGES, BuiltinMissing, builtin_judge_dir, confinement_problem, judge_specs
from evolver.evaluation.command import command_for, contain, profiled, run_cold, sandbox_choice
from evolver.evaluation.judgefiles import JudgeFiles
from evolver.evaluation.prestart import Prestarted, Waiting, prestart
from evolver.evaluation.processes import TAG, EvaluatorStartError, kill_tagged
from evolver.evaluation.slots import EvaluationError, Slot, cpu_fingerprint, detect_gpus
from evolver.records.config import Config
from evolver.records.store import Store


def make_slots(config: Config) -> list[Slot]:
    e = config.evaluation
    if e.backend == "ray":
        from evolver.evaluation.cluster import slots as cluster_slots

        return cluster_slots(config)
    found = dict(detect_gpus())
    if e.builtin and not found and e.gpus != ():
        raise EvaluationError(f"the built-in {e.builtin!r} evaluator needs a CUDA GPU, and nvidia-smi sees none "
                              "on this machine; run on a GPU machine (the CPU example is examples/sort)")
    if e.gpus is None:  # auto
        gpus: list[int | None] = list(found) or [None]
    elif e.gpus:
        missing = [g for g in e.gpus if g not in found]
        if missing:
            raise EvaluationError(f"{config.path}: evaluation.gpus lists GPU {missing[0]}, but nvidia-smi sees "
                                  f"{sorted(found) or 'no GPU'}")
        gpus = list(e.gpus)
    else:
        gpus = [None]
    per_gpu = e.per_gpu if e.builtin else 1
    if e.builtin and e.slots > len(gpus) * per_gpu:
        raise EvaluationError(f"{config.path}: evaluation.slots = {e.slots} would put more evaluations on one of "
                              f"the {len(gpus)} GPU(s) than per_gpu = {per_gpu} allows; the QR harness times with "
                              "the device to itself (evaluations sharing a GPU take turns for their timed regions: "
                              "per_gpu). Use slots = 0 (per_gpu a GPU) or at most that many")
    slots = []
    for i in range(e.slots or len(gpus) * per_gpu):
        gpu = gpus[i % len(gpus)]
        slots.append(Slot(i, gpu, found[gpu] if gpu is not None else cpu_fingerprint()))
    return slots


JUDGE_MODULES = {"qr": ("torch", "cupy")}  # what a built-in judge imports: missing, it is said once, up front


class Evaluator:
    """Runs the configured evaluator on candidates; `version` identifies the judge for the cache."""

    def __init__(self, config: Config, store: Store, base: str, purpose: str = "eval") -> None:
        self.config = config
        self.store = store
        self.base = base
        e = config.evaluation
        parts = [e.builtin or "", e.command or ""]
        self.judge: JudgeFiles | None = None
        if e.builtin:
            try:
                self.judge_dir: Path | None = builtin_judge_dir(e.builtin)
            except BuiltinMissing as exc:
                raise EvaluationError(str(exc)) from None
            self.judge = JudgeFiles(self.judge_dir)  # fixed now, for the whole run
            parts.append(self.judge.digest)
        else:
            self.judge_dir = None
            for path in e.files:
                entry = store.tree_entry(base, path)
                if entry is None:
                    raise EvaluationError(f"{config.path}: evaluation.files: {path!r} is not in the run's base "
                                          f"commit {base[:10]}; commit it first")
                parts.append(f"{path}={entry}")
        self._parts = parts
        self.version = self.version_for(e.mode)
        self.sandboxed = sandbox_choice(config)
        # temporary directories and the process tag: `evolve-eval-...` for the engine's evaluations (a starting
        # engine removes its killed predecessor's), `evolve-try-...` for `evolve try` (never touched by it)
        self.prefix = f"evolve-{purpose}-{hashlib.sha1(str(store.common_dir).encode()).hexdigest()[:10]}-"
        self.echo: Callable[[bytes], None] | None = None  # sees a directory's evaluation's stderr as it comes
        self._waiting: Waiting[Slot] = Waiting(self._prestart)  # each slot's processes for its next evaluations
        self._remote: Any = None  # the Ray backend, once an evaluation needs it

    def version_for(self, mode: str) -> str:
        """The judge's identity in `mode`: scores of different versions are never compared."""
        return hashlib.sha1("\0".join([*self._parts, mode]).encode()).hexdigest()[:12]

    def check_ready(self, slots: list[Slot]) -> None:
        """Before the first evaluation: what a killed engine left behind is removed (this engine holds the
        repository's lock, so nothing of this repository is in use), the evaluator and what it imports exist,
        and the sandbox can be built; otherwise a one-line error (never a crash blamed on a candidate)."""
        kill_tagged(self.prefix)
        for leftover in Path(tempfile.gettempdir()).glob(self.prefix + "*"):
            shutil.rmtree(leftover, ignore_errors=True)
        self.check_runnable(slots)

    def check_runnable(self, slots: list[Slot]) -> None:
        """The evaluator and what it imports exist, and the sandbox can be built; else a one-line error. (On
        a Ray cluster the workers are what counts: what one of them lacks comes back as a result.)"""
        e = self.config.evaluation
        self.check_mode(e.mode, f"{self.config.path}: evaluation.mode")
        if e.confirm_mode:
            self.check_mode(e.confirm_mode, f"{self.config.path}: evaluation.confirm_mode")
        if e.backend == "ray":
            return
        builtin = e.builtin or ""
        missing = [m for m in JUDGE_MODULES.get(builtin, ()) if importlib.util.find_spec(m) is None]
        if missing:
            raise EvaluationError(f"the built-in {builtin!r} judge needs {' and '.join(missing)}, which "
                                  f"{sys.executable} cannot import: install evolve with its gpu extra "
                                  "(pip install -e '.[gpu]', or '.[gpu-cuda13]' for the newest torch, built for CUDA 13)")
        program = self._command(Path("kernel"), self.config.evaluation.mode)[0]
        if shutil.which(program) is None:
            raise EvaluationError(f"{self.config.path}: evaluation.command: {program!r} is not a program on this "
                                  "machine (the command is split like a shell line but not run by a shell)")
        if builtin and not self.sandboxed and self.judge_dir is not None and \
                os.environ.get("EVOLVE_RUNNER_CONFINE") != "off":
            problem = confinement_problem(self.judge_dir)
            if problem:
                raise EvaluationError(f"the QR judge cannot confine the process that runs candidates on this machine "
                                      f"({problem}): its files and clock would be in their reach; EVOLVE_RUNNER_CONFINE"
                                      "=off runs it unconfined (docs/QR_CONTRACT.md, threat model)")
        if self.sandboxed:
            why = sandbox.unavailable(gpu=any(s.gpu is not None for s in slots))
            if why:
                raise EvaluationError(f"no sandbox can be built on this machine ({why}); to evaluate candidates "
                                      f'without one, set [evaluation] sandbox = "off" in {self.config.path} '
                                      "(docs/SECURITY.md says what that exposes)")

    def check_mode(self, mode: str, where: str) -> None:
        """A mode the built-in judge does not know is a one-line error naming `where` it came from (a command
        evaluator's modes are its own: whatever it is given, it says)."""
        if self.config.evaluation.builtin and self.judge_dir is not None:
            modes = judge_specs(self.judge_dir).MODES
            if mode not in modes:
                raise EvaluationError(f"{where}: {mode!r} is not a mode of the built-in "
                                      f"{self.config.evaluation.builtin!r} judge ({', '.join(modes)})")

    def _command(self, kernel_dir: Path, mode: str) -> list[str]:
        return command_for(self.config.evaluation, kernel_dir, mode)

    def _contained(self, argv: list[str], scratch: Path, workdir: Path, slot: Slot) -> tuple[list[str], dict[str, str]]:
        return contain(argv, scratch, workdir, slot.gpu, self.sandboxed, self.config.evaluation,
                       [self.store.root, self.store.common_dir], self.prefix)

    def prepare_judge(self, dest: Path) -> tuple[Path, Path]:
        """The evaluator's own files under `dest`; (working directory, where the kernel directory goes)."""
        cfg = self.config
        if cfg.evaluation.files:
            self.store.archive(self.base, list(cfg.evaluation.files), dest)
        if self.judge is not None:
            self.judge.write(dest / PACKAGES[cfg.evaluation.builtin or ""])
            return dest, dest / cfg.problem.kernel_dir
        workdir = dest / cfg.problem_dir if cfg.problem_dir else dest
        workdir.mkdir(parents=True, exist_ok=True)
        return workdir, dest / cfg.problem.kernel_dir

    async def evaluate(self, commit: str | Path, slot: Slot, mode: str | None = None) -> dict[str, Any]:
        """The result of one evaluation of a candidate (a commit) or of a kernel directory on disk
        (`evolve try`); whatever goes wrong on the way is a result too (never an exception that would end the
        evaluator's task)."""
        mode = mode or self.config.evaluation.mode
        started = time.monotonic()
        if self.judge is not None:
            self.judge.check()  # JudgeChanged ends the run: no candidate is blamed for it
        try:
            if self.config.evaluation.backend == "ray":
                result = await self._ray().evaluate(commit, mode, slot)
            elif self.warm(commit, mode):
                result = await self._evaluate_prestarted(commit, slot, mode)
            else:
                with tempfile.TemporaryDirectory(prefix=self.prefix) as tmp:
                    self.materialise(commit, Path(tmp))
                    workdir, kernel_dir = self.prepare_judge(Path(tmp))
                    argv, env = self._contained(self._command(kernel_dir, mode), Path(tmp), workdir, slot)
                    result = await run_cold(self.config.evaluation, argv, workdir, env, self.sweep(env), self.echo)
        except (OSError, ValueError, EvaluatorStartError) as exc:
            result = {"status": "crash", "score": None, "error": f"the evaluation could not run: {exc}"}
        result = self._promised(result, mode)
        result.update(harness=self.version_for(mode), gpu=result.pop("device", None) or slot.fingerprint,
                      duration_s=round(time.monotonic() - started, 3))
        return result

    def warm(self, source: str | Path, mode: str) -> TypeGuard[str]:
        """Whether an evaluation uses a prestarted process: a candidate (a commit, not `evolve try`'s
        directory), with `prestart` on, in the run's own mode, or in any with the built-in judge (its go line
        names the mode: a confirmation does not pay a judge's start either; docs/benchmarks.md has what that saves)."""
        e = self.config.evaluation
        return isinstance(source, str) and e.prestart and (mode == e.mode or self.judge is not None)

    def materialise(self, source: str | Path, dest: Path) -> None:
        """The kernel directory under `dest`, from a commit (`git archive`) or a directory (a copy)."""
        kernel_dir = self.config.problem.kernel_dir
        if isinstance(source, Path):
            shutil.copytree(source, dest / kernel_dir, ignore=shutil.ignore_patterns("__pycache__", ".git"))
        else:
            self.store.archive(source, [kernel_dir], dest)

    def _ray(self) -> Any:
        if self._remote is None:
            from evolver.evaluation.cluster import RayBackend

            self._remote = RayBackend(self)
        return self._remote

    def sweep(self, env: dict[str, str]) -> str | None:
        """The tag to sweep for once an evaluation ends: none in the sandbox, whose PID namespace ends with its
        evaluator (a /proc scan after every evaluation would be work done twice on the evaluation path)."""
        return None if self.sandboxed else env[TAG]

    def _promised(self, result: dict[str, Any], mode: str) -> dict[str, Any]:
        """An `ok` from the built-in judge must keep the promise its own `specs.incomplete` states (every test
        and shape of its mode, checked timings, the score their geomean) and name the anti-cheat version that
        judged it; anything less is a forgery or a broken judge: `crash`."""
        if result.get("status") != "ok" or self.judge_dir is None:
            return result
        details: dict[str, Any] = result.get("details") or {}
        gap = judge_specs(self.judge_dir).incomplete({**details, "score": result.get("score")}, mode)
        if gap or not isinstance(details.get("judge"), int):
            return {**result, "status": "crash", "score": None,
                    "error": f"the evaluator said ok, but not as the built-in judge promises: "
                             f"{gap or 'no anti-cheat version'}"}
        return result

    # -- prestart: the next evaluations' processes start (import torch, say) while this one runs -----------

    async def _prestart(self, slot: Slot, mode: str) -> Prestarted:
        tmp = tempfile.TemporaryDirectory(prefix=self.prefix)
        workdir, kernel_dir = self.prepare_judge(Path(tmp.name))
        argv = command_for(self.config.evaluation, kernel_dir, mode, prestart=True)
        argv, env = self._contained(argv, Path(tmp.name), workdir, slot)
        return await prestart(argv, workdir, env, tmp, self.sweep(env))

    async def prestart_slots(self, slots: list[Slot]) -> None:
        """Each slot's first process started now (where evaluations are prestarted here, not on Ray)."""
        e = self.config.evaluation
        if e.backend != "ray" and e.prestart:
            for slot in slots:
                await self._waiting.ready(slot, e.mode)

    async def _evaluate_prestarted(self, commit: str, slot: Slot, mode: str) -> dict[str, Any]:
        e = self.config.evaluation
        ready = await self._waiting.take(slot, e.mode)
        try:
            self.store.archive(commit, [self.config.problem.kernel_dir], ready.dest)
            # the built-in judge's go line names the mode (its specs.py says how): a confirmation is served too
            line = judge_specs(self.judge_dir).go_line(mode, profiled(e, mode)) if self.judge_dir else b"go\n"
            return await ready.go(e.timeout_s, line)
        finally:
            ready.discard()

    async def close(self) -> None:
        """Stop the prestarted processes that no candidate will use."""
        await self._waiting.close()
