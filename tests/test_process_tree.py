"""`kill -9` of the engine during a long evaluation: no process of that evaluation survives, even one that
started its own session; the resumed run judges the candidate exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from evolver.evaluation import sandbox
from evolver.records.store import Store
from tests.conftest import ROOT, evolve, example_config, git, make_repo

pytestmark = pytest.mark.slow

SLOW = '''import os, subprocess, sys, time
marker = sys.argv[1]
# a daemon in its own session, holding our stdout open, and a plain child: all must die with the evaluation
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker], start_new_session=True)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker])
print("started", flush=True)
time.sleep(600)
'''


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


def run_until_evaluating(repo: Path, marker: str) -> subprocess.Popen[str]:
    engine = subprocess.Popen([sys.executable, "-m", "evolver", "start", "--max-candidates", "1"],
                              cwd=repo / "examples" / "sort", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env={**os.environ, "EVOLVE_SANDBOX": "", "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 60
    while len(processes_with(marker)) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(processes_with(marker)) >= 3, "the slow evaluator did not start its processes"
    return engine


@pytest.mark.parametrize("setting", ["on", "off"])
def test_kill_9_leaves_no_evaluation_process_and_resumes_once(tmp_path: Path, setting: str) -> None:
    if setting == "on" and sandbox.unavailable() is not None:
        pytest.skip(f"no sandbox here: {sandbox.unavailable()}")
    marker = f"evolve-orphan-{uuid.uuid4().hex}"
    repo = make_repo(tmp_path / "repo")
    (repo / "examples" / "sort" / "slow.py").write_text(SLOW)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a slow evaluator")
    toml = repo / "examples" / "sort" / "evolve.toml"
    judge = f'files = ["check.py", "slow.py"]\ngpus = []\nslots = 1\ntimeout_s = 600\nsandbox = "{setting}"'
    toml.write_text(example_config(evaluation=f'command = "{{python}} slow.py {marker} {{kernel_dir}}"\n{judge}'))
    engine = run_until_evaluating(repo, marker)
    os.kill(engine.pid, signal.SIGKILL)
    engine.wait()
    deadline = time.monotonic() + 5
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    if setting == "on":  # the sandbox's PID namespace dies with the engine
        assert processes_with(marker) == [], "processes of the killed evaluation survived"
    toml.write_text(example_config(evaluation=f'command = "{{python}} check.py --kernel-dir {{kernel_dir}}"\n{judge}'))
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "1", env={"EVOLVE_SANDBOX": ""})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert processes_with(marker) == [], "a survivor of the killed evaluation outlived the resumed start"
    seed = Store(repo).snapshot("r1").candidates["00001"]
    assert [r.status for r in seed.results] == ["ok"], seed.results
