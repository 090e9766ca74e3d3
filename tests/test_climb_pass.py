"""bench/climb_pass.sh, the climb of issue "the seed at 60x" as a user climbs (`evolve try`, then `evolve add` where a
step wins), run on tests/climb_problem (its score a function of one constant: no timing noise decides a step): a
step that wins is recorded with its message and becomes `best`, one that loses is only tried, one naming no
constant is skipped, the run starts from the seed as START sets it, and the run comes back as a bundle `evolve pull`
takes."""

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
    steps.write_text("# the problem's one constant\n"
                     "WIDTH=32 -- by hand: eight times as wide\n"
                     "WIDTH=1 -- by hand: back to one\n"
                     "NOPE=1 -- a constant that does not exist\n")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHON": sys.executable, "STEPS": str(steps), "PROBLEM": "tests/climb_problem",
           "OUT": str(out), "START": "WIDTH=4"}  # the seed before the climb: 25 (its default, WIDTH = 2, is 50)
    proc = subprocess.run(["bash", "bench/climb_pass.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    log = (out / "pass.log").read_text()
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "step 1: faster than best by more than min_gain: evolve add" in log, log
    assert "step 2: ok" in log and "step 2: faster" not in log, log  # slower than the new best: only tried
    assert "step 3: evolve: error: --set NOPE=1: no tunable NOPE is declared (@tune)" in log, log
    assert "the seed before the climb: WIDTH=4" in log, log
    assert json.loads((out / "try_1.json").read_text())["status"] == "ok"
    lineage = (out / "lineage.txt").read_text()
    assert "manual" in lineage and "by hand: eight times as wide" in lineage and "-87.50%" in lineage, lineage
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "remote", "add", "climb", str(out / "climb.bundle")], cwd=clone, check=True)
    evolve = [sys.executable, "-m", "evolver"]
    pulled = subprocess.run([*evolve, "pull", "climb"], cwd=clone / "tests" / "climb_problem", capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(clone)}, timeout=120)
    assert "pulled from climb" in pulled.stdout, pulled.stdout + pulled.stderr


@pytest.mark.slow
def test_a_start_that_names_the_seed_as_it_ships_is_no_step(tmp_path: Path) -> None:
    """START set to the seed's own defaults (the steps file's record of where a climb began, the tree's seed not yet
    moved on): nothing to commit before the run, and the climb goes on (it stopped there, on git's "nothing to
    commit")."""
    steps = tmp_path / "steps.txt"
    steps.write_text("WIDTH=32 -- by hand: sixteen times as wide\n")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHON": sys.executable, "STEPS": str(steps), "PROBLEM": "tests/climb_problem",
           "OUT": str(out), "START": "WIDTH=2"}
    proc = subprocess.run(["bash", "bench/climb_pass.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    log = (out / "pass.log").read_text()
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "the seed before the climb: WIDTH=2, as it ships" in log, log
    assert "step 1: faster than best by more than min_gain: evolve add" in log, log
