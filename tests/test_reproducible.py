"""A run with a fixed seed, a scripted LLM and a deterministic evaluator is reproducible: the same
candidates, in the same order, with the same parents and the same code."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolver.records.store import Store
from tests.conftest import COUNTING, counting_repo, evolve, example_config
from tests.fake_llm import FakeLLM

pytestmark = pytest.mark.slow



def run_once(tmp_path: Path, name: str) -> list[tuple[str, str, tuple[str, ...], str, str]]:
    with FakeLLM(["good", "break_build", "good", "malformed", "good", "noop", "noop", "noop", "good"] * 3) as llm:
        repo = counting_repo(tmp_path / name, example_config(
            evaluation=COUNTING,
            llm=f'base_url = "{llm.url}"\nmodel = "fake-coder"\napi_key_env = ""\nedit_retries = 1\n'
                "max_concurrent = 1\nmax_tokens = 500\ncontext_tokens = 6000",
            evolution="operators = { mutate = 1.0, tune = 1.0, fix = 0.5 }\nislands = 2\npopulation = 3\n"
                      "seed = 11\npipeline_depth = 1"))
        proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "16")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    snap = Store(repo).snapshot("r1")
    return [(c.id, c.op, c.parent_ids, c.kernel_tree, str(c.result.score if c.result else None))
            for c in sorted(snap.candidates.values(), key=lambda c: c.id)]


def test_same_seed_same_run(tmp_path: Path) -> None:
    first = run_once(tmp_path, "a")
    second = run_once(tmp_path, "b")
    assert len(first) == 16 and {op for _, op, *_ in first} >= {"seed", "tune", "mutate"}
    assert first == second
