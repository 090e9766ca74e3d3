"""The core must load without the UI and GPU stacks (they are optional extras)."""

import subprocess
import sys

import pytest

CORE = ["evolver", "evolver.commands.cli", "evolver.records.config", "evolver.records.store", "evolver.search.edits",
        "evolver.search.tunables", "evolver.search.llm", "evolver.search.prompts", "evolver.search.operators",
        "evolver.search.population", "evolver.evaluation.evaluate", "evolver.run.engine"]


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_ui_or_gpu_stack(module: str) -> None:
    code = (f"import sys, {module}\n"
            "bad = [m for m in ('textual', 'torch', 'cupy') if m in sys.modules]\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"{module} imports {out}"
