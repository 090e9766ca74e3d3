"""Evaluation: run the evaluator on one candidate, in isolation, and map every outcome to a status.

The candidate's kernel directory and the evaluator's files (from the run's base commit, or the harness
shipped with evolve) are materialised in a temporary directory; the evaluator runs there as a subprocess
in its own process group, with an environment that carries no secrets, pinned to one GPU slot, and is
killed with its whole group at the timeout. Its last JSON line on stdout is the result. Called by the
engine; returns plain dicts that the engine appends to the notes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evolver.config import Config
from evolver.store import Store

# what an evaluator may report; the engine adds patch_failed and llm_error for attempts that made no code
EVALUATOR_STATUSES = ("ok", "incorrect", "compile_error", "timeout", "crash", "rejected")
# The evaluator sees only these variables (plus CUDA_VISIBLE_DEVICES): no API keys, tokens or passwords.
ENV_ALLOW = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TERM", "USER", "LOGNAME", "SHELL",
             "PYTHONPATH", "PYTHONHASHSEED", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
             "CUPY_CACHE_DIR", "TRITON_CACHE_DIR", "TORCH_HOME", "NVIDIA_DRIVER_CAPABILITIES",
             "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS", "NCCL_NVLS_ENABLE",
             "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")
LOG_TAIL = 4000


@dataclass(frozen=True)
class Slot:
    index: int
    gpu: int | None  # CUDA_VISIBLE_DEVICES for this slot; None on a CPU-only evaluator
    fingerprint: str


def scrubbed_env(gpu: int | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k in ENV_ALLOW and not any(word in k.upper() for word in _SECRET_WORDS)}
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = str(gpu)
    return env


def detect_gpus() -> list[tuple[int, str]]:
    """(index, "name / driver") of each GPU nvidia-smi sees, without importing torch or cupy."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index,name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    gpus = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3 and parts[0].isdigit():
            gpus.append((int(parts[0]), f"{parts[1]} / driver {parts[2]}"))
    return gpus


def cpu_fingerprint() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"cpu: {model} x{os.cpu_count()}"


def make_slots(config: Config) -> list[Slot]:
    e = config.evaluation
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
    if e.builtin and e.slots > len(gpus):
        raise EvaluationError(f"{config.path}: evaluation.slots = {e.slots} would put several evaluations on one "
                              f"of the {len(gpus)} GPU(s); the QR harness times with the device to itself (its "
                              "check for work escaping the timed stream compares wall and device time). Use "
                              "slots = 0 (one per GPU) or at most the number of GPUs")
    slots = []
    for i in range(e.slots or len(gpus)):
        gpu = gpus[i % len(gpus)]
        slots.append(Slot(i, gpu, found[gpu] if gpu is not None else cpu_fingerprint()))
    return slots


class EvaluationError(Exception):
    """The evaluator cannot run at all (configuration); str() is the message."""


def builtin_harness_dir(name: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec("harness")
    if spec is None or not spec.submodule_search_locations:
        raise EvaluationError(f"the built-in evaluator {name!r} needs the `harness` package, which is not "
                              "installed next to evolver")
    return Path(list(spec.submodule_search_locations)[0])


def _hash_dir(path: Path) -> str:
    digest = hashlib.sha1()
    for file in sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(file.relative_to(path).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


class Evaluator:
    """Runs the configured evaluator on candidates; `version` identifies the judge for the cache."""

    def __init__(self, config: Config, store: Store, base: str) -> None:
        self.config = config
        self.store = store
        self.base = base
        e = config.evaluation
        parts = [e.builtin or "", e.command or ""]
        if e.builtin:
            self.harness_dir: Path | None = builtin_harness_dir(e.builtin)
            parts.append(_hash_dir(self.harness_dir))
        else:
            self.harness_dir = None
            for path in e.files:
                entry = store.tree_entry(base, path)
                if entry is None:
                    raise EvaluationError(f"{config.path}: evaluation.files: {path!r} is not in the run's base "
                                          f"commit {base[:10]}; commit it first")
                parts.append(f"{path}={entry}")
        self._parts = parts
        self.version = self.version_for(e.mode)
        self._prestarted: dict[int, _Prestarted] = {}  # slot index -> the process its next evaluation uses

    def version_for(self, mode: str) -> str:
        """The judge's identity in `mode`: scores of different versions are never compared."""
        return hashlib.sha1("\0".join([*self._parts, mode]).encode()).hexdigest()[:12]

    def _command(self, kernel_dir: Path, mode: str) -> list[str]:
        e = self.config.evaluation
        if e.builtin:
            return [sys.executable, "-m", f"harness.{e.builtin}", "--kernel-dir", str(kernel_dir), "--mode", mode]
        values = {"{python}": sys.executable, "{kernel_dir}": str(kernel_dir), "{mode}": mode}
        out = []
        for token in shlex.split(e.command or ""):
            for key, value in values.items():
                token = token.replace(key, value)
            out.append(token)
        return out

    def prepare_judge(self, dest: Path) -> tuple[Path, Path]:
        """The evaluator's own files under `dest`; (working directory, where the kernel directory goes)."""
        cfg = self.config
        if cfg.evaluation.files:
            self.store.archive(self.base, list(cfg.evaluation.files), dest)
        if self.harness_dir is not None:
            shutil.copytree(self.harness_dir, dest / "harness", ignore=shutil.ignore_patterns("__pycache__"))
            return dest, dest / cfg.problem.kernel_dir
        workdir = dest / cfg.problem_dir if cfg.problem_dir else dest
        workdir.mkdir(parents=True, exist_ok=True)
        return workdir, dest / cfg.problem.kernel_dir

    def materialise(self, commit: str, dest: Path) -> tuple[Path, Path]:
        """(working directory, kernel directory) of the candidate under `dest`."""
        self.store.archive(commit, [self.config.problem.kernel_dir], dest)
        return self.prepare_judge(dest)

    async def evaluate(self, commit: str, slot: Slot, mode: str | None = None) -> dict[str, Any]:
        mode = mode or self.config.evaluation.mode
        started = time.monotonic()
        if self.config.evaluation.prestart and mode == self.config.evaluation.mode:
            result = await self._evaluate_prestarted(commit, slot, mode)
        else:
            with tempfile.TemporaryDirectory(prefix="evolve-eval-") as tmp:
                workdir, kernel_dir = self.materialise(commit, Path(tmp))
                result = await run_evaluator(self._command(kernel_dir, mode), workdir, scrubbed_env(slot.gpu),
                                             self.config.evaluation.timeout_s)
        result.update(harness=self.version_for(mode), gpu=slot.fingerprint,
                      duration_s=round(time.monotonic() - started, 3))
        return result

    # -- prestart: the next evaluation's process starts (imports torch, say) while this one runs -----------

    async def _prestart(self, slot: Slot, mode: str) -> _Prestarted:
        tmp = tempfile.TemporaryDirectory(prefix="evolve-eval-")
        workdir, kernel_dir = self.prepare_judge(Path(tmp.name))
        argv = self._command(kernel_dir, mode) + (["--prestart"] if self.harness_dir is not None else [])
        proc = await spawn(argv, workdir, scrubbed_env(slot.gpu), with_stdin=True)
        return _Prestarted(proc, tmp)

    async def _evaluate_prestarted(self, commit: str, slot: Slot, mode: str) -> dict[str, Any]:
        ready = self._prestarted.pop(slot.index, None)
        if ready is None or isinstance(ready.proc, dict) or ready.proc.returncode is not None:
            if ready is not None:
                ready.discard()
            ready = await self._prestart(slot, mode)
        self._prestarted[slot.index] = await self._prestart(slot, mode)  # warms up while this one runs
        try:
            if isinstance(ready.proc, dict):
                return ready.proc  # the evaluator could not be started at all
            self.store.archive(commit, [self.config.problem.kernel_dir], ready.dest)
            return await collect(ready.proc, self.config.evaluation.timeout_s, go=b"go\n")
        finally:
            ready.discard()

    async def close(self) -> None:
        """Stop the prestarted processes that no candidate will use."""
        for ready in self._prestarted.values():
            ready.discard()
            if not isinstance(ready.proc, dict):
                await ready.proc.wait()
        self._prestarted.clear()


@dataclass
class _Prestarted:
    proc: asyncio.subprocess.Process | dict[str, Any]  # a dict: the result of a process that did not start
    tmp: tempfile.TemporaryDirectory[str]  # the evaluator's files now, the candidate's kernel at the go

    @property
    def dest(self) -> Path:
        return Path(self.tmp.name)

    def discard(self) -> None:
        if not isinstance(self.proc, dict) and self.proc.returncode is None:
            _kill_group(self.proc.pid)
        self.tmp.cleanup()


async def run_evaluator(argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float) -> dict[str, Any]:
    """Run one evaluator process group to completion or timeout; map what happened to a result."""
    proc = await spawn(argv, cwd, env)
    return proc if isinstance(proc, dict) else await collect(proc, timeout_s)


async def spawn(argv: list[str], cwd: Path, env: dict[str, str],
                with_stdin: bool = False) -> asyncio.subprocess.Process | dict[str, Any]:
    """The evaluator's process, in its own process group; a failure result if it cannot start."""
    try:
        return await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE if with_stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return {"status": "crash", "score": None, "error": f"cannot start evaluator {argv[0]!r}: {exc.strerror}"}


async def collect(proc: asyncio.subprocess.Process, timeout_s: float, go: bytes | None = None) -> dict[str, Any]:
    """Wait for the evaluator (after sending `go` to a prestarted one) and map what happened to a result."""
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(go), timeout_s)
    except asyncio.TimeoutError:
        _kill_group(proc.pid)
        await proc.wait()
        return {"status": "timeout", "score": None,
                "error": f"evaluator still running after {timeout_s:g} s; its process group was killed"}
    except asyncio.CancelledError:
        _kill_group(proc.pid)
        raise
    _kill_group(proc.pid)  # nothing the candidate started may outlive its evaluation
    return parse_result(stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"), proc.returncode)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def parse_result(stdout: str, stderr: str, returncode: int | None) -> dict[str, Any]:
    """The evaluator's last JSON object line, checked; anything else becomes a failure status."""
    found: dict[str, Any] | None = None
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                found = value
                break
    tail = stderr[-LOG_TAIL:]
    if found is None:
        how = (f"killed by {signal.Signals(-returncode).name}" if returncode and returncode < 0
               else f"exit code {returncode}")
        return {"status": "crash", "score": None, "error": f"evaluator printed no JSON result ({how})", "log": tail}
    status = found.pop("status", None)
    score = found.pop("score", None)
    error = found.pop("error", None)
    result: dict[str, Any] = {"status": status, "score": None, "details": found}
    if error:
        result["error"] = str(error)[:2000]
    if status not in EVALUATOR_STATUSES:
        result.update(status="crash", error=f"evaluator reported an unknown status {status!r}")
    elif status == "ok":
        if not isinstance(score, (int, float)) or isinstance(score, bool) or not score > 0 or score != score:
            result.update(status="crash", error=f"evaluator said ok but gave no positive score ({score!r})")
        elif returncode not in (0, None):
            result.update(status="crash", error=f"evaluator said ok but exited with code {returncode}")
        else:
            result["score"] = float(score)
    if result["status"] != "ok":
        result["log"] = tail
    return result
