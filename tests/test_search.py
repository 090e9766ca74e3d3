"""The search's choices: migration between islands, novelty in parent selection, and the bandit over
(operator, model); pure functions first, then a run against a scripted LLM server with two models."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from evolver.records.candidates import Candidate
from evolver.records.store import Store
from evolver.search import bandit
from evolver.search.population import code_signature, island_members, select_parent
from tests.conftest import COUNTING, counting_repo, evolve, example_config
from tests.fake_llm import FakeLLM


def cand(cid: str, island: int, score: float | None, op: str = "tune", parents: tuple[str, ...] = (),
         status: str = "ok", **trailers: str) -> Candidate:
    result = ({"status": status, "score": score},) if status else ()
    return Candidate(run="r", id=cid, commit=f"c{cid}", parents=parents, created=0, subject="",
                     trailers={"Op": op, "Island": str(island), **trailers}, results=result)


def test_migrants_arrive_at_each_boundary_from_the_previous_island() -> None:
    everyone = [cand("00001", 0, 50.0, op="seed"), cand("00002", 1, 40.0, op="seed")]
    everyone += [cand(f"{i:05d}", i % 2, 40.0 - i) for i in range(3, 13)]  # ten children, each better
    pool = [c for c in everyone if c.score is not None]
    members, migrants = island_members(pool, everyone, 1, 2, 4)
    # boundaries after the 4th and 8th child (00006, 00010): island 0's best by then were 00006, 00010
    assert migrants == {"00006", "00010"}
    assert {c.id for c in members} == {c.id for c in pool if c.island == 1} | migrants
    assert island_members(pool, everyone, 1, 2, 0)[1] == set()  # migrate_every = 0: never
    assert island_members(pool, everyone, 1, 1, 4)[1] == set()  # one island: nobody to exchange with
    lonely = [c for c in pool if c.island == 0]  # an island without members breeds from everyone
    assert island_members(lonely, everyone, 1, 2, 4) == (lonely, set())


def test_novelty_skips_near_duplicates_and_spreads_over_the_elite() -> None:
    a, a_commented, b, c = cand("00001", 0, 1.0), cand("00002", 0, 1.1), cand("00003", 0, 2.0), cand("00004", 0, 3.0)
    signatures = {"00001": "x", "00002": "x", "00003": "y", "00004": "z"}
    rng = random.Random(1)
    picks = Counter(select_parent([a, a_commented, b, c], 3, 0.0, rng, {}, lambda k: signatures[k.id]).id
                    for _ in range(600))
    assert "00002" not in picks  # the same code as a better candidate: never bred
    bred = {"00001": 20}
    picks_bred = Counter(select_parent([a, a_commented, b, c], 3, 0.0, rng, bred, lambda k: signatures[k.id]).id
                         for _ in range(600))
    assert picks_bred["00001"] < picks["00001"] / 4  # a parent with many children already yields its turn
    assert code_signature({"k.py": b"X = 1  \n\n# note\nY = 2\n"}) == code_signature({"k.py": b"X = 1\nY = 2\n"})
    assert code_signature({"k.py": b"X = 1\n"}) != code_signature({"k.py": b"X = 2\n"})


def test_bandit_prefers_the_most_improvement_per_dollar() -> None:
    seed = cand("00001", 0, 100.0, op="seed")
    history = [seed]
    for i in range(2, 32):  # cheap-model improves a third of the time, pricey-model as often at 20x the cost
        model = "cheap" if i % 2 else "pricey"
        better = i % 3 == 0
        history.append(cand(f"{i:05d}", 0, 90.0 if better else 110.0, op="mutate", parents=(seed.commit,),
                            Model=model, **{"Cost-USD": "0.01" if model == "cheap" else "0.2"}))
    for i in range(32, 42):  # tune never improves
        history.append(cand(f"{i:05d}", 0, 120.0, parents=(seed.commit,)))
    rng = random.Random(0)
    picks = Counter(bandit.choose({"mutate": 1.0, "tune": 1.0}, ["cheap", "pricey"], history, 0.01, rng).arm
                    for _ in range(500))
    assert picks.most_common(1)[0][0] == "mutate@cheap" and picks["mutate@cheap"] > 0.7 * 500
    stats = bandit.observe(history, 0.01)
    assert stats["mutate@cheap"].tries == 15 and stats["tune"].improved == 0
    assert stats["mutate@pricey"].cost == pytest.approx(15 * 0.21)
    with pytest.raises(ValueError):
        bandit.choose({"mutate": 1.0}, [], history, 0.01, rng)  # an LLM operator without models


@pytest.mark.slow
def test_a_run_learns_which_model_to_ask(tmp_path: Path) -> None:
    """Two models behind one scripted server: one replies with good edits, the other with malformed ones.
    The bandit's choice is in every child's trailers, and the good model takes over."""
    with FakeLLM([], by_model={"good-coder": "good", "bad-coder": "malformed"}) as llm:
        repo = counting_repo(tmp_path / "repo", example_config(
            evaluation=COUNTING,
            llm=f'base_url = "{llm.url}"\napi_key_env = ""\nedit_retries = 0\nmax_concurrent = 1\n'
                "max_tokens = 500\ncontext_tokens = 6000\n"
                'models = [{ name = "good-coder", input_usd_per_mtok = 1.0, output_usd_per_mtok = 4.0 },'
                ' { name = "bad-coder", input_usd_per_mtok = 1.0, output_usd_per_mtok = 4.0 }]',
            evolution="operators = { mutate = 1.0 }\nislands = 1\npopulation = 4\nseed = 4\npipeline_depth = 1"))
        proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "30")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    children = sorted((c for c in Store(repo).snapshot("r1").candidates.values() if c.op != "seed"),
                      key=lambda c: c.id)
    assert all(c.trailers.get("Bandit", "").startswith(f"mutate@{c.trailers['Model']} ") for c in children)
    late = Counter(c.trailers["Model"] for c in children[len(children) // 2:])
    assert late["good-coder"] > 2 * late["bad-coder"], late
    assert all(c.result and c.result.status == "patch_failed" for c in children
               if c.trailers["Model"] == "bad-coder")
