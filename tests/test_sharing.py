"""`evolve push` / `evolve pull`: two clones of one problem each run 20 candidates and meet through a bare
remote; afterwards both have all 40 results, the same `best` (the better of the two runs), a clean `git fsck`,
and each goes on with its own run."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evolver.records.store import Store
from tests.conftest import evolve, example_config, git, make_repo

pytestmark = pytest.mark.slow
CONFIG = example_config(evolution="operators = { tune = 1.0 }\nseed = 5")


def notes(repo: Path) -> int:
    """Result lines in the notes (a kernel both clones made is one commit: its note keeps both results)."""
    store = Store(repo)
    return sum(len(store.note_lines(line.split()[1])) for line in git(repo, "notes", "--ref", "evolve", "list").splitlines())


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


def test_two_clones_merge_their_runs_through_a_remote(tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    a = make_repo(tmp_path / "a", CONFIG)
    git(a, "remote", "add", "origin", str(origin))
    git(a, "push", "-q", "origin", "main")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "b"))
    b = tmp_path / "b"
    sort_a, sort_b = a / "examples" / "sort", b / "examples" / "sort"
    for sort in (sort_a, sort_b):
        ok(evolve(sort, "start", "--max-candidates", "20", "-q"))
    assert notes(a) == notes(b) == 20

    assert "pushed to origin: r1" in ok(evolve(sort_a, "push"))
    pulled = ok(evolve(sort_b, "pull"))  # origin's r1 is a's, pushed first: b's own run moves aside
    assert notes(b) == 40 and "this clone's is r1-" in pulled and "run r1: 20 candidate(s)" in pulled, pulled
    assert "pushed to origin: r1-" in ok(evolve(sort_b, "push"))
    ok(evolve(sort_a, "pull"))
    assert notes(a) == 40

    runs_a, runs_b = Store(a).runs(), Store(b).runs()
    assert len(runs_a) == len(runs_b) == 2 and set(runs_a) == set(runs_b), (runs_a, runs_b)
    scores = [c.score for run in runs_a for c in Store(a).snapshot(run).candidates.values() if c.score is not None]
    best_a, best_b = git(a, "rev-parse", "best"), git(b, "rev-parse", "best")
    assert best_a == best_b  # the better of the two runs, on both sides
    held = next(c for run in runs_a for c in Store(a).snapshot(run).candidates.values() if c.commit == best_a.strip())
    assert held.score == min(scores)
    for repo in (a, b):
        fsck = subprocess.run(["git", "fsck", "--no-progress"], cwd=repo, capture_output=True, text=True)
        assert fsck.returncode == 0 and "error" not in fsck.stderr + fsck.stdout, fsck.stderr

    status = json.loads(ok(evolve(sort_a, "status", "--json")))
    assert status["run"] == "r1" and [o["candidates"] for o in status["other_runs"]] == [20]
    assert "also run r1: 20 candidates" in ok(evolve(sort_b, "status"))  # b's own run is r1-<b>
    # each goes on with its own run, never the one it pulled
    ok(evolve(sort_a, "start", "--max-candidates", "22", "-q"))
    assert len(Store(a).snapshot("r1").candidates) == 22 and notes(a) == 42


def test_pull_without_a_remote_says_so_in_one_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CONFIG)
    proc = evolve(repo / "examples" / "sort", "pull")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == "evolve: error: git fetch failed: fatal: 'origin' does not appear to be a git repository"


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A port whose server takes every connection and never says a byte (a remote that hangs)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    held: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    done.set()
    thread.join()
    for conn in [*held, server]:
        conn.close()


@pytest.mark.parametrize("scheme", ["http", "ssh"])
def test_a_remote_that_never_answers_ends_the_pull_in_one_line(tmp_path: Path, silent_server: int,
                                                               scheme: str) -> None:
    """A remote that accepts the connection and then says nothing (over HTTP or SSH) ends `evolve pull` and `push`
    after EVOLVE_GIT_STALL_S seconds with git's reason in one line, instead of waiting forever."""
    repo = make_repo(tmp_path / "repo", CONFIG)
    url = f"{scheme}://127.0.0.1:{silent_server}/x.git"
    for verb in ("pull", "push"):
        began = time.monotonic()
        proc = evolve(repo / "examples" / "sort", verb, url, env={"EVOLVE_GIT_STALL_S": "2"}, timeout=60)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith("evolve: error: git fetch failed"), \
            proc.stderr
        assert time.monotonic() - began < 30


def test_a_malformed_stall_limit_is_one_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", CONFIG)
    proc = evolve(repo / "examples" / "sort", "pull", env={"EVOLVE_GIT_STALL_S": "soon"})
    assert proc.returncode == 1 and proc.stderr.strip() == \
        "evolve: error: EVOLVE_GIT_STALL_S is 'soon': a whole number of seconds, at least 1", proc.stderr
