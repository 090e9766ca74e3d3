"""What `pip install` puts on a user's path: `evolver` alone (its judge inside it as `evolver/_qrjudge`, the CPU
example as `evolver/examples/sort`), never a top-level package with a generic name such as `harness`."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from evolver.evaluation.builtin import builtin_judge_dir, judge_specs
from tests.conftest import ROOT


@pytest.mark.slow
def test_the_wheel_installs_evolver_alone_with_its_judge_inside(tmp_path: Path) -> None:
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    names = zipfile.ZipFile(next(tmp_path.glob("*.whl"))).namelist()
    tops = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert tops == {"evolver"}, tops
    assert "evolver/_qrjudge/supervisor.py" in names and "evolver/_qrjudge/runner.py" in names
    assert "evolver/examples/sort/check.py" in names and "evolver/py.typed" in names


def test_the_engine_reads_the_judges_promises_without_importing_it() -> None:
    specs = judge_specs(builtin_judge_dir("qr"))
    assert len(specs.benchmarks_for("full")) == 12 and len(specs.tests_for("full")) == 50
    assert specs.__name__.startswith("evolve_judge_specs")  # read from its file, not imported as `harness`
