"""Which NVRTC modules each `tune` move of the QR seed compiles anew, and how long each takes: kernel.py run on
bench/seed_model.py's stand-in CuPy, every RawModule (its source file and options) made at import and by the register
panel's first use (tile_panel's, or reg_panel's with RP_TILE = 0; every benchmark shape above 192 takes it), against
the seed's defaults; with nvcc on the PATH, each module
compiled once for sm_90 (`-cubin`) and timed, so a move's import waits for its slowest module (the judge compiles
them side by side: qrjudge/ahead.py). CPU only; the moves are those of bench/compiling_moves.txt and every other
@tune choice that changes a module.

    python bench/move_compiles.py [--no-time] [KERNEL_DIR]     (default seed_kernels/tsqr_wy; a minute with nvcc)
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import seed_model  # (bench/ is the script's directory, first on sys.path)

ROOT = Path(__file__).resolve().parents[1]
FILES = ("qr.cu", "cols.cu", "reg_panel.cu", "tile_panel.cu", "tf32x3.cu", "wgmma.cu")


Module = tuple[str, tuple[str, ...]]  # a module: its file and its options


def modules(kernel_dir: Path, overrides: dict[str, str], texts: dict[str, str]) -> dict[Module, str]:
    """Each module kernel.py makes with `overrides` (on seed_model's stand-in CuPy), at import and the register
    panel's: its file (the one of `texts` its source ends with) and options, and the source it is compiled from."""
    seed_model.KERNEL = kernel_dir / "kernel.py"
    module = seed_model.load(overrides)
    if module.NB == 32:  # the register panel's module, made on first use: reg_panel.cu's, or tile_panel.cu's
        module._in_register_kernel("tile_panel4" if module.RP_TILE else "reg_panel1")
    return {(next(n for n, text in texts.items() if m.code.endswith(text)), tuple(m.options)): m.code
            for m in module._MODULES.values()}


def nvcc_seconds(source: str, options: tuple[str, ...]) -> float:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "module.cu"
        path.write_text(source)
        start = time.perf_counter()
        subprocess.run(["nvcc", "-arch=sm_90", "-cubin", *options, str(path), "-o", str(path.with_suffix(".cubin"))],
                       check=True, capture_output=True)
        return time.perf_counter() - start


def main(argv: list[str]) -> int:
    timing = shutil.which("nvcc") is not None and "--no-time" not in argv
    argv = [a for a in argv if a != "--no-time"]
    kernel_dir = Path(argv[0]) if argv else ROOT / "seed_kernels" / "tsqr_wy"
    text = (kernel_dir / "kernel.py").read_text()
    choices = {m[0]: m[1].split() for m in re.findall(r"^(\w+) = \S+\s+# @tune \w+: (.*)$", text, re.MULTILINE)}
    defaults = {m[0]: m[1] for m in re.findall(r"^(\w+) = (\S+)", text, re.MULTILINE)}
    texts = {name: (kernel_dir / name).read_text() for name in FILES}
    base = modules(kernel_dir, {}, texts)
    seconds: dict[Module, float] = {}
    total = 0
    print(f"{kernel_dir}: {len(base)} modules with the defaults")
    for name, values in choices.items():
        for value in values:
            if value == defaults[name]:
                continue
            made = modules(kernel_dir, {name: value}, texts)
            new = sorted(made.keys() - base.keys())
            if not new:
                continue
            total += 1
            if timing:
                for key in new:
                    seconds.setdefault(key, nvcc_seconds(made[key], key[1]))
            parts = [f"{file}" + (f" {seconds[(file, options)]:.1f} s" if timing else "") for file, options in new]
            slowest = max((seconds[key] for key in new), default=0.0) if timing else 0.0
            print(f"  {name}={value}: {len(new)} module(s): {', '.join(parts)}"
                  + (f"; the import waits {slowest:.1f} s" if timing else ""))
    print(f"{total} moves compile")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
