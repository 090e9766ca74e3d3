"""The mutation prompt: every part present, within the context budget even for a 500-line kernel and a
50-step lineage (`evolve prompt <id>` prints it)."""

from __future__ import annotations

import re
from pathlib import Path

from evolver.records.store import Store
from tests.conftest import Scripted, evolve, example_config, git, make_repo

BIG = "".join(f"x{i} = {i}  # padding line {i} of a long kernel source\n" for i in range(500))


def judged_here(repo: Path) -> dict[str, object]:
    """The judge version and device of a result measured on this machine for this repository's run."""
    from evolver.evaluation.evaluate import Evaluator, make_slots
    from evolver.records.config import find_config, load_config

    store = Store(repo)
    config = load_config(find_config(repo / "examples" / "sort"), repo)
    return {"harness": Evaluator(config, store, store.head_commit()).version, "gpu": make_slots(config)[0].fingerprint}


def build(tmp_path: Path, context_tokens: int) -> tuple[Path, Scripted]:
    repo = make_repo(tmp_path / "repo", example_config(
        problem='kernel_dir = "kernel"\nseeds = ["seeds/mergesort"]\nguidance = "GUIDANCE.md"',
        llm=f'api_key_env = ""\nmax_tokens = 1000\ncontext_tokens = {context_tokens}'))
    (repo / "examples/sort/GUIDANCE.md").write_text("Use insertion sort for short runs.\n" * 20)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "guidance")
    s = Scripted(repo)
    judged = judged_here(repo)  # what makes a result one the engine breeds from (and `evolve prompt` shows)
    s.add("00001", "seed", None, BIG, {**judged, "status": "ok", "score": 1000.0, "details": {
        "shapes": [{"shape": "20x32 dense", "mean_us": 1000.0}], "compile": {"registers": 40}}})
    parent = "00001"
    for i in range(2, 52):  # a 50-step lineage on island 0
        cid = f"{i:05d}"
        s.add(cid, "mutate", parent, BIG + f"y = {i}\n", {**judged, "status": "ok", "score": 1000.0 - i, "details": {
            "shapes": [{"shape": "20x32 dense", "mean_us": 1000.0 - i}], "compile": {"registers": 40}}},
              Model="m", Island="0")
        parent = cid
    for i, island in ((52, "1"), (53, "2")):  # the best of two other islands
        s.add(f"{i:05d}", "tune", "00001", BIG.replace("x7 = 7", f"x7 = {i}"), {**judged, "status": "ok", "score": 900.0},
              Island=island, Tune=f"x7={i}")
    return repo, s


def test_prompt_has_every_part_within_budget(tmp_path: Path) -> None:
    repo, _ = build(tmp_path, 24000)
    proc = evolve(repo / "examples" / "sort", "prompt", "00051")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for part in ("Guidance for this problem", "The kernel directory `examples/sort/kernel/` holds",
                 "padding line 499", "Result of this version (00051)", "per shape (mean time per call)",
                 "compiler resources", "What was tried along this lineage", "Ideas from other islands",
                 "00052 (island 1", "00053 (island 2", "SEARCH/REPLACE"):
        assert part in out, part
    used, budget = map(int, re.search(r"about (\d+) tokens \(\d+% of the prompt budget of (\d+)", out).groups())
    assert used <= budget == 23000
    assert out.count("\n- 000") == 50  # the whole lineage fits at this budget


def test_prompt_sheds_optional_parts_to_fit_a_small_budget(tmp_path: Path) -> None:
    repo, _ = build(tmp_path, 9500)
    proc = evolve(repo / "examples" / "sort", "prompt", "00051")
    assert proc.returncode == 0, proc.stderr
    used, budget = map(int, re.search(r"about (\d+) tokens \(\d+% of the prompt budget of (\d+)",
                                      proc.stdout).groups())
    assert used <= budget == 8500
    assert "padding line 499" in proc.stdout and "Result of this version" in proc.stdout  # never cut
    assert "Ideas from other islands" not in proc.stdout  # shed first


def test_a_source_larger_than_the_budget_is_focused_never_refused(tmp_path: Path) -> None:
    """At 2000 tokens the 500-line kernel cannot be shown whole: it is shown as an outline the model can edit
    against and ask lines of, within the budget; the result is never cut."""
    repo, _ = build(tmp_path, 2000)
    proc = evolve(repo / "examples" / "sort", "prompt", "00051")
    assert proc.returncode == 0, proc.stderr
    used, budget = map(int, re.search(r"about (\d+) tokens \(\d+% of the prompt budget of (\d+)",
                                      proc.stdout).groups())
    assert used <= budget == 1000
    assert "not shown whole: its outline below" in proc.stdout and "SHOW examples/sort/kernel/sort.py:" in proc.stdout
    assert "Result of this version (00051)" in proc.stdout and "padding line 499" not in proc.stdout


def test_evolve_prompt_prints_what_a_mutation_of_that_parent_would_send(tmp_path: Path) -> None:
    """`evolve prompt` and the engine's mutate build the messages with one function from the same inputs
    (the engine's own parent pool, base and guidance): byte for byte the same text."""
    from evolver.records.config import find_config, load_config
    from evolver.run.opening import open_run
    from evolver.search.breed import mutation_messages, prompt_context
    from tests.conftest import COUNTING, counting_repo, fake_llm
    from tests.fake_llm import FakeLLM

    with FakeLLM(["good"] * 12) as llm:
        repo = counting_repo(tmp_path / "repo", example_config(
            evaluation=COUNTING,
            llm=fake_llm(llm.url),
            evolution="operators = { mutate = 1.0 }\nislands = 2\npopulation = 3\nseed = 2\npipeline_depth = 1"))
        assert evolve(repo / "examples" / "sort", "start", "--max-candidates", "6").returncode == 0
    store = Store(repo)
    config = load_config(find_config(repo / "examples" / "sort"), repo)
    opened = open_run(config, store, "r1", create=False, say=lambda line: None)
    try:
        parent = opened.recorder.best()
        assert parent is not None and len(opened.recorder.pool()) > 2
        context = prompt_context(store, config, opened.snapshot, opened.base, parent, opened.recorder.pool())
        assert context.inspirations, "the run should give the prompt another island's idea"
        messages = mutation_messages(config, parent, context)
    finally:
        store.unlock()
    proc = evolve(repo / "examples" / "sort", "prompt", parent.id)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("".join(f"===== {m['role']} =====\n{m['content']}\n\n" for m in messages))


def test_the_system_message_names_the_problem_its_guidance_names() -> None:
    from evolver.search.prompts import system_message
    from tests.conftest import ROOT

    qr = system_message((ROOT / "seed_kernels" / "GUIDANCE.md").read_text())["content"]
    assert qr.startswith("You improve the speed of the code for this problem: batched FP32 Householder QR,")
    plain = system_message(None)["content"]
    assert plain.startswith("You improve the speed of the code in the kernel directory while") and "GPU" not in plain
