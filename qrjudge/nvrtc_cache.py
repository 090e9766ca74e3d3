"""NVRTC's compiles shared across evaluations, written only by the harness.

A candidate's CUDA source is compiled by NVRTC through CuPy in the runner, on first use: for the QR seed most of
its import and of its `full` tests (docs/benchmarks.md, "Throughput"), paid again by every candidate, although a
`tune` move or an LLM edit changes one module at most.

Shared by construction, not by trust: the cache is a directory outside any evaluation (EVOLVE_NVRTC_CACHE;
evolve keeps one per user, evolver/evaluation/command.py) that only `serve` writes. The judge starts it beside
the runner; it confines itself as the runner does (qrjudge/isolation.py: it sees nothing the runner cannot see,
no other process, no judge's file writable) but with the cache writable; the runner asks it over a pipe pair
and reads the binary it names from the cache, which the runner's own confinement leaves read-only. The key is
the SHA-256 of the whole request, NVRTC's and CuPy's versions, computed by the server: an entry is always what
NVRTC made of its key. NVRTC itself runs in a child confined once more, writable only in a directory of its own
(`compile_apart`): the request's file name and options are the candidate's, and what they make NVRTC write (a
source file at any path, a precompiled header) cannot land on an entry. A candidate can ask for any compile (as it
could run one itself), never write an entry, and nothing it asks changes what another candidate's source
compiles to.

The runner's side (`install`) replaces CuPy's NVRTC call (`cupy.cuda.compiler._compile_using_nvrtc_no_warning`,
below CuPy's own per-process cache) before any candidate code runs; whatever goes wrong with the server, the
call compiles in the runner as before (and a failing compile fails there, with CuPy's own error).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from qrjudge import isolation, wire

WORKER_S = 120.0  # a compile worker still running after this long is killed (the runner then compiles itself)
KEEP_BYTES = 2 << 30  # the cache is pruned to this, oldest first, when a server starts
TMP = ".tmp"  # the compile workers' own directories inside the cache
LOG = ".server.log"  # the servers' stderr (the judge opens it), whose last words a runner quotes


def key(request: dict[str, Any], versions: str) -> str:
    return hashlib.sha256((versions + "\0" + json.dumps(request, sort_keys=True)).encode()).hexdigest()


def prune(cache: Path, keep: int = KEEP_BYTES) -> None:
    """Remove the least recently written entries until the cache holds at most `keep` bytes (and start the
    servers' log again once it passes a megabyte)."""
    log = cache / LOG
    if log.exists() and log.stat().st_size > 1 << 20:
        log.write_bytes(b"")
    entries = []
    for path in cache.glob("*/*.bin"):
        try:
            st = path.stat()
        except OSError:
            continue
        entries.append((st.st_mtime, st.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= keep:
            break
        for stale in (path, path.with_suffix(".json")):
            stale.unlink(missing_ok=True)
        total -= size


# --- the server: the one writer -------------------------------------------------------------------------

def compile_one(request: dict[str, Any], cache: Path, versions: str) -> dict[str, Any]:
    """The entry for `request`, compiled unless the cache has it: {"path", "mapping"} or {"error"}."""
    name = key(request, versions)
    path = cache / name[:2] / f"{name}.bin"
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        return {"path": str(path), "mapping": json.loads(meta.read_text())["mapping"], "hit": True}
    compiled = compile_apart(request, cache / TMP)
    if "error" in compiled:
        return compiled
    path.parent.mkdir(exist_ok=True)
    unique = f".{os.getpid()}.{threading.get_ident()}"
    for target, data in ((meta, json.dumps({"mapping": compiled["mapping"]}).encode()),
                         (path, base64.b64decode(compiled["binary"]))):
        partial = target.with_name(target.name + unique)
        partial.write_bytes(data)
        os.replace(partial, target)  # the binary last: an entry exists once both halves do
    return {"path": str(path), "mapping": compiled["mapping"], "hit": False}


def compile_apart(request: dict[str, Any], scratch: Path) -> dict[str, Any]:
    """NVRTC run on the request in a child that can write nothing but a directory of its own: the request is the
    candidate's (its file name, its options: a precompiled header's path, say), and whatever it makes NVRTC or CuPy
    write lands there, never on an entry. {"binary" (base64), "mapping"} or {"error"}."""
    own = tempfile.mkdtemp(dir=scratch)
    out_r, out_w = os.pipe()
    child = os.fork()
    if child == 0:  # one thread, as confine needs
        code = 1
        try:
            os.close(out_r)
            isolation.confine([own], hidden=isolation.judges_only())
            os.environ["TMPDIR"] = own
            tempfile.tempdir = None
            from cupy.cuda import compiler

            try:
                binary, mapping = compiler._compile_using_nvrtc_no_warning(
                    request["source"], tuple(request["options"]), request["arch"], request["filename"],
                    request["name_expressions"], None, request["cache_in_memory"], request["jitify"],
                    request["method"])
                said: dict[str, Any] = {"binary": base64.b64encode(bytes(binary)).decode(), "mapping": mapping}
            except Exception as exc:  # the runner compiles it again itself, for CuPy's own error
                said = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            with os.fdopen(out_w, "w") as out:
                json.dump(said, out)
            code = 0
        finally:
            os._exit(code)
    os.close(out_w)
    chunks, deadline = [], time.monotonic() + WORKER_S
    with os.fdopen(out_r, "rb") as got:
        while time.monotonic() < deadline and select.select([got], [], [], deadline - time.monotonic())[0]:
            chunk = os.read(got.fileno(), 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        else:  # stuck (a compile that never ends, a lock inherited across the fork): the runner compiles itself
            os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    shutil.rmtree(own, ignore_errors=True)
    text = b"".join(chunks).decode("utf-8", "replace")
    try:
        said = json.loads(text)
    except ValueError:
        return {"error": "the compile worker ended without a result"}
    return said if isinstance(said, dict) and ("binary" in said or "error" in said) else {"error": "malformed"}


def serve(fd_in: int, fd_out: int, cache: Path) -> int:
    try:  # first, as the runner does: from here on it sees what the runner sees, and writes only the cache
        isolation.confine([str(cache)], hidden=isolation.judges_only())
    except (isolation.ConfineError, OSError) as exc:
        print(f"qrjudge.nvrtc_cache: not serving: cannot confine ({exc})", file=sys.stderr)
        return 1  # unconfined it would be a writer the candidate could reach: the runner compiles itself
    (cache / TMP).mkdir(exist_ok=True)  # the compile workers' own directories (`compile_apart`)
    for name in ("HOME", "TMPDIR", "XDG_CACHE_HOME", "CUPY_CACHE_DIR"):  # CuPy makes its disk cache's directory
        os.environ[name] = str(cache / TMP)  # at import, under a home that confinement has made read-only
    with contextlib.suppress(ImportError):  # as the runner does: torch first, which loads the CUDA libraries
        import torch  # noqa: F401  of its wheels (NVRTC among them) that CuPy then finds loaded
    from cupy import __version__ as cupy_version
    from cupy.cuda import compiler

    versions = f"nvrtc {compiler._get_nvrtc_version()} cupy {cupy_version}"
    prune(cache)
    reader = wire.LineReader(fd_in)
    while line := reader.readline():
        try:
            request = json.loads(line)
            request = {k: request[k] for k in ("source", "options", "arch", "filename", "name_expressions",
                                               "cache_in_memory", "jitify", "method")}
            reply = compile_one(request, cache, versions)
        except (ValueError, KeyError, TypeError) as exc:
            reply = {"error": f"malformed request: {exc}"}
        wire.send(fd_out, reply)
    return 0


# --- the runner's side ----------------------------------------------------------------------------------

class Client:
    """The runner's end of the pipes; one request at a time (a candidate may compile from several threads)."""

    def __init__(self, fd_out: int, fd_in: int) -> None:
        self.fd_out, self.reader, self.lock = fd_out, wire.LineReader(fd_in), threading.Lock()
        self.alive = True
        self.served = self.compiled = 0  # entries read from the cache, entries the server compiled
        self.seconds = 0.0
        self.why = ""  # the last reason a compile was not served (shown in the verdict)

    def ask(self, request: dict[str, Any]) -> tuple[bytes, Any] | None:
        with self.lock:
            if not self.alive:
                return None
            began = time.monotonic()
            reply: Any = None
            try:
                wire.send(self.fd_out, request)
                reply = json.loads(self.reader.readline() or b"null")
                if isinstance(reply, dict) and "error" in reply:
                    self.why = str(reply["error"])[:200]
                    return None
                binary = Path(reply["path"]).read_bytes()
            except (OSError, ValueError, KeyError, TypeError) as exc:
                self.alive = False  # a server that failed once is not asked again
                self.why = f"{type(exc).__name__}: {str(exc)[:100]} (reply: {str(reply)[:60]}); {self.last_said()}"
                return None
            self.seconds += time.monotonic() - began
            self.served += bool(reply.get("hit"))
            self.compiled += not reply.get("hit")
            return binary, reply.get("mapping")

    def last_said(self) -> str:
        """What the servers' log last says (why a compile server stopped, or its last line)."""
        try:
            lines = (Path(os.environ.get("EVOLVE_NVRTC_CACHE", "")) / LOG).read_bytes().splitlines()
        except OSError:
            return "no server log"
        stops = [line for line in lines if b": stopped: " in line] or lines
        return "server: " + (stops[-1].decode("utf-8", "replace")[:160] if stops else "(said nothing)")

    def stats(self) -> dict[str, Any]:
        return {"hits": self.served, "compiled": self.compiled, "seconds": round(self.seconds, 3),
                **({"why": self.why} if self.why else {})}


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
                              "filename": filename, "name_expressions": None if name_expressions is None else
                              [str(n) for n in name_expressions], "cache_in_memory": bool(cache_in_memory),
                              "jitify": jitify, "method": method})
        if got is None:
            return local(source, options, arch, filename, name_expressions, log_stream, cache_in_memory, jitify,
                         method)
        return got

    compiler._compile_using_nvrtc_no_warning = served
    return client


def main(argv: list[str] | None = None) -> int:
    isolation.die_with_parent()
    p = argparse.ArgumentParser(description="serve NVRTC compiles into a shared cache (started by the judge)")
    p.add_argument("--req-in", type=int, required=True)
    p.add_argument("--rep-out", type=int, required=True)
    p.add_argument("--cache", type=Path, required=True)
    args = p.parse_args(argv)
    try:
        return serve(args.req_in, args.rep_out, args.cache)
    except BaseException as exc:  # into the servers' log (its stderr): the runner quotes its last line
        print(f"qrjudge.nvrtc_cache {os.getpid()}: stopped: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        raise


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)
