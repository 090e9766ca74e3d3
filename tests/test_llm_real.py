"""Against a real OpenAI-compatible server with a real (tiny) model: `../shared/tools/local-llm.sh` serves
Qwen2.5-Coder-0.5B on 127.0.0.1:8081. Marked `llm`: deselected by default (`pytest -m llm` runs it) and
skipped when no server answers. The model is far too weak to speed anything up; what is checked is that its
real replies, however they break, end in a recorded status and that the run finishes with real usage."""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path

import pytest

from evolver.records.store import Store
from tests.conftest import evolve, example_config, make_repo

pytestmark = pytest.mark.llm
URL = os.environ.get("EVOLVE_LLM_URL", "http://127.0.0.1:8081/v1")


def server_up() -> bool:
    try:
        with urllib.request.urlopen(f"{URL}/models", timeout=3) as response:
            return response.status == 200
    except OSError:
        return False


def test_real_small_model_run_finishes_with_every_attempt_recorded(tmp_path: Path) -> None:
    if not server_up():
        pytest.skip(f"no LLM server at {URL} (start ../shared/tools/local-llm.sh)")
    repo = make_repo(tmp_path / "repo", example_config(
        llm=f'base_url = "{URL}"\nmodel = "qwen2.5-coder-0.5b"\napi_key_env = ""\ntimeout_s = 120\n'
            "max_tokens = 600\ncontext_tokens = 7000\nedit_retries = 1\nmax_concurrent = 1",
        evolution="operators = { mutate = 1.0 }\nislands = 1\npopulation = 2\nseed = 0\npipeline_depth = 1"))
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "4", timeout=1500)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    snap = Store(repo).snapshot("r1")
    assert len(snap.candidates) == 4
    known = {"ok", "incorrect", "compile_error", "timeout", "crash", "rejected", "patch_failed", "llm_error"}
    for c in snap.candidates.values():
        assert c.result is not None and c.result.status in known, c.id
    llm_made = [c for c in snap.candidates.values() if c.op == "mutate"]
    assert llm_made and all(c.trailers.get("Model") == "qwen2.5-coder-0.5b" for c in llm_made)
    prompt, completion = (int(x) for x in llm_made[0].trailers["Tokens"].split("+"))
    assert prompt > 100 and completion > 0  # real usage reported by the server
