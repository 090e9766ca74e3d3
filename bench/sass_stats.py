"""The machine code of a CUDA file's kernels, without a GPU: nvcc compiles it for sm_90a (the H100's and H200's
own target, which wgmma needs), ptxas says each kernel's registers, spills and shared memory, and cuobjdump's SASS
gives its instructions, its MMAs (HMMA, and wgmma's HGMMA) and, for each loop (a branch back to an earlier
address), the instructions and MMAs of its body: the figure that
showed where tf32x3_apply's first version spent its issue slots (docs/benchmarks-history.md, eleventh pass). A static
count, not a profile: it says what a loop issues per trip, not how often it runs or how long it waits.

    python bench/sass_stats.py FILE.cu [FILE.cu ...] [-DNAME=VALUE ...] [--kernel NAME]

Several files are compiled as one, in that order (as tsqr_wy's kernel.py puts common.cu before qr.cu).

Needs nvcc, and cuobjdump with nvdisasm from the CUDA toolkit or from their wheels (`pip install
nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`; found through the Python path).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ARCH = "sm_90a"
MMAS = ("HMMA", "HGMMA")  # mma.sync's and wgmma's opcodes
LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)(.*?);")


@dataclass
class Kernel:
    name: str
    registers: int = 0
    spill_bytes: int = 0  # stores + loads
    shared_bytes: int = 0
    code: list[tuple[int, str, str]] = field(default_factory=list)  # (address, opcode, operands)

    def loops(self) -> list[tuple[int, int, int, int]]:
        """(start, end, instructions, MMAs) of each backward branch's body, innermost first."""
        found = []
        for at, (address, opcode, operands) in enumerate(self.code):
            target = re.search(r"0x([0-9a-f]+)", operands)
            if opcode.startswith("BRA") and target and int(target.group(1), 16) < address:
                start = int(target.group(1), 16)
                body = [op for a, op, _ in self.code[:at + 1] if a >= start]
                found.append((start, address, len(body), sum(op.startswith(MMAS) for op in body)))
        return sorted(found, key=lambda loop: loop[1] - loop[0])


def tool(name: str) -> str:
    """A CUDA tool's path: on PATH, else in a wheel's nvidia/*/bin on the Python path."""
    found = shutil.which(name)
    if found:
        return found
    for root in map(Path, sys.path):
        for candidate in root.glob(f"nvidia/*/bin/{name}"):
            return str(candidate)
    raise SystemExit(f"sass_stats: no {name} (the CUDA toolkit, or `pip install nvidia-cuda-{name}`)")


def cuobjdump() -> tuple[list[str], dict[str, str]]:
    """cuobjdump, told where nvdisasm (which prints its SASS) is."""
    return [tool("cuobjdump"), "-sass"], {**os.environ, "NVDISASM_PATH": str(Path(tool("nvdisasm")).parent)}


def compile_kernels(sources: list[Path], defines: list[str]) -> dict[str, Kernel]:
    """The kernels of `sources` (one translation unit), by name, with ptxas's resource lines and their SASS."""
    if not shutil.which("nvcc"):
        raise SystemExit("sass_stats: no nvcc")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "all.cu"
        source.write_text("".join(path.read_text() for path in sources))
        cubin = Path(tmp) / "out.cubin"
        built = subprocess.run(["nvcc", f"-arch={ARCH}", "--std=c++17", "-cubin", "-Xptxas", "-v", *defines,
                                str(source), "-o", str(cubin)], capture_output=True, text=True, check=False)
        if built.returncode:
            raise SystemExit(f"sass_stats: nvcc failed on {' + '.join(map(str, sources))}:\n{built.stderr.strip()}")
        command, env = cuobjdump()
        sass = subprocess.run([*command, str(cubin)], capture_output=True, text=True, check=True, env=env).stdout
    kernels: dict[str, Kernel] = {}
    current = None
    for line in built.stderr.splitlines():  # ptxas -v: a "Compiling entry function" line, then its figures
        if m := re.search(r"Compiling entry function '(\w+)'", line):
            current = kernels.setdefault(m.group(1), Kernel(m.group(1)))
        elif current and (m := re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)):
            current.spill_bytes = int(m.group(1)) + int(m.group(2))
        elif current and (m := re.search(r"Used (\d+) registers", line)):
            current.registers = int(m.group(1))
            if s := re.search(r"(\d+) bytes smem", line):
                current.shared_bytes = int(s.group(1))
    current = None
    for line in sass.splitlines():
        if m := re.search(r"Function : (\w+)", line):
            current = kernels.setdefault(m.group(1), Kernel(m.group(1)))
        elif current and (m := LINE.search(line)):
            current.code.append((int(m.group(1), 16), m.group(3), m.group(4)))
    return kernels


def report(kernel: Kernel) -> list[str]:
    ops = [op for _, op, _ in kernel.code]
    mmas = sum(op.startswith(MMAS) for op in ops)
    lines = [(f"{kernel.name}: {kernel.registers} registers, {kernel.spill_bytes} bytes spilled, "
              f"{kernel.shared_bytes} bytes static shared memory; {len(ops)} instructions, {mmas} MMAs")]
    for start, end, count, loop_mmas in kernel.loops():
        per = f", {count / loop_mmas:.1f} instructions per MMA" if loop_mmas else ""
        lines.append(f"  loop {start:#06x}-{end:#06x}: {count} instructions, {loop_mmas} MMAs{per}")
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", type=Path, nargs="+")
    parser.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--kernel", help="only this kernel")
    args = parser.parse_args(argv)
    kernels = compile_kernels(args.sources, [f"-D{d}" for d in args.defines])
    chosen = [k for name, k in sorted(kernels.items()) if args.kernel in (None, name)]
    if not chosen:
        raise SystemExit(f"sass_stats: no kernel {args.kernel} in {' + '.join(map(str, args.sources))}")
    for kernel in chosen:
        print("\n".join(report(kernel)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
