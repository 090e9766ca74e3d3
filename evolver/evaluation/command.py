"""How an evaluator is run: its command line (the built-in judge's or the configured `command`), its environment
(an allowlist, no secrets), the sandbox around it, and a run started cold. Shared by local slots
(evaluate.py) and Ray workers (cluster.py)."""

from __future__ import annotations

import os
import secrets
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evolver.evaluation import sandbox
from evolver.evaluation.builtin import PACKAGES
from evolver.evaluation.processes import TAG, collect, spawn
from evolver.records.config import Config, EvaluationConfig

# The evaluator sees only these variables (plus CUDA_VISIBLE_DEVICES): no API keys, tokens or passwords.
ENV_ALLOW = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TERM", "USER", "LOGNAME", "SHELL",
             "PYTHONPATH", "PYTHONHASHSEED", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
             "CUPY_CACHE_DIR", "TRITON_CACHE_DIR", "TORCH_HOME", "NVIDIA_DRIVER_CAPABILITIES",
             "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS", "NCCL_NVLS_ENABLE",
             "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")


_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")


def scrubbed_env(gpu: int | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k in ENV_ALLOW and not any(word in k.upper() for word in _SECRET_WORDS)}
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = str(gpu)
    return env


def sandbox_choice(config: Config) -> bool:
    """Whether evaluations run in the sandbox: `[evaluation] sandbox`, or EVOLVE_SANDBOX=on|off."""
    override = os.environ.get("EVOLVE_SANDBOX", "").lower()
    return override == "on" if override in ("on", "off") else config.evaluation.sandbox


def command_for(e: EvaluationConfig, kernel_dir: Path, mode: str, prestart: bool = False) -> list[str]:
    """The evaluator's command line for a kernel directory, with this machine's Python (`prestart`: the
    built-in judge waits for a go line; a command configured for prestart waits on its own). The built-in
    judge profiles its confirmations, the evaluations of would-be bests: where their time goes is what the
    prompt of their children shows (evolver/search/focus.py)."""
    if e.builtin:
        return [sys.executable, "-m", PACKAGES[e.builtin], "--kernel-dir", str(kernel_dir), "--mode", mode] + \
            (["--prestart"] if prestart else []) + (["--profile"] if profiled(e, mode) else [])
    values = {"{python}": sys.executable, "{kernel_dir}": str(kernel_dir), "{mode}": mode}
    out = []
    for token in shlex.split(e.command or ""):
        for key, value in values.items():
            token = token.replace(key, value)
        out.append(token)
    return out


async def run_cold(e: EvaluationConfig, argv: list[str], workdir: Path, env: dict[str, str], tag: str | None,
                   echo: Callable[[bytes], None] | None = None) -> dict[str, Any]:
    """An evaluation started now, not prestarted: its process and its result. A `command` that opted in to
    prestart waits for a go line in every mode (a confirmation, `evolve try`), so it is sent one at once."""
    go = b"go\n" if e.prestart and not e.builtin else None
    return await collect(await spawn(argv, workdir, env, with_stdin=go is not None), e.timeout_s, tag, go=go,
                         echo=echo)


def user_dir(name: str, chosen: str = "") -> Path | None:
    """A directory of evolve's shared by every run of this user (~/.cache/evolve/NAME, or `chosen`), made if
    need be; None where it cannot be."""
    path = Path(chosen) if chosen else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "evolve" / name
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path.resolve()


def nvrtc_cache() -> Path | None:
    """The built-in judge's compile cache (qrjudge/nvrtc_cache.py: written only by the judge's own compile
    server, read-only to candidates): ~/.cache/evolve/nvrtc, or EVOLVE_NVRTC_CACHE (a directory, or "off")."""
    chosen = os.environ.get("EVOLVE_NVRTC_CACHE", "")
    return None if chosen.lower() == "off" else user_dir("nvrtc", chosen)


def gpu_locks() -> Path | None:
    """Where the judges of every evaluation on this machine's GPUs take their turns (qrjudge/gpulock.py):
    ~/.cache/evolve/gpu-locks, hidden from every candidate's process."""
    return user_dir("gpu-locks")


def profiled(e: EvaluationConfig, mode: str) -> bool:
    return bool(e.confirm_mode) and mode == e.confirm_mode


def judge_paths(e: EvaluationConfig) -> list[str]:
    """Where an evaluation's directory holds the judge's own files (relative): read-only in the sandbox."""
    return [PACKAGES[e.builtin]] if e.builtin else list(e.files)


def contain(argv: list[str], scratch: Path, workdir: Path, gpu: int | None, sandboxed: bool, e: EvaluationConfig,
            exclude: list[Path], prefix: str) -> tuple[list[str], dict[str, str]]:
    """`argv` wrapped in the sandbox (or only tied to the caller's life, sandbox off), and its environment:
    no secrets, a home and a temporary directory of its own, the tag (`Evaluator.sweep` says when to look
    for it). In the sandbox the directory is writable but for the judge's files. Also what a Ray worker does
    on its own machine (evolver/evaluation/cluster.py)."""
    env = scrubbed_env(gpu)
    env[TAG] = prefix + secrets.token_hex(8)
    for name, var in ((".home", "HOME"), (".tmp", "TMPDIR")):
        (scratch / name).mkdir(exist_ok=True)
        env[var] = str(scratch / name)
    cache = nvrtc_cache() if e.builtin and gpu is not None else None
    if cache is not None:
        env["EVOLVE_NVRTC_CACHE"] = str(cache)
    locks = gpu_locks() if e.builtin and gpu is not None else None
    if locks is not None:  # every judge on this GPU takes turns: this run's evaluations sharing it (per_gpu > 1),
        env["EVOLVE_GPU_LOCKS"] = str(locks)  # and whatever else judges there (`evolve try` beside a run, an
        if e.per_gpu == 1:  # agent's tries, another run): a lone evaluation holds it for its whole length
            env["EVOLVE_GPU_ALONE"] = "1"
    spec: dict[str, Any] = {"isolate": False}
    if sandboxed:
        spec = sandbox.spec_for(scratch, gpu=gpu is not None, network=e.network, exclude=exclude,
                                read_only=[scratch / p for p in judge_paths(e) if (scratch / p).exists()])
        spec["workdir"] = str(workdir)
        spec["rw"] += [str(p) for p in (cache, locks) if p is not None]
    return sandbox.command(argv, spec), env
