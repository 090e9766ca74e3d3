"""`evolve try`: a kernel directory judged as a candidate would be, for agents and people; nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import evolve, git, make_repo

pytestmark = pytest.mark.slow


def refs_and_notes(repo: Path) -> str:
    return git(repo, "for-each-ref") + git(repo, "status", "--porcelain")


def test_try_judges_a_directory_and_compares_it_with_best(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    sort = repo / "examples" / "sort"
    assert evolve(sort, "start", "--max-candidates", "3").returncode == 0
    before = refs_and_notes(repo)
    good = evolve(sort, "try", "seeds/mergesort")
    assert good.returncode == 0, good.stdout + good.stderr
    first = good.stdout.splitlines()[0]
    assert first.startswith("ok ") and " us (full mode, " in first
    assert good.stdout.splitlines()[1].startswith("against r1/")  # what `best` holds
    data = json.loads(evolve(sort, "try", "seeds/mergesort", "--against", "1", "--json").stdout)
    assert data["status"] == "ok" and data["reference"]["id"] == "00001" and data["harness"]
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "sort.py").write_text("def sort_list(values) return values\n")
    bad = evolve(sort, "try", str(broken))
    assert bad.returncode == 1 and bad.stdout.startswith("compile_error") and "why: " in bad.stdout, bad.stdout
    assert refs_and_notes(repo) == before  # no commit, branch, note or file of the user's changed


def test_try_without_a_directory_says_which(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    proc = evolve(repo / "examples" / "sort", "try")  # the kernel directory exists only once a run checks out
    assert proc.returncode == 1 and "no such directory" in proc.stderr and "Traceback" not in proc.stderr
