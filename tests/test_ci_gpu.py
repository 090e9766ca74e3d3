"""The GPU workflow's job (bench/ci_gpu.sh, .github/workflows/gpu-bench.yml) on a machine without a GPU: the script
runs end to end from a checkout without installing (SKIP_INSTALL=1), the harness says there is no GPU, and the step
summary shows each result's status and error in its column instead of failing with a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
def test_the_job_without_a_gpu_writes_a_summary_of_what_failed(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("needs git")
    tree = tmp_path / "checkout"
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for name in files:  # the checkout as the runner has it (no remote: no `best` to fetch)
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tree / name)
    env = {**os.environ, "SKIP_INSTALL": "1", "PYTHON": sys.executable, "PYTEST_ARGS": "-k no_test_has_this_name",
           "OUT": str(tmp_path / "out"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(["bash", "bench/ci_gpu.sh"], cwd=tree, env=env, capture_output=True, text=True, timeout=600)
    summary = (tmp_path / "summary.md").read_text()
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
    assert summary.startswith("| shape | torch.geqrf | blocked_wy | tsqr_wy |"), summary
    assert summary.count("crash: no CUDA device") == 3, summary
    assert proc.returncode != 0  # torch.geqrf and the seeds were not judged: the job fails


@pytest.mark.parametrize("driver,extra", [("13.0", "gpu-cuda13"), ("12.8", "gpu")])
def test_the_job_installs_the_cupy_of_the_drivers_cuda(tmp_path: Path, driver: str, extra: str) -> None:
    """The install step picks the extra by what nvidia-smi says of the driver (a runner with a CUDA 13 driver gets
    cupy-cuda13x), says so, and stops the job when the install fails (here: no package index, no wheels)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho '| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: {driver} |'\n")
    smi.chmod(0o755)
    tree = tmp_path / "checkout"
    (tree / "bench").mkdir(parents=True)
    shutil.copy2(ROOT / "bench" / "ci_gpu.sh", tree / "bench" / "ci_gpu.sh")
    shutil.copy2(ROOT / "pyproject.toml", tree / "pyproject.toml")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": str(tmp_path / "no-wheels"), "OUT": str(tmp_path / "out"), "GPU_EXTRA": ""}
    env.pop("SKIP_INSTALL", None)
    proc = subprocess.run(["bash", "bench/ci_gpu.sh"], cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    assert f"installing .[{extra},test] into .venv" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert proc.returncode == 1 and not (tmp_path / "out" / "gpu-tests.log").exists()
