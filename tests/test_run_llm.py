"""End to end with an LLM: a scripted OpenAI-compatible server over real HTTP, every way a reply breaks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolver.records.refs import REPLIES_REF
from evolver.records.store import Store
from tests.conftest import evolve, example_config, git, make_repo
from tests.fake_llm import FakeLLM

pytestmark = pytest.mark.slow

SCRIPT = [
    ("00002", ["good"], "ok"),
    ("00003", ["malformed", "good"], "ok"),
    ("00004", ["noop", "noop"], "patch_failed"),
    ("00005", ["break_build"], "compile_error"),
    ("00006", ["break_answer"], "incorrect"),
    ("00007", ["http429", "http500", "good"], "ok"),
    ("00008", ["hang", "good"], "ok"),
    ("00009", ["http500", "http500", "http500"], "llm_error"),
    ("00010", ["real:freeform:0", "real:search_replace:0"], "patch_failed"),
    ("00011", ["real:search_replace:1", "real:search_replace:2"], "patch_failed"),
    ("00012", ["real:search_replace:3", "rewrite"], "ok"),
]


def llm_config(url: str) -> str:
    return example_config(
        llm=f'base_url = "{url}"\nmodel = "fake-coder"\napi_key_env = "EVOLVE_TEST_KEY"\n'
            "timeout_s = 1.5\nmax_retries = 2\nedit_retries = 1\nmax_concurrent = 1\nmax_tokens = 500\n"
            "context_tokens = 6000\ninput_usd_per_mtok = 1.0\noutput_usd_per_mtok = 2.0",
        evaluation='command = "{python} check.py --kernel-dir {kernel_dir}"\nfiles = ["check.py"]\ngpus = []\n'
                   "slots = 1\ntimeout_s = 60",
        evolution="operators = { mutate = 1.0 }\nislands = 1\npopulation = 2\nseed = 7\npipeline_depth = 1")


def test_every_kind_of_reply_ends_in_the_right_status(tmp_path: Path) -> None:
    steps = [step for _, group, _ in SCRIPT for step in group]
    with FakeLLM(steps) as llm:
        repo = make_repo(tmp_path / "repo", llm_config(llm.url))
        proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "12",
                      env={"EVOLVE_TEST_KEY": "sk-test-secret"})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert not llm.script, f"unused steps: {llm.script}"
    snap = Store(repo).snapshot("r1")
    got = {c.id: (c.result.status if c.result else None) for c in snap.candidates.values()}
    assert got == {"00001": "ok", **{cid: status for cid, _, status in SCRIPT}}
    c = snap.candidates
    assert c["00003"].trailers["Attempts"] == "2" and c["00003"].trailers["Edit"] == "exact"
    assert c["00012"].trailers["Edit"] == "rewrite"
    assert abs(c["00003"].cost_usd - 2 * (1000 * 1.0 + 200 * 2.0) / 1e6) < 1e-9
    assert c["00003"].trailers["Tokens"] == "2000+400" and c["00003"].trailers["Model"] == "fake-coder"
    assert "qr.cu: no such file in the kernel directory" in c["00010"].result.error
    assert "HTTP 500" in c["00009"].result.error
    assert "SyntaxError" in c["00005"].result.error
    # failed attempts are kept as candidates with their parent's kernel, never evaluated
    assert c["00004"].kernel_tree == snap.by_commit()[c["00004"].parents[0]].kernel_tree
    # the key never reaches git or the evaluator
    assert "sk-test-secret" not in git(repo, "log", "--all", "-p") + git(repo, "notes", "--ref", "evolve", "list")
    # the request carried the kernel source and the requested model
    status = json.loads(evolve(repo / "examples" / "sort", "status", "--json").stdout)
    assert status["llm_tokens"] > 0 and status["llm_cost_usd"] > 0
    bodies = [body for _, body in llm.log]
    assert all(b["model"] == "fake-coder" and b["max_tokens"] == 500 for b in bodies)
    assert "def sort_list" in bodies[0]["messages"][1]["content"]
    # a retry after a bad edit carries the diagnostic back to the model
    assert "could not be applied" in bodies[2]["messages"][-1]["content"]
    assert "\nexamples/sort/kernel/sort.py\n<<<<<<< SEARCH\n" in bodies[2]["messages"][-1]["content"]  # the form again
    # what the model said is kept in git, attempt by attempt, with why it was not applied
    store = Store(repo)
    noop = store.note_lines(c["00004"].commit, REPLIES_REF)
    assert [r["attempt"] for r in noop] == [1, 2] and all(r.get("error") for r in noop)
    assert [bool(r.get("error")) for r in store.note_lines(c["00003"].commit, REPLIES_REF)] == [True, False]
    shown = evolve(repo / "examples" / "sort", "show", "00004", "--reply").stdout
    assert shown.count("not applied:") == 2 and "attempt 2, fake-coder" in shown
    assert "no LLM made it" in evolve(repo / "examples" / "sort", "show", "00001", "--reply").stdout
    # the funnel accounts for every reply and says why the children that fell out did
    f = status["funnel"]["mutate@fake-coder"]
    assert (f["made"], f["replies"], f["applied"], f["compiled"], f["correct"]) == (11, 15, 7, 6, 5), f
    assert sum(f["why"].values()) == 11 - 5 and f["why"]["incorrect"] == f["why"]["the edit changed nothing"] == 1
    assert any(why.startswith("compile error: sort.py: SyntaxError") for why in f["why"]), f["why"]
    text = evolve(repo / "examples" / "sort", "status").stdout
    assert "mutate@fake-coder: 11 made: 15 replies -> 7 applied -> 6 compiled -> 5 correct -> " in text, text


def test_no_key_in_environment_runs_tune_alone(tmp_path: Path) -> None:
    with FakeLLM([]) as llm:
        repo = make_repo(tmp_path / "repo", llm_config(llm.url).replace("mutate = 1.0", "mutate = 1.0, tune = 1.0"))
        proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "4", env={"EVOLVE_TEST_KEY": ""})
        assert proc.returncode == 0 and "$EVOLVE_TEST_KEY is not set" in proc.stdout
        assert llm.log == []


@pytest.mark.parametrize("concurrent", [1, 3])
def test_a_budget_of_n_candidates_makes_n_and_asks_for_no_reply_it_cannot_use(tmp_path: Path,
                                                                             concurrent: int) -> None:
    """LLM operators only: `--max-candidates 4` makes the seed and three children, and the server is asked
    exactly three times (a reply in flight when the budget is reached is used, never dropped)."""
    from tests.conftest import COUNTING, counting_repo, fake_llm

    with FakeLLM(["good"] * 10) as llm:
        repo = counting_repo(tmp_path / "repo", example_config(
            evaluation=COUNTING,
            llm=fake_llm(llm.url, max_concurrent=concurrent),
            evolution=f"operators = {{ mutate = 1.0 }}\nislands = 1\npopulation = 4\nseed = 1\n"
                      f"pipeline_depth = {concurrent}"))
        proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "4")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        requests = len(llm.log)
    snap = Store(repo).snapshot("r1")
    assert len(snap.candidates) == 4, sorted(snap.candidates)
    assert requests == 3
    assert "4 new candidate(s)" in proc.stdout


@pytest.mark.parametrize("slots", [1, 2, 4])
def test_the_candidate_budget_makes_exactly_that_many_at_any_concurrency(tmp_path: Path, slots: int) -> None:
    """`--max-candidates 4` with a mutate-only LLM makes 4 candidates (the seed and three children), whatever the
    pipeline's depth (two proposals per slot): proposals in flight count towards the budget and are made,
    never thrown away when it is reached (with 2 slots it once made the seed alone)."""
    with FakeLLM(["good"] * 12) as llm:
        config = example_config(
            llm=f'base_url = "{llm.url}"\nmodel = "fake-coder"\napi_key_env = "EVOLVE_TEST_KEY"\n'
                "timeout_s = 5\nmax_tokens = 500\ncontext_tokens = 6000",
            evaluation='command = "{python} check.py --kernel-dir {kernel_dir}"\nfiles = ["check.py"]\n'
                       f"gpus = []\nslots = {slots}\ntimeout_s = 60",
            evolution="operators = { mutate = 1.0 }\nislands = 1\npopulation = 2\nseed = 7")
        repo = make_repo(tmp_path / "repo", config)
        for run in ("r1", "r2"):
            proc = evolve(repo / "examples" / "sort", "start", "--new-run", "--max-candidates", "4",
                          env={"EVOLVE_TEST_KEY": "sk-test"})
            assert proc.returncode == 0, proc.stdout + proc.stderr
            made = Store(repo).snapshot(run).candidates
            assert sorted(made) == ["00001", "00002", "00003", "00004"], proc.stdout
            assert f"run {run}: 4 new candidate(s)" in proc.stdout and "reached max_candidates (4)" in proc.stdout


def test_the_prompt_fits_the_context_the_endpoint_says_its_model_holds(tmp_path: Path) -> None:
    """With `context_tokens` left out of evolve.toml, a server whose model holds 1,600 tokens (GET /models, as
    vLLM says `max_model_len`) gets prompts fitted to 1,600 - max_tokens instead of the 128k default; set in
    evolve.toml, the configured budget stands."""
    from evolver.search.llm import estimate_tokens

    with FakeLLM(["good"] * 6, context=1600) as llm:
        config = example_config(
            llm=f'base_url = "{llm.url}"\nmodel = "fake-coder"\napi_key_env = ""\ntimeout_s = 5\nmax_tokens = 500',
            evaluation='command = "{python} check.py --kernel-dir {kernel_dir}"\nfiles = ["check.py"]\ngpus = []\n'
                       "slots = 1\ntimeout_s = 60",
            evolution="operators = { mutate = 1.0 }\nislands = 1\npopulation = 2\nseed = 7")
        repo = make_repo(tmp_path / "repo", config)
        proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "3")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "the endpoint says its model holds 1600 tokens" in proc.stdout, proc.stdout
        sizes = [sum(estimate_tokens(m["content"]) for m in body["messages"]) for _, body in llm.log]
    assert sizes and max(sizes) <= 1600 - 500, sizes
