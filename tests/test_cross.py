"""`cross`: two parents from different islands merged three-way with git, as a real merge commit,
without any LLM call when the merge is clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolver.store import Store
from tests.conftest import evolve, example_config, git, make_repo

pytestmark = pytest.mark.slow


def test_clean_crossovers_are_merge_commits_with_both_changes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", example_config(
        evolution="operators = { tune = 1.0, cross = 1.0 }\nislands = 2\npopulation = 4\nseed = 5"))
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "30")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "LLM operators off" not in proc.stdout  # cross needs no LLM: nothing was turned off
    snap = Store(repo).snapshot("r1")
    by_id = snap.candidates
    crosses = [c for c in by_id.values() if c.op == "cross"]
    assert crosses, proc.stdout
    for c in crosses:
        a, b = (by_id[p] for p in c.parent_ids)
        assert c.parents == (a.commit, b.commit) and a.island != b.island
        assert git(repo, "rev-list", "--parents", "-n", "1", c.commit).split()[1:] == [a.commit, b.commit]
        assert c.result is not None  # evaluated like any other candidate
        merged = git(repo, "show", f"{c.commit}:examples/sort/kernel/sort.py")
        for parent in (a, b):  # each parent's own change survives the merge
            base = git(repo, "show", f"{parent.parents[0]}:examples/sort/kernel/sort.py").splitlines()
            mine = git(repo, "show", f"{parent.commit}:examples/sort/kernel/sort.py").splitlines()
            for line in set(mine) - set(base):
                assert line in merged.splitlines() or parent.op == "cross"
    lineage = evolve(repo / "examples" / "sort", "lineage", crosses[0].id).stdout
    assert "merge with" in lineage.splitlines()[0]
