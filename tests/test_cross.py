"""`cross`: two parents from different islands merged three-way with git, as a real merge commit,
without any LLM call when the merge is clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolver.records.store import Store
from tests.conftest import COUNTING, counting_repo, evolve, example_config, git

pytestmark = pytest.mark.slow


def test_clean_crossovers_are_merge_commits_with_both_changes(tmp_path: Path) -> None:
    repo = counting_repo(tmp_path / "repo", example_config(
        evaluation=COUNTING,  # scores that do not vary with the machine's load: the same parents meet every time
        evolution="operators = { tune = 1.0, cross = 2.0 }\nislands = 2\npopulation = 4\nseed = 5\n"
                  "bandit = false"))  # fixed weights: this test is about the merges, not the choice of operator
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "40")
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
        merged = git(repo, "show", f"{c.commit}:examples/sort/kernel/sort.py").splitlines()
        merge_base = git(repo, "merge-base", a.commit, b.commit).strip()
        base = git(repo, "show", f"{merge_base}:examples/sort/kernel/sort.py").splitlines()
        for parent in (a, b):  # what each parent changed since their common ancestor survives the merge
            mine = git(repo, "show", f"{parent.commit}:examples/sort/kernel/sort.py").splitlines()
            assert set(mine) - set(base) <= set(merged)
        assert merged not in ([], *(git(repo, "show", f"{p.commit}:examples/sort/kernel/sort.py").splitlines()
                                    for p in (a, b)))  # and the child is neither parent
    lineage = evolve(repo / "examples" / "sort", "lineage", crosses[0].id).stdout
    assert "merge with" in lineage.splitlines()[0]


def test_conflicted_crossovers_are_resolved_by_the_llm(tmp_path: Path) -> None:
    """Both islands change the same line, so git cannot merge them: the LLM gets both sides (what each
    changed from the common ancestor and how each performed) and its resolution is a merge commit with
    both parents, evaluated like any candidate."""
    from tests.fake_llm import FakeLLM

    with FakeLLM(["auto"] * 60) as llm:
        repo = counting_repo(tmp_path / "repo", example_config(
            evaluation=COUNTING,
            llm=f'base_url = "{llm.url}"\nmodel = "fake-coder"\napi_key_env = ""\nedit_retries = 0\n'
                "max_concurrent = 1\nmax_tokens = 500\ncontext_tokens = 6000",
            evolution="operators = { mutate = 1.0, cross = 2.0 }\nislands = 2\npopulation = 4\nseed = 2\n"
                      "pipeline_depth = 1"))
        proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "14")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        prompts = [body["messages"][1]["content"] for _, body in llm.log]
    snap = Store(repo).snapshot("r1")
    resolved = [c for c in snap.candidates.values() if c.op == "cross" and c.trailers.get("Merge") == "resolved"]
    assert resolved, proc.stdout
    merge_prompts = [p for p in prompts if "git could not merge" in p]
    assert len(merge_prompts) >= len(resolved)
    for c in resolved:
        a, b = (snap.candidates[p] for p in c.parent_ids)
        assert c.parents == (a.commit, b.commit) and a.island != b.island
        assert git(repo, "rev-list", "--parents", "-n", "1", c.commit).split()[1:] == [a.commit, b.commit]
        assert c.result is not None and c.result.status == "ok"
        assert c.trailers.get("Model") == "fake-coder" and "Tokens" in c.trailers
        prompt = next(p for p in merge_prompts if f"What {a.id} (island {a.island})" in p
                      and f"What {b.id} (island {b.island})" in p)
        assert prompt.count("Its result:") == 2 and "score" in prompt
        merged = git(repo, "show", f"{c.commit}:examples/sort/kernel/sort.py")
        values = [int(git(repo, "show", f"{p.commit}:examples/sort/kernel/sort.py").split("CUTOFF = ")[1].split()[0])
                  for p in (a, b)]
        assert f"CUTOFF = {sum(values)}" in merged  # the scripted resolution: neither parent's tree
    lineage = evolve(repo / "examples" / "sort", "lineage", resolved[0].id).stdout
    assert "merge with" in lineage.splitlines()[0]
