"""Solver routines disarmed in the runner's own memory: native code cannot run a library factorisation.

torch's dispatcher guard (qrjudge/guard.py) refuses every route to a factorisation that passes through torch, CuPy
or NumPy, but native code in the candidate's process (a torch extension built at import, a prebuilt shared object)
calls a routine by its address: the LAPACK that torch's CPU library carries (MKL, linked in: `sgeqrf_`), the one
NumPy's OpenBLAS carries, cuBLAS's batched factorisations (`cublasSgeqrfBatched`; cuBLAS cannot be masked, its
GEMMs are needed) and cuSPARSE's solves, torch's own C shims for its operators (`aoti_torch_cpu_geqrf`). No name
the scan can read needs to appear: C's preprocessor pastes `sge` and `qrf_` into one. So before the candidate is
imported, the runner rewrites the first instructions of every such routine of every library loaded in it (`arm`):
a call then sets a flag and returns an error without touching its operands, and the runner turns the flag into a
rejection after the import and after every call (`check`); a file with solver routines mapped since (a private copy,
opened by a path of its own, or a renamed one) is one after the import and the benchmark (`late`). The stubs are
written into sealed pages that nothing can write back or map over (qrjudge/seal.py).

Which routines: the exported functions of each loaded shared object (its ELF dynamic symbols) that are solvers by
their name's structure: MKL's LAPACK (`mkl_lapack_*`), LAPACKE, the LAPACK API (a precision letter, a matrix type,
an operation: `sgeqrf_`, `SPOTRF_64`, `dlarfg_`) but not the BLAS (`sgemm_`), cuBLAS's and cuSPARSE's solvers,
and the C shims of the dispatcher's factorisation family (qrjudge/guard.py's FAMILY_TOKENS).
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import os
import platform
import re
import struct
from pathlib import Path

from qrjudge import seal
from qrjudge.guard import CUBLAS_SOLVERS, CUSPARSE_SOLVERS, FAMILY_TOKENS

# movabs rax, FLAG; mov byte [rax], 1; mov eax, 15 (cuBLAS's NOT_SUPPORTED; LAPACK's routines return nothing); ret
STUB = b"\x48\xb8%s\xc6\x00\x01\xb8\x0f\x00\x00\x00\xc3"
STUB_BYTES = len(STUB % bytes(8))
UD2, INT3 = b"\x0f\x0b", b"\xcc"  # an illegal instruction, a breakpoint
# The LAPACK API's names, decorated as libraries export them (`sgeqrf_`, `SGEQRF_64`, `scipy_sgeqrf_64_`): a precision,
# a matrix type, an operation
LAPACK = re.compile(rb"(?:scipy_)?([sdcz](?:ge|gb|gt|po|pp|pb|pt|sy|sp|sb|he|hp|hb|tr|tp|tb|or|op|un|up|la|st|bd|hs|gg)"
                    rb"[a-z0-9]{1,5})(?:_64_|_64|64_|_)?", re.I)
BLAS = {b"gemm", b"gemv", b"ger", b"geru", b"gerc", b"gemmt", b"gemm3m", b"gbmv", b"symm", b"symv", b"syr",
        b"syr2", b"syrk", b"syr2k", b"sbmv", b"spmv", b"spr", b"spr2", b"hemm", b"hemv", b"her", b"her2", b"herk",
        b"her2k", b"hbmv", b"hpmv", b"hpr", b"hpr2", b"trmm", b"trmv", b"tbmv", b"tpmv"}  # (trsm and trsv solve)
ORIGINALS = 8  # routines of each library whose code a copy of it is known by
FUNC, DYNSYM = 2, 11  # an ELF symbol type, a section type
SYMBOL = [("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"), ("value", "<u8"), ("size", "<u8")]


class _State:
    flags: ctypes.Array[ctypes.c_char] | None = None
    disarmed: list[tuple[str, int, bytes]] = []  # (name, address, the code written there); flag i is routine i's
    seen: dict[Path, list[tuple[int, int]]] = {}  # each file's executable mappings once disarmed, and any checked since
    originals: list[tuple[str, int, bytes]] = []  # (library, file offset, first bytes) of some disarmed routines
    late: list[str] = []  # shared objects with solver routines loaded since
    read: dict[Path, list[tuple[int, str, int]]] = {}  # each shared object's routines, read ahead (`prepare`)
    note = "not armed"


STATE = _State()


def is_solver(name: bytes, blas: bool) -> bool:
    """Whether an exported function is a solver routine, by its name's structure (module docstring); the LAPACK
    API's shape only in a library that is a BLAS (`blas`: it exports sgemm), where no other name takes it."""
    if name.startswith((b"mkl_lapack_", b"LAPACKE_")):  # MKL's own routines, or the C API: a LAPACK name inside
        return LAPACK.match(re.sub(rb"^(mkl_lapack_(ps_[a-z0-9]+_|ao_|_)?|LAPACKE_)", b"", name)) is not None
    if name.startswith((b"cublas", b"cusparse")):
        solver = CUBLAS_SOLVERS if name.startswith(b"cublas") else CUSPARSE_SOLVERS
        return bool(solver.search(name.decode("ascii", "replace")))
    if name.startswith(b"aoti_torch_"):
        return bool(set(name.decode("ascii", "replace").split("_")[3:]) & FAMILY_TOKENS)
    shape = LAPACK.fullmatch(name) if blas and len(name) <= 20 else None
    return shape is not None and shape[1].lower()[1:] not in BLAS


def solvers(path: Path) -> list[tuple[str, int]]:
    """(name, length) of the solver functions a shared object exports, from its ELF dynamic symbol table: a
    function's length runs to its end or to the next function's start, whichever comes first."""
    functions, starts, blas = _functions(path)
    rooms = _room(starts, [value for _, value, _ in functions])
    return [(name.decode("ascii", "replace"), min(size, room))
            for (name, _, size), room in zip(functions, rooms) if is_solver(name, blas)]


def _room(starts: list[int], values: list[int]) -> list[int]:
    """For each value, the distance to the first of `starts` above it (2**62 where none is)."""
    import numpy

    ordered = numpy.unique(numpy.array(starts + [2**62], dtype=numpy.int64))
    at = numpy.array(values, dtype=numpy.int64)
    rooms: list[int] = (ordered[numpy.searchsorted(ordered, at, side="right")] - at).tolist()
    return rooms


def _functions(path: Path) -> tuple[list[tuple[bytes, int, int]], list[int], bool]:
    """(name, value, size) of every plain function a 64-bit little-endian ELF file defines in its dynamic symbol
    table but C++'s (an IFUNC's symbol is its resolver, not the routine: left out), where every defined function
    starts (C++'s too), and whether it is a BLAS. (NumPy is imported here, not with the module: the runner imports
    this before it confines itself, with one thread.)"""
    import numpy

    with path.open("rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return [], [], False
        shoff, = struct.unpack_from("<Q", head, 40)
        shentsize, shnum = struct.unpack_from("<HH", head, 58)
        f.seek(shoff)
        table = f.read(shentsize * shnum)
        sections = [struct.unpack_from("<IIQQQQIIQQ", table, i * shentsize) for i in range(shnum)]
        found, starts, blas = [], [], False
        for _, kind, _, _, offset, size, link, _, _, entsize in sections:
            if kind != DYNSYM or entsize != 24:  # an Elf64_Sym (SYMBOL)
                continue
            f.seek(offset)
            entries = numpy.frombuffer(f.read(size), dtype=SYMBOL)
            f.seek(sections[link][4])
            strings = f.read(sections[link][5])
            text = numpy.frombuffer(strings, dtype=numpy.uint8)
            defined = entries[(entries["shndx"] != 0) & (entries["info"] & 0xF == FUNC)]
            starts += defined["value"].tolist()
            keep = defined[text[defined["name"]] != 95]  # not C++'s mangled names, which start with "_"
            ends = numpy.flatnonzero(text == 0)
            stops = ends[numpy.searchsorted(ends, keep["name"])]
            found += [(strings[start:stop], value, size) for start, stop, value, size
                      in zip(keep["name"].tolist(), stops.tolist(), keep["value"].tolist(), keep["size"].tolist())]
            blas = blas or re.search(rb"\0(scipy_)?sgemm(_64)?_?\0", strings) is not None
        return found, starts, blas


def mappings() -> list[tuple[int, int, int, Path]]:
    """(start, end, file offset, path) of each executable mapping of a file in this process (none where /proc cannot
    be read)."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    found = []
    for line in maps.splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and "x" in parts[1] and parts[5].startswith("/"):
            start, end = (int(x, 16) for x in parts[0].split("-"))
            found.append((start, end, int(parts[2], 16), Path(parts[5])))
    return found


def loaded() -> list[Path]:
    """The files mapped executable in this process: shared objects, mostly."""
    return list(dict.fromkeys(path for _, _, _, path in mappings()))


def prepare() -> None:
    """Read the solver routines of the shared objects loaded now: at the runner's start, before the judge's first
    message, so that `arm`, on the evaluation's path, reads only those loaded since (about 0.1 s saved a runner)."""
    STATE.read = {path: _routines(path) for path in loaded()}


def arm() -> str:
    """Disarm every solver routine of every shared object loaded now (once per process); what was done, in words.
    A routine too short for the stub gets an illegal instruction: a call kills the process (a crash, not a pass)."""
    if STATE.flags is not None:
        return STATE.note
    if platform.machine() != "x86_64":
        STATE.note = f"not armed: no stub for {platform.machine()}"
        return STATE.note
    now = mappings()
    targets = _addresses({path for _, _, _, path in now})
    if not targets:
        STATE.note = "not armed: no solver routine found (/proc/self/maps unread, or no library of them loaded)"
        return STATE.note
    STATE.originals = _originals(targets, now)
    _unseen(now)  # every mapping now is seen, whatever becomes of the writes
    STATE.flags = ctypes.create_string_buffer(len(targets))  # alive for good: the stubs write into it
    base = ctypes.addressof(STATE.flags)
    STATE.disarmed = [(name, address, _code(base + i, length))
                      for i, (address, (name, length)) in enumerate(targets.items())]
    try:
        sealed = seal.seal([(address, code) for _, address, code in STATE.disarmed])
    except OSError as exc:  # no memory files or mappings over code here: written in place, unsealed
        sealed = f"not sealed: {exc}"
        refused = _write()
        if refused:
            STATE.note = f"not armed: {refused}"
            return STATE.note
    _unseen()  # and the sealed pages, which split their libraries' mappings
    short = sum(size < STUB_BYTES for _, size in targets.values())
    by_ud2 = f" ({short} by an illegal instruction)" if short else ""
    STATE.note = f"{len(targets)} solver routines disarmed{by_ud2}, {sealed}"
    return STATE.note


def _write() -> str:
    """Write the codes into the libraries' own pages through /proc/self/mem; '' once done, else why not (the routines
    written by then are the ones kept)."""
    written = 0
    try:
        fd = os.open("/proc/self/mem", os.O_RDWR)
        try:
            for _, address, code in STATE.disarmed:
                if ctypes.string_at(address, len(code)) != code:  # (not in pages pinned before the seal failed)
                    os.pwrite(fd, code, address)
                written += 1
        finally:
            os.close(fd)
    except OSError as exc:  # a kernel that refuses writes through /proc/self/mem
        STATE.disarmed = STATE.disarmed[:written]
        return str(exc)
    return ""


def _code(flag: int, length: int) -> bytes:
    """What replaces a routine of `length` bytes: the stub (or, where it does not fit, an illegal instruction), the
    rest filled with breakpoints, so that native code that runs the first instructions elsewhere and jumps into the
    routine's body stops there."""
    code = STUB % struct.pack("<Q", flag) if length >= STUB_BYTES else UD2
    return code + INT3 * (length - len(code))


def _addresses(paths: set[Path]) -> dict[int, tuple[str, int]]:
    """Where each solver routine of these loaded shared objects starts: (its name and library, its length in bytes)."""
    targets: dict[int, tuple[str, int]] = {}
    for path in sorted(paths):
        for address, name, size in STATE.read[path] if path in STATE.read else _routines(path):
            targets.setdefault(address, (f"{name} ({path.name})", size))
    return targets


def _routines(path: Path) -> list[tuple[int, str, int]]:
    """(address, name, size) of a loaded shared object's solver routines; none where it cannot be read (a file
    replaced since it was loaded) or found again by its path."""
    try:
        found = [(name, size) for name, size in solvers(path) if size >= len(UD2)]
        if not found:
            return []
        library = ctypes.CDLL(str(path), mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except (OSError, ValueError, IndexError, struct.error):
        return []
    routines = []
    for name, size in found:
        with contextlib.suppress(AttributeError):  # only a versioned symbol by that name
            address = ctypes.cast(library[name], ctypes.c_void_p).value
            if address:
                routines.append((address, name, size))
    return routines


def tripped() -> str:
    """'' while no disarmed routine was called, else which were."""
    if STATE.flags is None or not STATE.flags.raw.strip(b"\0"):
        return ""
    called = [name for (name, _, _), flag in zip(STATE.disarmed, STATE.flags.raw) if flag]
    return (f"native code called {', '.join(called[:5])}: a library solver routine, forbidden inside a candidate "
            "(disarmed in the runner)")


def late() -> str:
    """'' unless a file with solver routines was mapped executable since they were disarmed: a library that exports
    some (a private copy, opened by a path of its own, would bring routines of its own) or that holds a disarmed
    routine's code where its library does (a copy with the routines renamed; a library's file mapped again). Reads
    /proc/self/maps: the runner asks after the import and after the benchmark, not in every call."""
    if STATE.flags is None:
        return ""
    new = _unseen()
    for path in sorted(new):
        copied = _copied(path)
        if _routines(path) or copied:
            STATE.late.append(path.name + (f" (a copy of {copied}'s code)" if copied else ""))
    return (f"a library with solver routines was loaded after they were disarmed ({', '.join(STATE.late[:3])}), "
            "forbidden inside a candidate") if STATE.late else ""


def _unseen(now: list[tuple[int, int, int, Path]] | None = None) -> set[Path]:
    """The files mapped executable (`now`, else read) where they were not when last looked at (a file's mapping
    split in two is not new), each now seen."""
    new = set()
    for start, end, _, path in mappings() if now is None else now:
        if not any(a <= start and end <= b for a, b in STATE.seen.get(path, [])):
            STATE.seen.setdefault(path, []).append((start, end))
            new.add(path)
    return new


def _originals(targets: dict[int, tuple[str, int]],
               now: list[tuple[int, int, int, Path]]) -> list[tuple[str, int, bytes]]:
    """(library, file offset, first bytes) of the ORIGINALS longest disarmed routines of each library: read before
    they are written, what a copy of the library's file holds at that offset."""
    now = sorted(now)
    starts = [start for start, _, _, _ in now]
    longest: dict[Path, list[tuple[int, int, int]]] = {}
    for address, (_, length) in targets.items():
        start, end, offset, path = now[max(bisect.bisect_right(starts, address) - 1, 0)]
        if start <= address < end and length >= 8:
            longest.setdefault(path, []).append((length, address, address - start + offset))
    return [(path.name, offset, ctypes.string_at(address, min(length, 32)))
            for path, found in longest.items() for length, address, offset in sorted(found)[-ORIGINALS:]]


def _copied(path: Path) -> str:
    """The library whose disarmed code this file holds where that library does ('' for none)."""
    try:
        with path.open("rb") as f:
            for library, offset, code in STATE.originals:
                f.seek(offset)
                if f.read(len(code)) == code:
                    return library
    except OSError:
        pass
    return ""


def verify() -> str:
    """'' unless a disarmed routine was called, a library with solver routines loaded since, or a routine's code
    written back (what the runner asks after the benchmark: a few milliseconds, too many for every call)."""
    rewritten = [name for name, address, code in STATE.disarmed if ctypes.string_at(address, len(code)) != code]
    back = f"the code of a disarmed solver routine was written back ({', '.join(rewritten[:3])})" if rewritten else ""
    return tripped() or late() or back


def check(libraries: bool = False) -> None:
    """Raises the guard's error once a disarmed routine was called or, with `libraries`, a library with solver
    routines was loaded since (the runner asks after the import and after every call)."""
    from qrjudge.guard import GuardError

    problem = tripped() or (late() if libraries else "")
    if problem:
        raise GuardError(problem)
