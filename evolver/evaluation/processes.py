"""An evaluator's process, run so that nothing outlives it and nothing it prints can flood the engine: its
own session and process group, output read with a cap, every process carrying its tag killed at the end,
and its last JSON line mapped to a result (`parse_result`)."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evolver.records.results import EVALUATOR_STATUSES

LOG_TAIL = 4000
TAG = "EVOLVE_EVALUATION"  # in every evaluation's environment: how its stray processes are found
STDOUT_CAP, STDERR_CAP = 1 << 20, 256 << 10  # bytes of an evaluator's output kept (the tail)
DETAILS_CAP = 64 << 10  # a result's details beyond this (as JSON) are dropped: notes stay small
GRACE_S = 2.0  # after the evaluator exits, how long its output pipes may stay open


def kill_tagged(prefix: str) -> int:
    """SIGKILL every process of this user whose environment carries a tag starting with `prefix`."""
    needle = f"{TAG}={prefix}".encode()
    killed = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if any(item.startswith(needle) for item in f.read().split(b"\0")):
                    os.kill(int(entry), signal.SIGKILL)
                    killed += 1
        except (OSError, ValueError):
            continue
    return killed


async def run_evaluator(argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float) -> dict[str, Any]:
    """Run one evaluator process (not contained: tests and tools) to completion or timeout."""
    tag = env.setdefault(TAG, "evolve-eval-direct-" + secrets.token_hex(8))
    try:
        return await collect(await spawn(argv, cwd, env), timeout_s, tag)
    except EvaluatorStartError as exc:
        return {"status": "crash", "score": None, "error": str(exc)}


class EvaluatorStartError(Exception):
    """The evaluator's process could not be started; str() says why."""


async def spawn(argv: list[str], cwd: Path, env: dict[str, str], with_stdin: bool = False) -> asyncio.subprocess.Process:
    """The evaluator's process, in its own process group."""
    try:
        return await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE if with_stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise EvaluatorStartError(f"cannot start evaluator {argv[0]!r}: {exc.strerror}") from None


async def _tail(stream: asyncio.StreamReader | None, cap: int, echo: Callable[[bytes], None] | None = None) -> bytes:
    """Everything a pipe delivers until it closes, keeping only the last `cap` bytes (and handing each chunk to
    `echo` as it comes, when given)."""
    kept = b""
    while stream is not None:
        chunk = await stream.read(65536)
        if not chunk:
            break
        if echo is not None:
            echo(chunk)
        kept = (kept + chunk)[-cap:]
    return kept


async def collect(proc: asyncio.subprocess.Process, timeout_s: float, tag: str | None,
                  go: bytes | None = None, echo: Callable[[bytes], None] | None = None) -> dict[str, Any]:
    """Wait for the evaluator (after sending `go` to a prestarted one), end every process it left (its group,
    and those carrying `tag`), and map what happened to a result. A process that keeps the output pipes open
    after the evaluator exited is killed, not waited for. `echo` sees its stderr as it comes."""
    readers = [asyncio.ensure_future(_tail(proc.stdout, STDOUT_CAP)),
               asyncio.ensure_future(_tail(proc.stderr, STDERR_CAP, echo))]
    timed_out = False
    try:
        if go is not None and proc.stdin is not None:
            try:
                proc.stdin.write(go)
                await proc.stdin.drain()
                proc.stdin.close()
            except (BrokenPipeError, ConnectionResetError):
                pass  # it died while waiting: its exit status says how
        deadline = time.monotonic() + timeout_s
        while proc.returncode is None and time.monotonic() < deadline:  # not proc.wait(): it also waits for
            await asyncio.sleep(0.05)  # the pipes to close, which a child holding them open would delay forever
        timed_out = proc.returncode is None
    finally:  # also when cancelled: nothing the candidate started may outlive its evaluation
        kill_group(proc.pid)
        if tag:
            kill_tagged(tag)
        _, late = await asyncio.wait(readers, timeout=GRACE_S)
        for reader in late:
            reader.cancel()
        await proc.wait()
    if timed_out:
        return {"status": "timeout", "score": None,
                "error": f"evaluator still running after {timeout_s:g} s; its processes were killed"}
    stdout, stderr = (r.result() if r.done() and not r.cancelled() else b"" for r in readers)
    return parse_result(stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"), proc.returncode)


def kill_group(pid: int) -> None:
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
    if len(json.dumps(found, default=str)) > DETAILS_CAP:
        found = {"dropped": f"the details were larger than {DETAILS_CAP} bytes"}
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
