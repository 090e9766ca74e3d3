"""bench/climb_pass.sh, the climb of issue "the seed at 60x" as a user climbs (`evolve try`, then `evolve add` where a
step wins), run on the CPU example: a step that wins is recorded with its message and becomes `best`, one that
loses is only tried, one naming no constant is skipped, and the run comes back as a bundle `evolve pull` takes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
def test_a_climb_records_the_winning_steps_and_its_bundle_pulls(tmp_path: Path) -> None:
    steps = tmp_path / "steps.txt"
    steps.write_text("# the CPU example's constants\n"
                     "CUTOFF=32 -- by hand: insertion sort below 32 elements\n"
                     "CUTOFF=1 -- by hand: no insertion sort at all\n"
                     "NOPE=1 -- a constant that does not exist\n")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHON": sys.executable, "STEPS": str(steps), "PROBLEM": "examples/sort",
           "KERNEL_FILE": "sort.py", "OUT": str(out)}
    proc = subprocess.run(["bash", "bench/climb_pass.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    log = (out / "pass.log").read_text()
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "step 1: faster than best by more than min_gain: evolve add" in log, log
    assert "step 2: ok" in log and "step 2: faster" not in log, log  # no cutoff: slower, so only tried
    assert "step 3: NOPE=1: no such constants" in log, log
    assert json.loads((out / "try_1.json").read_text())["status"] == "ok"
    lineage = (out / "lineage.txt").read_text()
    assert "manual" in lineage and "by hand: insertion sort below 32 elements" in lineage, lineage
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "remote", "add", "climb", str(out / "climb.bundle")], cwd=clone, check=True)
    evolve = [sys.executable, "-m", "evolver"]
    pulled = subprocess.run([*evolve, "pull", "climb"], cwd=clone / "examples" / "sort", capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(clone)}, timeout=120)
    assert "pulled from climb" in pulled.stdout, pulled.stdout + pulled.stderr
