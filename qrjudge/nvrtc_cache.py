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
(`Worker`; up to WORKERS at once, for a runner that asks from several threads): the request's file name and
options are the candidate's, and what they make NVRTC write (a source file at any path, a precompiled header)
cannot land on an entry; nor can it read the candidate's directory or the runner's (`sealed`), so a header
included from there is compiled by the runner itself, never served from an entry made of another version of it. A
candidate can ask for any compile (as it could run one itself), never write an entry, and nothing it asks changes
what another candidate's source compiles to. A server also compiles, beside a request the cache lacks, what the
evaluation of the nearest earlier such request asked for, with the same options changed (qrjudge/foresight.py): a
`tune` move's other modules are then compiled before the candidate asks for them.

The runner's side (qrjudge/nvrtc_client.py, `install`) replaces CuPy's NVRTC call
(`cupy.cuda.compiler._compile_using_nvrtc_no_warning`, below CuPy's own per-process cache) before any candidate
code runs; whatever goes wrong with the server, the
call compiles in the runner as before (and a failing compile fails there, with CuPy's own error).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import json
import math
import os
import select
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qrjudge import foresight, isolation, wire

WORKER_S = 120.0  # a compile worker still running after this long is killed (the runner then compiles itself)
WORKERS = 4  # compiles a server runs at once: a candidate that builds its modules side by side (or whose modules
# are foreseen: qrjudge/foresight.py) waits for the longest, not the sum (an NB move of the QR seed, one by one:
# import and tests 12-16 s, run53)
KEEP_BYTES = 2 << 30  # the cache is pruned to this, oldest first, when a server starts
TMP = ".tmp"  # the compile workers' own directories inside the cache
KEYS = ("source", "options", "arch", "filename", "name_expressions", "cache_in_memory", "jitify", "method")
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


def sealed(hidden: tuple[str, ...], cache: Path) -> tuple[str, ...]:
    """What the compile workers hide: the directories the judge names (the runner's, which the candidate writes,
    and the candidate's own), but none that holds the cache. The key covers the request, not the files NVRTC reads
    besides it: an `#include` by any route (a path, the program's file name, a directory in the options, the working
    directory, a macro) reads the file as it is then, and a header changed under the same request would be served
    the binary of the one before. Hidden, such a compile fails in the worker and the runner compiles it itself,
    seeing what it always saw. Whatever else a worker reads is taken to be the same for every request: the
    installation's headers (CUDA's, CuPy's), and any file of a person's own outside the kernel directory, whose
    edits a cached entry would not see: a kernel's headers belong in its directory."""
    inside = os.path.realpath(cache)
    return tuple(p for p in map(os.path.realpath, hidden)
                 if os.path.isdir(p) and not (inside + "/").startswith(p.rstrip("/") + "/"))


# --- the server: the one writer -------------------------------------------------------------------------

def cached(request: dict[str, Any], cache: Path, versions: str) -> tuple[Path, dict[str, Any] | None]:
    """Where `request`'s entry lives, and the reply if the cache has it."""
    name = key(request, versions)
    path = cache / name[:2] / f"{name}.bin"
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        return path, {"path": str(path), "mapping": json.loads(meta.read_text())["mapping"], "hit": True}
    return path, None


def store(path: Path, compiled: dict[str, Any]) -> dict[str, Any]:
    """A worker's result written as the entry at `path` (a failure is only replied): the reply."""
    if "error" in compiled:
        return compiled
    path.parent.mkdir(exist_ok=True)
    unique = f".{os.getpid()}"
    meta = path.with_suffix(".json")
    for target, data in ((meta, json.dumps({"mapping": compiled["mapping"]}).encode()),
                         (path, base64.b64decode(compiled["binary"]))):
        partial = target.with_name(target.name + unique)
        partial.write_bytes(data)
        os.replace(partial, target)  # the binary last: an entry exists once both halves do
    return {"path": str(path), "mapping": compiled["mapping"], "hit": False}


@dataclass
class Job:
    """A compile the cache did not have: the runner's requests waiting for it, by id (none: foreseen)."""

    request: dict[str, Any]
    entry: Path
    askers: list[Any] = field(default_factory=list)
    foreseen: bool = False


@dataclass
class Worker:
    """One compile, in a child that can write nothing but a directory of its own (`start`): the request is the
    candidate's (its file name, its options: a precompiled header's path, say), and whatever it makes NVRTC or
    CuPy write lands there, never on an entry. Its output is read as it comes, so that a server runs several."""

    job: Job
    child: int
    fd: int
    own: str
    deadline: float
    chunks: list[bytes] = field(default_factory=list)

    @classmethod
    def start(cls, job: Job, scratch: Path, hidden: tuple[str, ...] = ()) -> Worker:
        """`hidden`: what NVRTC must not read (`sealed`), an empty directory in its place."""
        own = tempfile.mkdtemp(dir=scratch)
        out_r, out_w = os.pipe()
        child = os.fork()
        if child == 0:  # one thread (the server has no other), as confine needs
            code = 1
            try:
                os.close(out_r)
                isolation.confine([own], hidden=isolation.judges_only() + hidden)
                os.chdir(own)  # (a relative #include is looked for here, never in the server's directory)
                os.environ["TMPDIR"] = own
                tempfile.tempdir = None
                with os.fdopen(out_w, "w") as out:
                    json.dump(nvrtc(job.request), out)
                code = 0
            finally:
                os._exit(code)
        os.close(out_w)
        return cls(job, child, out_r, own, time.monotonic() + WORKER_S)

    def read(self) -> bool:
        """What the child wrote since; False once it has written all it will."""
        chunk = os.read(self.fd, 1 << 20)
        self.chunks.append(chunk)
        return bool(chunk)

    def finish(self) -> dict[str, Any]:
        """The child gone (killed if it is still running: stuck, or past WORKER_S), its result stored: the reply
        (without the id: each request waiting for it is answered under its own)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.child, signal.SIGKILL)
        os.waitpid(self.child, 0)
        os.close(self.fd)
        shutil.rmtree(self.own, ignore_errors=True)
        try:
            said = json.loads(b"".join(self.chunks).decode("utf-8", "replace"))
        except ValueError:
            said = {"error": "the compile worker ended without a result"}
        if not (isinstance(said, dict) and ("binary" in said or "error" in said)):
            said = {"error": "malformed"}
        return {**store(self.job.entry, said), **({"foreseen": True} if self.job.foreseen else {})}


def nvrtc(request: dict[str, Any]) -> dict[str, Any]:
    """CuPy's NVRTC call on the request, in the worker: {"binary" (base64), "mapping"} or {"error"}."""
    from cupy.cuda import compiler

    try:
        binary, mapping = compiler._compile_using_nvrtc_no_warning(
            request["source"], tuple(request["options"]), request["arch"], request["filename"],
            request["name_expressions"], None, request["cache_in_memory"], request["jitify"], request["method"])
    except Exception as exc:  # the runner compiles it again itself, for CuPy's own error
        return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return {"binary": base64.b64encode(bytes(binary)).decode(), "mapping": mapping}


def serve(fd_in: int, fd_out: int, cache: Path, hidden: tuple[str, ...] = ()) -> int:
    try:  # first, as the runner does: from here on it sees what the runner sees, and writes only the cache
        isolation.confine([str(cache)], hidden=isolation.judges_only())
    except (isolation.ConfineError, OSError) as exc:
        print(f"qrjudge.nvrtc_cache: not serving: cannot confine ({exc})", file=sys.stderr)
        return 1  # unconfined it would be a writer the candidate could reach: the runner compiles itself
    (cache / TMP).mkdir(exist_ok=True)  # the compile workers' own directories (`Worker`)
    for name in ("HOME", "TMPDIR", "XDG_CACHE_HOME", "CUPY_CACHE_DIR"):  # CuPy makes its disk cache's directory
        os.environ[name] = str(cache / TMP)  # at import, under a home that confinement has made read-only
    with contextlib.suppress(ImportError):  # as the runner does: torch first, which loads the CUDA libraries
        import torch  # noqa: F401  of its wheels (NVRTC among them) that CuPy then finds loaded
    from cupy import __version__ as cupy_version
    from cupy.cuda import compiler

    versions = f"nvrtc {compiler._get_nvrtc_version()} cupy {cupy_version}"
    prune(cache)
    foresight.prune(cache)
    requests = wire.LineReader(fd_in)
    compiles = Compiles(cache, versions, sealed(hidden, cache))
    while True:
        compiles.start()
        running = compiles.running
        due = min((w.deadline for w in running.values()), default=math.inf) - time.monotonic()
        listening = compiles.asked_for() < WORKERS  # past that, the pipe holds the rest back, as one at a time did
        ready = [fd_in] if listening and requests.buffer else select.select(
            [fd_in] * listening + [*running], [], [], None if due == math.inf else max(due, 0.0))[0]
        ended = [fd for fd in ready if fd != fd_in and not running[fd].read()]
        stuck = [fd for fd, w in running.items() if fd not in ended and w.deadline < time.monotonic()]
        for fd in ended + stuck:  # (a stuck one is killed: its runner compiles itself)
            worker = running.pop(fd)
            done = worker.finish()
            for asker in worker.job.askers:
                wire.send(fd_out, {**done, "id": asker})
        if fd_in in ready:
            line = requests.readline()
            if not line:  # the runner is gone
                for worker in running.values():
                    worker.finish()
                return 0
            said = _parsed(line)
            if isinstance(said, dict) and said.get("quiet"):  # the runner is about to be timed: no more guesses
                compiles.hush()
                wire.send(fd_out, {"id": said.get("id"), "quiet": True})
                continue
            asker, request, entry, reply = take(said, cache, versions)
            if reply is not None:
                wire.send(fd_out, reply)
            else:
                compiles.ask(asker, request, entry)
            if request:
                compiles.note(request)


def _parsed(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError as exc:
        return exc


def take(said: Any, cache: Path, versions: str) -> tuple[Any, dict[str, Any], Path, dict[str, Any] | None]:
    """A request (a line parsed, or why it could not be): its id, the request, its entry's path, and the reply if
    there is one at once (a hit; a malformed request, whose request is empty)."""
    try:
        if isinstance(said, Exception):
            raise said
        request = {k: said[k] for k in KEYS}
        entry, hit = cached(request, cache, versions)
    except (ValueError, KeyError, TypeError) as exc:
        asker = said.get("id") if isinstance(said, dict) else None
        return asker, {}, cache, {"error": f"malformed request: {exc}", "id": asker}
    return said.get("id"), request, entry, None if hit is None else {**hit, "id": said.get("id")}


class Compiles:
    """A server's compiles: waiting for a worker (the runner's requests first, then the foreseen ones:
    qrjudge/foresight.py) and running, at most WORKERS at once, one of them always free for the runner's."""

    def __init__(self, cache: Path, versions: str, hidden: tuple[str, ...] = ()) -> None:
        self.cache, self.versions, self.hidden = cache, versions, hidden
        self.waiting: list[Job] = []
        self.running: dict[int, Worker] = {}  # by their pipes
        self.recipe: list[dict[str, Any]] = []  # what the runner asked for, in order (foresight.write)
        self.name = f"{os.getpid()}-{time.time_ns()}"
        self.recipes: list[list[dict[str, Any]]] | None = None  # the other servers', read at the first miss
        self.foreseen = 0
        self.quiet = False  # no more guesses (`hush`)

    def asked_for(self) -> int:
        return sum(bool(job.askers) for job in self.waiting)

    def queued(self, entry: Path) -> Job | None:
        """The compile of `entry` waiting or running, if there is one."""
        return next((job for job in (*self.waiting, *(w.job for w in self.running.values())) if job.entry == entry),
                    None)

    def ask(self, asker: Any, request: dict[str, Any], entry: Path) -> None:
        """A request the cache did not have: it waits for the compile of its entry already under way (foreseen,
        say), or for a worker of its own, ahead of every foreseen one; and what it foretells is queued."""
        job = self.queued(entry)
        if job is not None:
            job.askers.append(asker)
            if job in self.waiting:  # a foreseen one, now asked for
                self.waiting.remove(job)
                self.waiting.insert(self.asked_for(), job)
            return
        self.waiting.insert(self.asked_for(), Job(request, entry, [asker]))
        if self.quiet:
            return
        if self.recipes is None:
            self.recipes = foresight.read(self.cache, self.name)
        for guess in foresight.foresee(request, self.recipes):
            self.foresee(guess)

    def foresee(self, guess: dict[str, Any]) -> None:
        try:
            request = {k: guess[k] for k in KEYS}
            entry, hit = cached(request, self.cache, self.versions)
        except (KeyError, TypeError, ValueError):
            return
        if hit is None and self.queued(entry) is None and self.foreseen < foresight.FORESEEN:
            self.waiting.append(Job(request, entry, foreseen=True))
            self.foreseen += 1

    def hush(self) -> None:
        """No foreseen compile left, running or waiting, and none from here on: the runner is about to time the
        candidate, and a guess must not compile beside its timed calls (one the runner asked for still runs)."""
        for fd, worker in list(self.running.items()):
            if not worker.job.askers:
                self.running.pop(fd).finish()
        self.waiting = [job for job in self.waiting if job.askers]
        self.quiet = True

    def start(self) -> None:
        """Workers for the waiting compiles, the runner's first; a foreseen one only while another stays free."""
        while self.waiting and len(self.running) < WORKERS:
            guessing = sum(not w.job.askers for w in self.running.values())
            if not self.waiting[0].askers and guessing >= WORKERS - 1:
                return
            worker = Worker.start(self.waiting.pop(0), self.cache / TMP, self.hidden)
            self.running[worker.fd] = worker

    def note(self, request: dict[str, Any]) -> None:
        """The request in the recipe (once), for the servers after this one."""
        if request not in self.recipe:
            self.recipe.append(request)
            with contextlib.suppress(OSError):
                foresight.write(self.cache, self.name, self.recipe)


def main(argv: list[str] | None = None) -> int:
    isolation.die_with_parent()
    p = argparse.ArgumentParser(description="serve NVRTC compiles into a shared cache (started by the judge)")
    p.add_argument("--req-in", type=int, required=True)
    p.add_argument("--rep-out", type=int, required=True)
    p.add_argument("--cache", type=Path, required=True)
    p.add_argument("--hide", action="append", default=[], help="a directory the compiles must not read (`sealed`)")
    args = p.parse_args(argv)
    try:
        return serve(args.req_in, args.rep_out, args.cache, tuple(args.hide))
    except BaseException as exc:  # into the servers' log (its stderr): the runner quotes its last line
        print(f"qrjudge.nvrtc_cache {os.getpid()}: stopped: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        raise


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)
