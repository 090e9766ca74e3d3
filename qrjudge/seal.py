"""The disarmed solver routines made unchangeable: native code can neither write them back nor map them anew.

qrjudge/disarm.py replaces each solver routine with a stub. Were the stubs in the library's own pages, a candidate's
native code could write through /proc/self/mem as well as the runner: the original instructions back, a call of the
routine, the stub again, all inside one call. So the pages that hold the stubs are pinned, for every thread of the
runner:

- The stubs are written into a copy of the pages in a sealed memory file, mapped over the originals, shared and
  read-only (`_pin`). A shared mapping of a file opened
  read-only can never be made writable (`mprotect` refuses), and the kernel's forced writes, which /proc/self/mem
  and ptrace use, refuse every mapping that is not private. The file's seals refuse writes by any other route.
- Nothing may be mapped over them, nor they moved or unmapped (which would let the library's file be mapped there
  again): the kernel's mseal where it has one (Linux 6.10), for this process only. Elsewhere a seccomp filter
  (`_filter`) refuses `mmap` at a fixed address, `munmap`, `mremap`, `mprotect`, `madvise` and `remap_file_pages`
  on their address ranges (at most SPANS of them, the small gaps between runs of pages filled), `shmat` with
  SHM_REMAP, and outright `ptrace`, `userfaultfd`, `io_uring_setup` (its queue can `madvise`), `process_madvise`
  and system calls of another ABI (i386's `int 0x80`, x32's numbers). A refused call fails with EPERM. A filter
  holds in the programs the runner starts too (a compiler building an extension): ranges of some tens of
  megabytes, which a program's own libraries seldom meet.
"""

from __future__ import annotations

import bisect
import ctypes
import errno
import fcntl
import itertools
import mmap
import os
import struct

from qrjudge import isolation

PAGE = mmap.PAGESIZE
SPANS = 32  # the most address ranges the filter checks
USE_MSEAL = True  # False: the filter even where the kernel has mseal (the tests)
MAP_FIXED, MREMAP_FIXED, SHM_REMAP = 0x10, 0x2, 0x4000
PR_SET_NO_NEW_PRIVS, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC = 38, 1, 1
AUDIT_ARCH_X86_64, X32_BIT = 0xC000003E, 0x40000000
# x86-64 system call numbers
MMAP, MPROTECT, MUNMAP, MREMAP, MADVISE, SHMAT, SECCOMP, MSEAL = 9, 10, 11, 25, 28, 30, 317, 462
RANGED = {MUNMAP: "munmap", MPROTECT: "mprotect", 329: "pkey_mprotect", MADVISE: "madvise", 216: "remap_file_pages"}
REFUSED = {101: "ptrace", 323: "userfaultfd", 425: "io_uring_setup", 440: "process_madvise"}
# classic BPF, as seccomp runs it
LD_ABS, LD_MEM, LD_IMM, ST, TAX, ADD_X, RET = 0x20, 0x60, 0x00, 0x02, 0x07, 0x0C, 0x06
JA, JEQ, JGT, JGE, JSET, JGE_X = 0x05, 0x15, 0x25, 0x35, 0x45, 0x3D
ALLOW, DENY = 0x7FFF0000, 0x00050000 | errno.EPERM
ARCH, NR = 4, 0  # offsets in struct seccomp_data; argument i at 16 + 8 i, its low word first


class _Program:
    """A classic BPF program with named labels: a jump names where it goes, `assemble` makes the offsets."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int | str, int | str, int | str]] = []
        self.labels: dict[str, int] = {}
        self.count = 0

    def new(self, what: str) -> str:
        self.count += 1
        return f"{what}{self.count}"

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def op(self, code: int, k: int | str = 0, jt: int | str = 0, jf: int | str = 0) -> _Program:
        self.code.append((code, jt, jf, k))
        return self

    def goto_if(self, code: int, k: int, where: str) -> _Program:
        """Jump to `where` (however far) if the condition holds."""
        return self.op(code, k, 0, 1).op(JA, where)

    def assemble(self) -> bytes:
        out = b""
        for i, (code, jt, jf, k) in enumerate(self.code):
            def offset(target: int | str) -> int:
                return target if isinstance(target, int) else self.labels[target] - i - 1
            if code == JA:
                jt, jf, k = 0, 0, offset(k)
            out += struct.pack("<HBBI", code, offset(jt), offset(jf), int(k))
        return out


def _word(arg: int, high: bool = False) -> int:
    return 16 + 8 * arg + (4 if high else 0)


def _overlap(p: _Program, addr: int, length: int, spans: list[tuple[int, int]]) -> None:
    """Falls through unless [args[addr], + args[length]) meets a span, else jumps to `deny`. Scratch: M0, M1 the
    range's end (low, high word), M2, M3 its start, M4 the carry."""
    no_carry, carried = p.new("nc"), p.new("c")
    p.op(LD_ABS, _word(addr)).op(ST, 2).op(TAX)
    p.op(LD_ABS, _word(length)).op(ADD_X).op(ST, 0)
    p.op(JGE_X, 0, no_carry, 0)
    p.op(LD_IMM, 1).op(JA, carried)
    p.label(no_carry)
    p.op(LD_IMM, 0)
    p.label(carried)
    p.op(ST, 4)
    p.op(LD_ABS, _word(addr, True)).op(ST, 3).op(TAX)
    p.op(LD_ABS, _word(length, True)).op(ADD_X).op(TAX).op(LD_MEM, 4).op(ADD_X).op(ST, 1)
    for start, end in spans:  # the range meets [start, end) if it starts below end and ends above start
        ends, low_end, low_start, meets, clear = (p.new(x) for x in ("e", "le", "ls", "m", "n"))
        p.op(LD_MEM, 3).op(JGT, end >> 32, clear, 0).op(JEQ, end >> 32, low_end, ends)
        p.label(low_end)
        p.op(LD_MEM, 2).op(JGE, end & 0xFFFFFFFF, clear, 0)
        p.label(ends)
        p.op(LD_MEM, 1).op(JGT, start >> 32, meets, 0).op(JEQ, start >> 32, low_start, clear)
        p.label(low_start)
        p.op(LD_MEM, 0).op(JGT, start & 0xFFFFFFFF, meets, clear)
        p.label(meets)
        p.op(JA, "deny")
        p.label(clear)


def _filter(spans: list[tuple[int, int]]) -> bytes:
    """The seccomp program (module docstring) for the libraries' address ranges `spans`."""
    p = _Program()
    p.op(LD_ABS, ARCH).op(JEQ, AUDIT_ARCH_X86_64, 1, 0).op(JA, "deny")
    p.op(LD_ABS, NR).goto_if(JGE, X32_BIT, "deny")
    for number in REFUSED:
        p.goto_if(JEQ, number, "deny")
    for number in RANGED:
        p.goto_if(JEQ, number, "ranged")
    p.goto_if(JEQ, MMAP, "mmap")
    p.goto_if(JEQ, MREMAP, "mremap")
    p.goto_if(JEQ, SHMAT, "shmat")
    p.op(JA, "allow")
    p.label("mmap")  # only a mapping at a fixed address replaces what is there
    p.op(LD_ABS, _word(3)).goto_if(JSET, MAP_FIXED, "ranged").op(JA, "allow")
    p.label("mremap")
    _overlap(p, 0, 1, spans)
    p.op(LD_ABS, _word(3)).op(JSET, MREMAP_FIXED, 1, 0).op(JA, "allow")
    _overlap(p, 4, 2, spans)
    p.op(JA, "allow")
    p.label("shmat")
    p.op(LD_ABS, _word(2)).goto_if(JSET, SHM_REMAP, "deny").op(JA, "allow")
    p.label("ranged")
    _overlap(p, 0, 1, spans)
    p.label("allow")
    p.op(RET, ALLOW)
    p.label("deny")
    p.op(RET, DENY)
    return p.assemble()


def seal(codes: list[tuple[int, bytes]]) -> str:
    """Put `codes` ((address, code) pairs) into this process's code, pinned (module docstring); what was done, in
    words. Raises OSError where the pages cannot be pinned (the caller writes the codes another way, unsealed)."""
    libc = isolation.libc()
    runs = _pages([(address, len(code)) for address, code in codes])
    _pin(libc, runs, codes)
    try:
        if USE_MSEAL and _mseal(libc, runs):
            return f"sealed ({len(runs)} runs of pages pinned and mseal'd)"
    except OSError as exc:
        return f"pinned, not sealed: {exc}"
    spans = _coarse(runs, SPANS)
    refused = install(spans)
    return f"pinned, not filtered: {refused}" if refused else \
        f"sealed ({len(runs)} runs of pages pinned, a seccomp filter over {len(spans)} ranges)"


def install(spans: list[tuple[int, int]]) -> str:
    """Install the seccomp filter (`_filter`) for every thread of this process; '' once done, else why not."""
    libc = isolation.libc()
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"prctl: {os.strerror(ctypes.get_errno())}"
    code = _filter(spans)
    program = ctypes.create_string_buffer(code, len(code))
    fprog = struct.pack("<HxxxxxxQ", len(code) // 8, ctypes.addressof(program))
    if libc.syscall(SECCOMP, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, fprog) != 0:
        return f"seccomp: {os.strerror(ctypes.get_errno()) or 'a thread could not be synced'}"
    return ""


def _mseal(libc: ctypes.CDLL, runs: list[tuple[int, int]]) -> bool:
    """Seal the runs' mappings (Linux 6.10's mseal: no munmap, mremap, mmap over, mprotect or discarding madvise,
    for this process only; a program it starts has memory of its own); False where the kernel has no mseal."""
    libc.syscall.restype = ctypes.c_long
    for start, length in runs:
        if libc.syscall(MSEAL, ctypes.c_void_p(start), ctypes.c_size_t(length), ctypes.c_ulong(0)) != 0:
            if ctypes.get_errno() == errno.ENOSYS and start == runs[0][0]:
                return False
            raise OSError(ctypes.get_errno(), f"mseal {start:#x}: {os.strerror(ctypes.get_errno())}")
    return True


def _coarse(runs: list[tuple[int, int]], most: int) -> list[tuple[int, int]]:
    """At most `most` (start, end) ranges that cover the runs, the smallest gaps between them filled."""
    gaps = sorted(b - (a + n) for (a, n), (b, _) in zip(runs, runs[1:]))
    fill = gaps[len(gaps) - most] if len(gaps) >= most else -1
    spans: list[tuple[int, int]] = []
    for start, length in runs:
        if spans and start - spans[-1][1] <= fill:
            spans[-1] = (spans[-1][0], start + length)
        else:
            spans.append((start, start + length))
    return spans


def _pages(written: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The runs of whole pages that hold the written code: (start, length)."""
    pages = sorted({page for address, length in written
                    for page in range(address // PAGE, (address + length - 1) // PAGE + 1)})
    runs: list[list[int]] = []
    for page in pages:
        if runs and runs[-1][1] == page:
            runs[-1][1] += 1
        else:
            runs.append([page, page + 1])
    return [(first * PAGE, (last - first) * PAGE) for first, last in runs]


def _pin(libc: ctypes.CDLL, runs: list[tuple[int, int]], codes: list[tuple[int, bytes]]) -> None:
    """Copy each run, the codes written into the copy, into one sealed memory file, and map that back over the run,
    shared, read-only, executable (the library's own pages are never written)."""
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    memory = os.memfd_create("evolve-disarmed", os.MFD_ALLOW_SEALING | os.MFD_CLOEXEC)
    try:
        offsets = [0, *itertools.accumulate(length for _, length in runs)]
        for (start, length), offset in zip(runs, offsets):
            os.pwrite(memory, ctypes.string_at(start, length), offset)
        for address, code in codes:  # every code lies within one run (`_pages`)
            run = bisect.bisect_right(runs, (address, 2**64)) - 1
            os.pwrite(memory, code, offsets[run] + address - runs[run][0])
        fcntl.fcntl(memory, fcntl.F_ADD_SEALS,
                    fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL)
        readonly = os.open(f"/proc/self/fd/{memory}", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(memory)
    try:
        for (start, length), offset in zip(runs, offsets):
            if libc.mmap(start, length, mmap.PROT_READ | mmap.PROT_EXEC, mmap.MAP_SHARED | MAP_FIXED, readonly,
                         offset) != start:
                raise OSError(ctypes.get_errno(), f"mmap over {start:#x}: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(readonly)
