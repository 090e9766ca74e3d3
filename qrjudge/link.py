"""The judge's end of the runner: the process it starts (qrjudge/runner.py, confined, with the compile cache's
server beside it where there is one), the pipes it talks over, and its end, nothing of it left.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from qrjudge import wire
from qrjudge.verdict import Verdict


class Runner:
    """The runner process and its two pipes."""

    def __init__(self, args: argparse.Namespace) -> None:
        to_runner, self._theirs_in = os.pipe()[::-1]
        self._theirs_out, from_runner = os.pipe()[::-1]
        here = Path.cwd()  # the judge's own directory: the shared buffers, and the runner's scratch in it
        argv = [sys.executable, "-m", "qrjudge.runner", "--ctl-in", str(self._theirs_in), "--ctl-out",
                str(self._theirs_out), "--writable", str(here)]
        argv += ["--baseline"] if args.baseline else ["--kernel-dir", str(args.kernel_dir.resolve())]
        scratch = here / "runner"
        # the runner's ends of the compile cache's pipes; its compiles read neither this directory nor the candidate's
        compiles = [] if args.baseline else compile_server((str(here), str(args.kernel_dir.resolve())))
        argv += ["--nvrtc-out", str(compiles[0]), "--nvrtc-in", str(compiles[1])] if compiles else []
        self.proc = subprocess.Popen(argv, cwd=scratch, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, pass_fds=(self._theirs_in, self._theirs_out, *compiles),
                                     env=runner_env(scratch))
        self._pid: int | None = None
        for fd in (self._theirs_in, self._theirs_out, *compiles):
            os.close(fd)
        self.to_runner = to_runner
        # Blocking, never polling: the judge waits while the candidate is timed, and a judge spinning on the
        # CPU core (or the hyperthread) the runner's launches come from slows them.
        self.reader = wire.LineReader(from_runner)
        self.nonces = random.SystemRandom()
        self.tail: list[bytes] = []
        self.forwarders = [threading.Thread(target=wire.forward, args=(stream, self.tail, 40), daemon=True)
                           for stream in (self.proc.stdout, self.proc.stderr)]
        for thread in self.forwarders:
            thread.start()

    @property
    def pid(self) -> int:
        """The process that runs the candidate: the confined child of the one the judge started (its PID
        namespace's first process, qrjudge/isolation.py), found once it has started."""
        if self._pid is None:
            self._pid = _only_child(self.proc.pid) or self.proc.pid
        return self._pid

    def ask(self, message: dict[str, Any], where: str) -> dict[str, Any]:
        """Send one message and read the reply."""
        return self.reply(self.post(message), where)

    def post(self, message: dict[str, Any]) -> int | None:
        """Send one message; returns its secret nonce (None if the runner is gone: `reply` says how)."""
        nonce = self.nonces.getrandbits(64)
        try:
            wire.send(self.to_runner, {**message, "nonce": nonce})
        except OSError:
            return None
        return nonce

    def kept(self, nonce: int | None) -> None:
        """After a call's `done`: the judge has what it checks of the outputs, and the runner may go on."""
        if nonce is not None:
            with contextlib.suppress(OSError):  # a runner gone by now: `reply` says how
                wire.send(self.to_runner, {"kept": True, "nonce": nonce})

    def reply(self, nonce: int | None, where: str) -> dict[str, Any]:
        """The reply to the message sent with `nonce`. A dead runner, a reply that is not a JSON object, a
        reply without this message's nonce, or anything more than one reply ends the evaluation."""
        reply = self.line(nonce, where)
        if self.reader.pending():
            raise Verdict("rejected", f"{where}: a reply the runner did not write reached the judge (forged)")
        return reply

    def line(self, nonce: int | None, where: str) -> dict[str, Any]:
        """The next line from the runner, which must answer the message sent with `nonce` (a call's `done`
        line comes before its reply)."""
        try:
            line = self.reader.readline() if nonce is not None else b""
        except OSError:
            line = b""
        if not line:
            code = self.proc.wait()
            how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
            raise Verdict("crash", f"the candidate's process died {where} ({how}) without a reply",
                          log=self.log())
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            reply = None
        if not isinstance(reply, dict):
            raise Verdict("rejected", f"{where}: the candidate's process sent a malformed reply")
        if reply.get("nonce") != nonce:
            raise Verdict("rejected", f"{where}: a reply the runner did not write reached the judge (forged)")
        return reply

    def log(self) -> str:
        return b"".join(self.tail).decode("utf-8", "replace")[-3000:]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()

    def end(self, limit_s: float = 10.0) -> None:
        """Killed, and nothing of it left: the confined process is its PID namespace's init, whose exit the
        kernel completes only once every process of the namespace is gone (their CUDA contexts with them)."""
        confined = self.pid
        self.kill()
        self.proc.wait()
        deadline = time.monotonic() + limit_s
        while _running(confined):
            if time.monotonic() > deadline:
                raise Verdict("crash", "the candidate's process outlived its kill")
            time.sleep(0.005)

    def drain(self) -> None:
        """Wait (a second at most) for what it printed last, which belongs in the log: its output ends when
        it has exited, CUDA context and all."""
        for thread in self.forwarders:
            thread.join(timeout=1)


def compile_server(hidden: tuple[str, ...] = ()) -> list[int]:
    """The compile cache's server (qrjudge/nvrtc_cache.py), started beside the runner when EVOLVE_NVRTC_CACHE
    names a directory; the runner's ends of its pipes (request, reply), or none. `hidden`: the directories its
    compiles must not read (`nvrtc_cache.sealed`): the runner's and the candidate's."""
    cache = os.environ.get("EVOLVE_NVRTC_CACHE", "")
    if not cache or not os.path.isdir(cache) or os.environ.get("EVOLVE_RUNNER_CONFINE") == "off":
        return []  # (an unconfined runner could write the cache itself)
    from qrjudge.nvrtc_cache import LOG

    to_server, requests = os.pipe()[::-1]
    replies, from_server = os.pipe()[::-1]
    argv = [sys.executable, "-m", "qrjudge.nvrtc_cache", "--req-in", str(requests), "--rep-out", str(replies),
            "--cache", cache, *(f"--hide={path}" for path in hidden)]
    with open(os.path.join(cache, LOG), "ab") as log:  # why a server stopped, for the next evaluation to say
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                         pass_fds=(requests, replies))
    os.close(requests)
    os.close(replies)
    return [to_server, from_server]


def runner_env(scratch: Path) -> dict[str, str]:
    """The runner's environment: the judge's, with every place a library writes (homes, caches, temporary
    files) inside the runner's scratch, the one directory it may write besides the shared buffers."""
    env = dict(os.environ)  # (names with a dot: the scratch is the runner's working directory, on its sys.path)
    for name, sub in (("HOME", ".home"), ("TMPDIR", ".tmp"), ("XDG_CACHE_HOME", ".cache"), ("CUPY_CACHE_DIR", ".cupy"),
                      ("TORCH_EXTENSIONS_DIR", ".torch_extensions"), ("TRITON_CACHE_DIR", ".triton"),
                      ("CUDA_CACHE_PATH", ".nv")):
        (scratch / sub).mkdir(parents=True, exist_ok=True)
        env[name] = str(scratch / sub)
    return env


def _running(pid: int) -> bool:
    """Whether process `pid` exists and has not exited (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _only_child(pid: int) -> int | None:
    """The first child of process `pid`, from /proc (None if it has none yet or /proc does not say)."""
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                children = f.read().split()
            if children:
                return int(children[0])
    except (OSError, ValueError):
        pass
    return None
