"""The house rules that keep the code readable at once (docs/ARCHITECTURE.md): no module of the engine over
400 lines, no function of the engine or the harness over 60."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def test_no_module_of_the_engine_is_over_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "evolver").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, f"split these modules: {long}"


def test_no_function_is_over_60_lines() -> None:
    long = {}
    for path in [*(ROOT / "evolver").rglob("*.py"), *(ROOT / "qrjudge").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = lines
    assert not long, f"split these functions: {long}"


# The engine's packages, bottom to top: a module may import its own package's and those below it, never above
# (docs/ARCHITECTURE.md, "Layout"). TYPE_CHECKING imports are annotations only, not dependencies.
LAYERS = ("records", "evaluation", "search", "run", "tui", "commands")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, known: set[str]) -> set[str]:
    """The engine's modules that `path` imports, at module level or inside functions."""
    tree = ast.parse(path.read_text())
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for child in node.body for n in ast.walk(child)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evolver"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                out.add(full if full in known else node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("evolver")}
    return out & known


def _graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in (ROOT / "evolver").rglob("*.py")}
    known = set(paths)
    return {name: _imports(path, known) - {name} for name, path in paths.items()}


def test_no_import_circle() -> None:
    graph = _graph()
    state: dict[str, int] = {}  # 1: on the path, 2: done
    circles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circles.append(" -> ".join(path[path.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2
    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not circles, f"import circles: {circles}"


def test_imports_go_down_the_layers() -> None:
    def layer(module: str) -> int | None:
        parts = module.split(".")
        return LAYERS.index(parts[1]) if len(parts) > 2 and parts[1] in LAYERS else None
    against = [f"{a} -> {b}" for a, targets in _graph().items() for b in targets
               if layer(a) is not None and layer(b) is not None and layer(b) > layer(a)]  # type: ignore[operator]
    assert not against, f"imports against the layers ({' < '.join(LAYERS)}): {against}"
    packages = {f"evolver.{name}" for name in LAYERS}
    loose = [m for m in _graph() if m.count(".") == 1 and m not in packages and m != "evolver.__main__"]
    assert not loose, f"modules outside the layers' packages: {loose}"
