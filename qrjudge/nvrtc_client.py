"""The compile cache's runner side (the server: qrjudge/nvrtc_cache.py): CuPy's NVRTC call replaced, before any
candidate code runs, by a request to the judge's compile server over a pipe pair; the binary it names is read from
the cache (read-only here). Whatever goes wrong with the server, the call compiles in the runner as before.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

from qrjudge import wire
from qrjudge.nvrtc_cache import LOG

CUPY_NAME = re.compile(r"[0-9a-f]{40}(\.cubin|\.ltoir)?\.cu")  # how CuPy names a program (`program_name`)


class Client:
    """The runner's end of the pipes. A candidate may compile from several threads: each request carries an id,
    one waiting thread at a time reads the replies and hands each to the thread that asked (`_reply`)."""

    def __init__(self, fd_out: int, fd_in: int) -> None:
        self.fd_out, self.reader = fd_out, wire.LineReader(fd_in)
        self.sending, self.lock = threading.Lock(), threading.Condition()
        self.replies: dict[int, dict[str, Any]] = {}
        self.asked, self.reading, self.alive = 0, False, True
        self.served = self.compiled = 0  # entries read from the cache, entries the server compiled
        self.foreseen = 0  # of those, compiled on a guess before this runner asked (qrjudge/foresight.py)
        self.seconds = 0.0
        self.why = ""  # the last reason a compile was not served (shown in the verdict)

    def ask(self, request: dict[str, Any]) -> tuple[bytes, Any] | None:
        began = time.monotonic()
        reply: Any = None
        try:
            reply = self._exchange(request)
            if reply is None:  # the server is gone
                return None
            if "error" in reply:
                self.why = str(reply["error"])[:200]
                return None
            binary = Path(reply["path"]).read_bytes()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self._failed(exc, reply)
            return None
        with self.lock:
            self.seconds += time.monotonic() - began
            self.served += bool(reply.get("hit"))
            self.compiled += not reply.get("hit")
            self.foreseen += bool(reply.get("foreseen"))
        return binary, reply.get("mapping")

    def quiet(self) -> None:
        """No foreseen compile left in the server, running or to come (its reply says so): the runner is about to
        time the candidate. A compile the runner asks for is still served."""
        try:
            self._exchange({"quiet": True})
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self._failed(exc, None)

    def _exchange(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """`message` sent under an id of its own, and the server's reply to it (None: the server is gone)."""
        with self.lock:
            if not self.alive:
                return None
            self.asked += 1
            mine = self.asked
        with self.sending:
            wire.send(self.fd_out, {**message, "id": mine})
        return self._reply(mine)

    def _failed(self, exc: Exception, reply: Any) -> None:
        with self.lock:
            self.alive = False  # a server that failed once is not asked again
            self.lock.notify_all()
        self.why = f"{type(exc).__name__}: {str(exc)[:100]} (reply: {str(reply)[:60]}); {self.last_said()}"

    def _reply(self, mine: int) -> dict[str, Any] | None:
        """The server's reply to request `mine` (None once the server has failed): the thread that reads the pipe
        files every reply it reads under its id, until its own comes; the others wait to be handed theirs."""
        with self.lock:
            while mine not in self.replies:
                if not self.alive:
                    return None
                if self.reading:
                    self.lock.wait()
                    continue
                self.reading = True
                self.lock.release()
                try:
                    reply = json.loads(self.reader.readline() or b"null")
                finally:
                    self.lock.acquire()
                    self.reading = False
                    self.lock.notify_all()
                if not isinstance(reply, dict) or not isinstance(reply.get("id"), int):
                    raise ValueError("not a reply")
                self.replies[reply["id"]] = reply
            return self.replies.pop(mine)

    def last_said(self) -> str:
        """What the servers' log last says (why a compile server stopped, or its last line)."""
        try:
            lines = (Path(os.environ.get("EVOLVE_NVRTC_CACHE", "")) / LOG).read_bytes().splitlines()
        except OSError:
            return "no server log"
        stops = [line for line in lines if b": stopped: " in line] or lines
        return "server: " + (stops[-1].decode("utf-8", "replace")[:160] if stops else "(said nothing)")

    def stats(self) -> dict[str, Any]:
        return {"hits": self.served, "compiled": self.compiled, "foreseen": self.foreseen,
                "seconds": round(self.seconds, 3),
                **({"why": self.why} if self.why else {})}


def program_name(filename: str) -> str:
    """The name the server compiles a source under: CuPy names its program after its own cache key (a hash of the
    source and options: `<40 hex digits>.cubin.cu`), so that two requests would differ there wherever they differ at
    all, and a request foreseen from an earlier one (qrjudge/foresight.py) could never be the one asked for. The
    name reaches the binary only through `__FILE__` (and NVRTC's messages, which a failing compile gets from the
    runner's own compile): one name serves them all. Any other name is the candidate's, kept."""
    return "kernel.cu" if CUPY_NAME.fullmatch(filename) else filename


def install(fd_out: int, fd_in: int) -> Client:
    """CuPy's NVRTC compiles go to the server first (the runner's `main`, before any candidate code)."""
    from cupy.cuda import compiler

    client = Client(fd_out, fd_in)
    local = compiler._compile_using_nvrtc_no_warning

    def served(source: str, options: Any = (), arch: Any = None, filename: str = "kern.cu",
               name_expressions: Any = None, log_stream: Any = None, cache_in_memory: bool = False,
               jitify: Any = None, method: Any = None) -> Any:
        got = None
        if log_stream is None and isinstance(source, str):  # a caller reading NVRTC's log compiles here
            got = client.ask({"source": source, "options": [str(o) for o in options], "arch": arch,
                              "filename": program_name(filename), "name_expressions":
                              None if name_expressions is None else [str(n) for n in name_expressions],
                              "cache_in_memory": bool(cache_in_memory), "jitify": jitify, "method": method})
        if got is None:
            return local(source, options, arch, filename, name_expressions, log_stream, cache_in_memory, jitify,
                         method)
        return got

    compiler._compile_using_nvrtc_no_warning = served
    return client
