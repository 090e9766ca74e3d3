"""The house rules that keep the code readable at once (docs/ARCHITECTURE.md): no module of the engine over
400 lines, no function of the engine or the harness over 60."""

from __future__ import annotations

import ast

from tests.conftest import ROOT

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def test_no_module_of_the_engine_is_over_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "evolver").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"split these modules: {long}"


def test_no_function_is_over_60_lines() -> None:
    long = {}
    for path in [*(ROOT / "evolver").rglob("*.py"), *(ROOT / "harness").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = lines
    assert not long, f"split these functions: {long}"
