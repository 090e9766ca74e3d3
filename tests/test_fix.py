"""`fix`: a candidate that failed goes back to the LLM with its failure; the repair is its child."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolver.records.store import Store
from tests.conftest import evolve, example_config, make_repo
from tests.fake_llm import FakeLLM

pytestmark = pytest.mark.slow


def test_fix_turns_a_compile_error_into_a_passing_child(tmp_path: Path) -> None:
    with FakeLLM(["break_build", "good", "repair"]) as llm:
        repo = make_repo(tmp_path / "repo", example_config(
            llm=f'base_url = "{llm.url}"\nmodel = "fake-coder"\napi_key_env = ""\nedit_retries = 0\n'
                "max_concurrent = 1\nmax_tokens = 500\ncontext_tokens = 6000",
            evaluation='command = "{python} check.py --kernel-dir {kernel_dir}"\nfiles = ["check.py"]\n'
                       "gpus = []\nslots = 1\ntimeout_s = 60",
            evolution="operators = { mutate = 1.0, fix = 1000.0 }\nislands = 1\npopulation = 2\nseed = 3\n"
                      "pipeline_depth = 1"))
        proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "4")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        fix_requests = [body for step, body in llm.log if step == "repair"]
    snap = Store(repo).snapshot("r1")
    broken = next(c for c in snap.candidates.values() if c.result and c.result.status == "compile_error")
    fixed = [c for c in snap.candidates.values() if c.op == "fix"]
    assert len(fixed) == 1 and fixed[0].parent_ids == (broken.id,) and fixed[0].parents == (broken.commit,)
    assert fixed[0].result.status == "ok"
    prompt = fix_requests[0]["messages"][1]["content"]
    assert "FAILED" in prompt and "SyntaxError" in prompt and "def sort_list(values)\n" in prompt
