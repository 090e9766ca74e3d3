"""Evaluations on a Ray cluster (`[evaluation] backend = "ray"`, `address`).

Each evaluation is a Ray task. The engine sends the candidate and the evaluator's files as content (a tar
archive of what a local slot would lay out, never a path on the engine's machine); the worker judges it on
its own machine exactly as a local slot does - the same command, sandbox, scrubbed environment, timeout and
statuses (`command.command_for`, `command.contain`, `processes.collect`) - and returns the result with the
fingerprint of the device that judged it. The engine stays the only writer of the run's git state. A worker
or a node that dies takes only the evaluation in flight with it: Ray runs that task again on another worker
(`RETRIES`), so the kernel is never blamed for it. With `prestart`, a slot is a `WarmJudge` actor that keeps
the next evaluations' processes started and receives only the kernel directory; it also runs the slot's
evaluations in other modes (confirmations), since it holds the slot's GPU. Ray is imported here only, and
only when the backend is chosen (`pip install -e '.[ray]'`).
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import socket
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from evolver.evaluation.command import command_for, contain, run_cold
from evolver.evaluation.processes import TAG, EvaluatorStartError
from evolver.evaluation.slots import EvaluationError, Slot, cpu_fingerprint, detect_gpus
from evolver.records.config import Config

if TYPE_CHECKING:
    from evolver.evaluation.prestart import Prestarted

RETRIES = 3  # runs of a task whose worker died, on other workers, before the evaluation counts as lost
# How long the cluster may take to run a probe on each slot's resource before the run is refused (resources
# held by other jobs would otherwise keep `evolve start` waiting without a word).
PROBE_S = float(os.environ.get("EVOLVE_RAY_PROBE_S", "120"))


def connect(config: Config) -> Any:
    """The `ray` module, connected to the configured cluster; else a one-line error."""

    try:
        import ray
    except ImportError:
        raise EvaluationError(f"{config.path}: evaluation.backend = \"ray\" needs ray: pip install -e "
                              "'.[ray]'") from None
    if not ray.is_initialized():
        _reachable(config)
        try:
            ray.init(address=config.evaluation.address, log_to_driver=False, logging_level=logging.ERROR)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise EvaluationError(f"{config.path}: evaluation.address: no Ray cluster at "
                                  f"{config.evaluation.address!r} ({str(exc).splitlines()[0][:200]})") from None
    return ray


def _reachable(config: Config) -> None:
    """A `host:port` address must answer within seconds (Ray itself retries for minutes before it gives up)."""

    host, _, port = config.evaluation.address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # "auto", or a form Ray resolves itself
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise EvaluationError(f"{config.path}: evaluation.address: no Ray cluster answers at "
                              f"{config.evaluation.address!r} ({exc.strerror or exc})") from None


def _needs_gpu(config: Config) -> bool:
    return bool(config.evaluation.builtin)  # the QR judge times on a GPU of its own


def _resources(config: Config) -> dict[str, float]:
    return {"num_gpus": 1, "num_cpus": 1} if _needs_gpu(config) else {"num_cpus": 1}


def slots(config: Config) -> list[Slot]:
    """As many slots as the cluster has GPUs (CPUs for a CPU problem), or `[evaluation] slots`; each with the
    fingerprint a worker reported, which is what results measured there carry."""

    ray = connect(config)
    kind, address = "GPU" if _needs_gpu(config) else "CPU", config.evaluation.address
    offered = int(ray.cluster_resources().get(kind, 0))
    count = config.evaluation.slots or offered
    if count < 1:
        raise EvaluationError(f"the Ray cluster at {address!r} offers no {kind}")
    if count > offered:  # a slot's evaluations (or its warm judge) hold one each: the rest would wait forever
        raise EvaluationError(f"{config.path}: evaluation.slots = {count}, but the Ray cluster at {address!r} has "
                              f"{offered} {kind} for evaluations")
    probe = ray.remote(device_fingerprint).options(**_resources(config))
    probes = [probe.remote() for _ in range(count)]
    try:
        found = ray.get(probes, timeout=PROBE_S)
    except ray.exceptions.GetTimeoutError:
        for ref in probes:
            ray.cancel(ref, force=True)
        raise EvaluationError(f"the Ray cluster at {address!r} did not run a probe on each of its {count} {kind} "
                              f"within {PROBE_S:g} s: are they held by other jobs? (`ray status` says)") from None
    return [Slot(i, None, str(fingerprint)) for i, fingerprint in enumerate(found)]


class Evaluator(Protocol):
    """What the Ray backend takes of the engine's evaluator (evolver/evaluation/evaluate.py's, which picks this
    backend): the run's config, how an evaluation is laid out, and whether it is a prestarted one."""

    config: Config
    prefix: str  # its temporary directories' and processes' tag
    sandboxed: bool

    def warm(self, source: str | Path, mode: str) -> bool: ...
    def materialise(self, source: str | Path, dest: Path) -> None: ...
    def prepare_judge(self, dest: Path) -> tuple[Path, Path]: ...


class RayBackend:
    """The engine's side: lay the evaluation out, send it as content, await the worker's result. With
    `prestart`, each slot has a `WarmJudge` actor on a GPU of its own that keeps the next evaluations' processes
    started; then only the candidate's kernel directory travels."""

    def __init__(self, evaluator: Evaluator) -> None:
        self.evaluator = evaluator
        self.ray = connect(evaluator.config)
        self.task = self.ray.remote(judge_on_worker).options(max_retries=RETRIES, **_resources(evaluator.config))
        self.judges: dict[int, Any] = {}  # slot index -> its WarmJudge, made on first use

    async def evaluate(self, source: str | Path, mode: str, slot: Slot) -> dict[str, Any]:
        ev = self.evaluator
        warm = ev.warm(source, mode)
        with tempfile.TemporaryDirectory(prefix=ev.prefix) as tmp:
            root = Path(tmp)
            ev.materialise(source, root)
            if warm:
                ref = self._warm_judge(slot).evaluate.remote(_packed(root / ev.config.problem.kernel_dir))
            else:
                workdir, kernel_dir = ev.prepare_judge(root)
                payload, job = _packed(root), self._job(root, workdir, kernel_dir, mode)
                # A slot's warm judge holds its GPU: a task asking Ray for one would wait for it forever.
                cold = self._warm_judge(slot).judge if ev.config.evaluation.prestart else self.task
                ref = cold.remote(payload, job)
        try:
            return dict(await ref)
        except asyncio.CancelledError:
            self.ray.cancel(ref, force=True)
            raise
        except self.ray.exceptions.RayError as exc:
            return {"status": "crash", "score": None, "error": f"the Ray cluster lost this evaluation {RETRIES + 1} "
                    f"times, not the kernel's doing: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}

    def _job(self, root: Path, workdir: Path, kernel_dir: Path, mode: str) -> dict[str, Any]:
        ev = self.evaluator
        return {"evaluation": ev.config.evaluation, "mode": mode, "prefix": ev.prefix, "sandboxed": ev.sandboxed,
                "workdir": workdir.relative_to(root).as_posix(), "kernel": kernel_dir.relative_to(root).as_posix()}

    def _warm_judge(self, slot: Slot) -> Any:
        if slot.index not in self.judges:
            ev = self.evaluator
            with tempfile.TemporaryDirectory(prefix=ev.prefix) as tmp:  # the judge's files: the same every time
                root = Path(tmp)
                workdir, kernel_dir = ev.prepare_judge(root)
                layout, job = _packed(root), self._job(root, workdir, kernel_dir, ev.config.evaluation.mode)
            actor = self.ray.remote(WarmJudge).options(max_restarts=-1, max_task_retries=RETRIES,
                                                       **_resources(ev.config))
            self.judges[slot.index] = actor.remote(layout, job)
        return self.judges[slot.index]


def _packed(root: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(root, arcname=".")
    return buffer.getvalue()


def _unpack(payload: bytes, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(payload)) as tar:
        tar.extractall(dest, filter="data")


class WarmJudge:
    """A Ray actor on a worker: the next evaluations' processes started ahead (imports, start-up), as a local
    slot keeps them (`prestart.Waiting`); an evaluation writes the candidate's kernel directory into the
    oldest and says go. Restarted by Ray on another worker if its own dies."""

    def __init__(self, layout: bytes, job: dict[str, Any]) -> None:
        from evolver.evaluation.prestart import Waiting

        self.gpu = _assigned_gpu()
        self.layout, self.job = layout, job
        self.waiting: Waiting[None] = Waiting(self._start)  # one slot: this actor's GPU

    async def _start(self, _slot: None, _mode: str) -> Prestarted:
        from evolver.evaluation.prestart import prestart

        tmp = tempfile.TemporaryDirectory(prefix=self.job["prefix"])
        _unpack(self.layout, Path(tmp.name))
        argv, workdir, env, tag = _command(self.job, Path(tmp.name), self.gpu, prestart=True)
        return await prestart(argv, workdir, env, tmp, tag)

    async def evaluate(self, kernel: bytes) -> dict[str, Any]:
        ready = await self.waiting.take(None, self.job["mode"])
        try:
            _unpack(kernel, ready.dest / self.job["kernel"])
            result = await ready.go(self.job["evaluation"].timeout_s)
        except EvaluatorStartError as exc:
            result = {"status": "crash", "score": None, "error": str(exc)}
        finally:
            ready.discard()
        result["device"] = device_fingerprint()
        return result

    async def judge(self, payload: bytes, job: dict[str, Any]) -> dict[str, Any]:
        """An evaluation in another mode (a confirmation), started cold on this actor's own GPU."""
        return await judge_unpacked(payload, job, self.gpu)


def judge_on_worker(payload: bytes, job: dict[str, Any]) -> dict[str, Any]:
    """A Ray task: the evaluation judged as a local slot would, on the GPU Ray gave it."""
    return asyncio.run(judge_unpacked(payload, job, _assigned_gpu()))


async def judge_unpacked(payload: bytes, job: dict[str, Any], gpu: int | None) -> dict[str, Any]:
    """Unpack the evaluation on this worker and judge it, started cold; the result and the device."""

    with tempfile.TemporaryDirectory(prefix=job["prefix"]) as tmp:
        _unpack(payload, Path(tmp))
        argv, workdir, env, tag = _command(job, Path(tmp), gpu, prestart=False)
        result = await run_cold(job["evaluation"], argv, workdir, env, tag)
    result["device"] = device_fingerprint()
    return result


def _command(job: dict[str, Any], root: Path, gpu: int | None,
             prestart: bool) -> tuple[list[str], Path, dict[str, str], str | None]:
    """(argv, working directory, environment, tag to sweep for) of an evaluation laid out under `root` on
    this worker, built as a local slot builds it (`command.command_for`, `command.contain`)."""

    evaluation, workdir = job["evaluation"], root / job["workdir"]
    argv, env = contain(command_for(evaluation, root / job["kernel"], job["mode"], prestart), root, workdir, gpu,
                        job["sandboxed"], evaluation, [], job["prefix"])
    return argv, workdir, env, None if job["sandboxed"] else env[TAG]


def _assigned_gpu() -> int | None:
    """The GPU Ray gave this task or actor (None for a CPU problem)."""
    import ray

    ids = ray.get_gpu_ids()
    return int(ids[0]) if ids else None


def device_fingerprint() -> str:
    """What a worker judges on: the GPU Ray gave it, or its CPU."""

    gpu = _assigned_gpu()
    return dict(detect_gpus()).get(gpu, cpu_fingerprint()) if gpu is not None else cpu_fingerprint()
