"""A hostile candidate, end to end (docs/SECURITY.md): an ordinary SEARCH/REPLACE reply from a scripted LLM
adds import-time code to the CPU example (tests/hostile_candidate.py) that hunts for the API key in its
ancestors' environments, finds the repository through their working directories, writes into the work
tree, forges a result in another candidate's note, moves `best`, and prints a perfect result line.

With the sandbox on, every one of those fails. With it off, the forged note and the moved `best` still never
count: evolve owns those refs and puts them back."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from evolver.evaluation import sandbox
from evolver.records.refs import NOTES_REF
from evolver.records.store import Store
from tests.conftest import evolve, example_config, git, make_repo
from tests.fake_llm import FakeLLM

pytestmark = pytest.mark.slow
SECRET = "sk-test-SECRET-4242"


def hostile_run(tmp_path: Path, sandbox_setting: str) -> tuple[Path, subprocess.CompletedProcess[str]]:
    with FakeLLM(["attack"]) as llm:
        config = example_config(
            llm=f'base_url = "{llm.url}"\nmodel = "fake-coder"\napi_key_env = "EVOLVE_TEST_KEY"\ntimeout_s = 5\n'
                "max_retries = 0\nedit_retries = 0\nmax_concurrent = 1",
            evaluation='command = "{python} check.py --kernel-dir {kernel_dir}"\nfiles = ["check.py"]\ngpus = []\n'
                       f'slots = 1\ntimeout_s = 60\nsandbox = "{sandbox_setting}"',
            evolution="operators = { mutate = 1.0 }\nislands = 1\npopulation = 2\nseed = 7\npipeline_depth = 1")
        repo = make_repo(tmp_path / "repo", config)
        proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "2",
                      env={"EVOLVE_TEST_KEY": SECRET, "EVOLVE_SANDBOX": ""})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return repo, proc


def everything_in_git(repo: Path) -> str:
    return git(repo, "log", "--all", "-p", "--format=%B") + git(repo, "log", "-p", NOTES_REF)


@pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox here: {sandbox.unavailable()}")
def test_the_sandbox_stops_every_door(tmp_path: Path) -> None:
    repo, proc = hostile_run(tmp_path, "on")
    assert proc.stdout.splitlines()[0].startswith("sandbox: on")
    snap = Store(repo).snapshot("r1")
    attack = snap.candidates["00002"]
    assert attack.result is not None and attack.result.status == "crash" and attack.score is None
    log = attack.result.line.get("log", "")
    assert "ATTACK" in log and "STOLEN" not in log and "repository: not found" in log, log
    assert SECRET not in everything_in_git(repo)
    assert not (repo / "PWNED.txt").exists() and git(repo, "status", "--porcelain") == ""
    seed = snap.candidates["00001"]
    assert len(seed.results) == 1 and not seed.results[0].line.get("forged")
    assert snap.best_commit == seed.commit


def test_without_a_sandbox_forged_notes_and_best_never_count(tmp_path: Path) -> None:
    repo, proc = hostile_run(tmp_path, "off")
    assert proc.stdout.splitlines()[0].startswith("WARNING: sandbox off")
    snap = Store(repo).snapshot("r1")
    attack, seed = snap.candidates["00002"], snap.candidates["00001"]
    assert attack.result is not None and attack.result.status == "crash"  # its own forged line is data
    assert len(seed.results) == 1 and not seed.results[0].line.get("forged"), seed.results
    assert snap.best_commit == seed.commit
    assert "put it back" in proc.stdout  # the engine said what it undid
