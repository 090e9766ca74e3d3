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



@pytest.mark.parametrize("asked,extra", [("", "gpu"), ("gpu-cuda13", "gpu-cuda13")])
def test_the_job_installs_the_extra_asked_for_and_stops_when_it_cannot(tmp_path: Path, asked: str, extra: str) -> None:
    """The install step installs `gpu` (torch and CuPy for CUDA 12) unless GPU_EXTRA names another (`gpu-cuda13`: the
    newest torch and CuPy for CUDA 13), with the venv's options as given, says what it installs,
    and stops the job when the install fails (here: no package index and no wheels)."""
    tree = tmp_path / "checkout"
    (tree / "bench").mkdir(parents=True)
    shutil.copy2(ROOT / "bench" / "ci_gpu.sh", tree / "bench" / "ci_gpu.sh")
    shutil.copy2(ROOT / "pyproject.toml", tree / "pyproject.toml")
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path / "no-wheels"), "OUT": str(tmp_path / "out"),
           "GPU_EXTRA": asked, "VENV_ARGS": "--system-site-packages"}
    env.pop("SKIP_INSTALL", None)
    proc = subprocess.run(["bash", "bench/ci_gpu.sh"], cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    said = f"installing .[{extra},test] into .venv (--system-site-packages)"
    assert said in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert "include-system-site-packages = true" in (tree / ".venv" / "pyvenv.cfg").read_text()
    # the packages of the Python that made it, a venv's too (as a runner image's torch often is), added by name
    host = subprocess.run(["python3", "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True,
                          text=True, env=env).stdout.strip()
    added = next((tree / ".venv").glob("lib/python*/site-packages/host-python.pth")).read_text().splitlines()
    assert host and host in added, added
    assert proc.returncode == 1 and not (tmp_path / "out" / "gpu-tests.log").exists()
