"""kill -9 of `evolve start` at random moments, restarting each time: nothing finished is lost."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evolver.records.store import Store
from tests.conftest import example_config, git, make_repo

pytestmark = pytest.mark.slow


def test_kill_nine_at_eight_random_moments_of_the_run(tmp_path: Path) -> None:
    slower = 'command = "{python} check.py --kernel-dir {kernel_dir} --repeats 10"\nfiles = ["check.py"]\n' \
             "gpus = []\nslots = 2\ntimeout_s = 60"
    repo = make_repo(tmp_path / "repo", example_config(evaluation=slower))
    cwd = repo / "examples" / "sort"
    (repo / "README.md").write_text("the user's unsaved edit\n")  # a dirty work tree must survive too
    before = git(repo, "status", "--porcelain"), (repo / ".git" / "index").read_bytes()
    rng = random.Random(20261130)
    kills = 0
    for _ in range(8):  # each kill at a random moment of the run's own progress, never of the clock:
        proc = subprocess.Popen([sys.executable, "-m", "evolver", "start", "--max-candidates", "45"],
                                cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout is not None
        proc.stdout.readline()  # the engine is up
        for _ in range(rng.randint(0, 2)):  # after 0-2 more results (a restart adds at most ~5 of 45, so
            proc.stdout.readline()  # no machine is fast enough to finish between kills) ...
        time.sleep(rng.uniform(0.0, 0.05))  # ... and a moment later: mid-proposal, -evaluation or -write
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
    assert kills == 8, "the run finished between kills"
    final = subprocess.run([sys.executable, "-m", "evolver", "start", "--max-candidates", "45"], cwd=cwd,
                           capture_output=True, text=True, timeout=300)
    assert final.returncode == 0, final.stdout + final.stderr
    snap = Store(repo).snapshot("r1")
    assert len(snap.candidates) == 45
    assert snap.malformed_notes == 0
    for c in snap.candidates.values():
        assert len(c.results) == 1, f"{c.id} has {len(c.results)} results"
    best = min((c for c in snap.candidates.values() if c.score is not None), key=lambda c: c.score or 0)
    assert git(repo, "rev-parse", "best").strip() == best.commit
    ids = sorted(snap.candidates)
    assert ids == [f"{i:05d}" for i in range(1, 46)]
    assert (git(repo, "status", "--porcelain"), (repo / ".git" / "index").read_bytes()) == before
    assert sum(1 for c in snap.candidates.values() if c.op == "seed") == 1


def test_ctrl_c_stops_gracefully_and_resumes(tmp_path: Path) -> None:
    """Ctrl-C as soon as the first result is printed (a moment defined by the run, not by the clock, so no
    machine is too slow or too fast for it): the evaluations in flight finish, the run resumes to its budget."""
    slower = 'command = "{python} check.py --kernel-dir {kernel_dir} --repeats 30"\nfiles = ["check.py"]\n' \
             "gpus = []\nslots = 2\ntimeout_s = 60"
    repo = make_repo(tmp_path / "repo", example_config(evaluation=slower))
    cwd = repo / "examples" / "sort"
    proc = subprocess.Popen([sys.executable, "-m", "evolver", "start", "--max-candidates", "12"], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("[   1/12]"):
            proc.send_signal(signal.SIGINT)
            break
    out = "".join(lines) + proc.communicate(timeout=60)[0]
    assert proc.returncode == 130, out
    assert "stopping: no new candidates" in out and "Traceback" not in out
    snap = Store(repo).snapshot("r1")
    assert 1 <= sum(1 for c in snap.candidates.values() if c.results) < 12, out
    resumed = subprocess.run([sys.executable, "-m", "evolver", "start", "--max-candidates", "12"], cwd=cwd,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    snap = Store(repo).snapshot("r1")
    assert len(snap.candidates) == 12 and all(len(c.results) == 1 for c in snap.candidates.values())
