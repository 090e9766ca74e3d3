"""Engine behaviour below the CLI: the evaluation cache and the reconciliation of `best`."""

from __future__ import annotations

import asyncio
from pathlib import Path

from evolver.records.config import load_config
from evolver.records.store import Store
from evolver.run.engine import Engine
from evolver.run.opening import open_run
from evolver.run.progress import Budget
from evolver.search.operators import Proposal, decode
from tests.conftest import git


def engine_for(repo: Path, n: int) -> Engine:
    store = Store(repo)
    config = load_config(repo / "examples/sort/evolve.toml", repo)
    say = lambda line: None
    return Engine(config, store, open_run(config, store, "r1", create=True, say=say), Budget(max_candidates=n), say)


def test_identical_kernel_reuses_the_result(repo: Path) -> None:
    engine = engine_for(repo, 1)
    asyncio.run(engine.run_async())
    seed = engine.snapshot.candidates["00001"]
    files = decode(engine.store.read_files(seed.commit, engine.config.problem.kernel_dir))
    job = engine._admit(Proposal("mutate", seed, files, "same code by another route"))
    assert job is None  # nothing to evaluate
    twin = engine.snapshot.candidates["00002"]
    assert twin.result is not None and twin.result.cached_from == "00001"
    assert twin.score == seed.score
    engine.store.unlock()


def test_best_is_put_right_after_a_crash_before_it_moved(repo: Path) -> None:
    engine = engine_for(repo, 6)
    asyncio.run(engine.run_async())
    engine.store.unlock()
    right = git(repo, "rev-parse", "best").strip()
    seed = engine.snapshot.candidates["00001"].commit
    git(repo, "update-ref", "refs/heads/best", seed)  # as if killed between a note and the move of best
    engine_for(repo, 6).store.unlock()
    assert git(repo, "rev-parse", "best").strip() == right


def test_llm_concurrency_follows_the_slots_unless_set(tmp_path: Path) -> None:
    import random

    from evolver.search.breed import llm_operators
    from tests.conftest import example_config

    (tmp_path / "seeds" / "mergesort").mkdir(parents=True)
    (tmp_path / "check.py").write_text("")

    def client_limit(llm_section: str, slots: int) -> int:
        path = tmp_path / "evolve.toml"
        path.write_text(example_config(llm=llm_section))
        client, _ = llm_operators(load_config(path, tmp_path), random.Random(0), lambda line: None, slots)
        assert client is not None
        return client.config.max_concurrent

    server = 'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\napi_key_env = ""'
    assert client_limit(server, 1) == 4 and client_limit(server, 8) == 16  # two per evaluation slot
    assert client_limit(server + "\nmax_concurrent = 3", 8) == 3  # what the user set stands
