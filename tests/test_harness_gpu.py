"""The QR judge on a real GPU: the seeds pass, every planted cheat or fault is caught with the right status.

Marked `gpu`: skipped without CUDA. Run on the GPU machine (bench/gpu_pass.sh runs these).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.gpu
CHEATS = Path(__file__).parent / "cheats"
SEEDS = ROOT / "seed_kernels"


def run_harness(kernel_dir: Path, *args: str, timeout: float = 300) -> dict:
    proc = subprocess.run([sys.executable, "-m", "harness.qr", "--kernel-dir", str(kernel_dir), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1, f"expected exactly one stdout line, got {proc.stdout!r}"
    return json.loads(lines[0])


@pytest.mark.parametrize("seed", ["naive", "blocked_wy"])
def test_seed_passes_quick(seed: str) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("timing needs the GPU to itself; run the seed tests without -n (bench/gpu_pass.sh does)")
    result = run_harness(SEEDS / seed, "--mode", "quick")
    assert result["status"] == "ok", result.get("error")
    assert result["score"] > 0 and len(result["shapes"]) == 4


def cheat_dir(tmp_path: Path, name: str) -> Path:
    d = tmp_path / name
    d.mkdir()
    shutil.copy(SEEDS / "blocked_wy" / "kernel.py", d / "base.py")
    shutil.copy(SEEDS / "blocked_wy" / "qr.cu", d / "qr.cu")
    shutil.copy(CHEATS / f"{name}.py", d / "kernel.py")
    return d


def expectation(name: str) -> tuple[str, str]:
    first = (CHEATS / f"{name}.py").read_text().splitlines()[0]
    status, pattern = first.removeprefix("# expect:").split("|", 1)
    return status.strip(), pattern.strip()


@pytest.mark.parametrize("name", sorted(p.stem for p in CHEATS.glob("*.py")))
def test_planted_cheat_is_caught(tmp_path: Path, name: str) -> None:
    status, pattern = expectation(name)
    result = run_harness(cheat_dir(tmp_path, name), "--mode", "quick", "--stall", "20")
    assert result["status"] == status, f"{name}: {result.get('status')}: {result.get('error')}"
    assert re.search(pattern, result["error"]), f"{name}: {result['error']!r} does not match {pattern!r}"
    assert result["score"] is None
