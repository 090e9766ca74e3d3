"""Anti-cheat: a static scan of the candidate's files and a runtime guard on forbidden entry points.

Static: Python files are parsed, and any name, attribute, import or string value that reaches a library QR
(geqrf, linalg, householder_product, orgqr/ormqr, cuSOLVER, MAGMA, numpy/scipy linear algebra), the host
(cpu/numpy/tolist round-trips), the judge (harness, sys.modules), dynamic attribute access (getattr with a
computed name, eval/exec, __dict__, importlib, ctypes), interpreter introspection (frames, globals, code
objects, subclasses) or other processes (fork, exec, system, kill) is a finding. The scan judges code, not
prose: comments never reach the syntax tree, and a string that is only a statement (a docstring) is skipped
- reading one back (`__doc__`) is a finding instead. CUDA/C++ sources are scanned, comments stripped, for
cuSOLVER and MAGMA. Runtime: those torch/cupy/numpy/os functions are wrapped once, for good, so that they
raise inside the candidate's code (even through a reference taken at import time) and work normally for the
harness. The scan is a first filter: what stops a determined candidate is the judge (harness/judge.py).
"""

from __future__ import annotations

import ast
import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PROCESS_CALLS = ("system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "execl", "execle",
                 "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle",
                 "posix_spawn", "posix_spawnp", "kill", "killpg", "setsid", "setpgid", "daemon")
FORBIDDEN_WORDS = ("geqrf", "linalg", "householder_product", "orgqr", "ormqr", "cusolver", "magma", "lapack",
                   "scipy", "harness", "sys.modules")
FORBIDDEN_NAMES = {"geqrf", "linalg", "householder_product", "orgqr", "ormqr", "qr", "svd", "cholesky",
                   "cusolver", "scipy", "harness", "eval", "exec", "compile", "__import__", "importlib",
                   "ctypes", "cdll", "CDLL", "attrgetter", "methodcaller", "__dict__", "__getattribute__",
                   "globals", "vars", "modules", "cpu", "numpy", "tolist", "set_flush_denormal",
                   "allow_tf32", "set_float32_matmul_precision", "__doc__",
                   # introspection: frames, code and class graphs reach the harness's own objects
                   "sys", "_getframe", "f_locals", "f_globals", "f_back", "f_code", "gi_frame", "tb_frame",
                   "__globals__", "__code__", "__closure__", "__builtins__", "__subclasses__", "__mro__",
                   "__bases__", "__base__", "get_objects", "get_referrers", "get_referents",
                   # other processes: a candidate has no reason to start, signal or leave any
                   *PROCESS_CALLS}
ALLOWED_IMPORTS = {"torch", "cupy", "math", "functools", "os", "pathlib", "typing", "dataclasses", "__future__"}
CUDA_PATTERN = re.compile(r"cusolver|magma|lapack", re.I)
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".c", ".cc", ".cpp")


class GuardError(RuntimeError):
    """Raised when a candidate calls a forbidden function."""


def scan(kernel_dir: Path) -> list[str]:
    """Findings as 'file:line: what'; empty when the candidate's files look clean."""
    findings: list[str] = []
    local = {p.stem for p in kernel_dir.glob("*.py")}  # the candidate's own modules may import each other
    for path in sorted(kernel_dir.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(kernel_dir).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".py":
            findings += _scan_python(rel, text, local)
        elif path.suffix in SOURCE_SUFFIXES:
            for number, line in enumerate(_strip_c_comments(text).splitlines(), 1):
                if CUDA_PATTERN.search(line):
                    findings.append(f"{rel}:{number}: library solver in CUDA source: {line.strip()[:80]}")
    return findings


def _strip_c_comments(text: str) -> str:
    """C/C++/CUDA source without comments, line numbers kept (comments may name what code may not call)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _scan_python(rel: str, text: str, local: set[str]) -> list[str]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []  # the import reports it as a compile error
    out = []
    prose = {id(node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if id(node) in prose:
            continue
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            out.append(f"{rel}:{line}: forbidden name {node.id!r}")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_NAMES:
            out.append(f"{rel}:{line}: forbidden attribute .{node.attr}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                allowed = ALLOWED_IMPORTS | local
                if module.split(".")[0] not in allowed or any(w in module for w in FORBIDDEN_WORDS):
                    out.append(f"{rel}:{line}: import of {module!r} (allowed: {', '.join(sorted(ALLOWED_IMPORTS))})")
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name in FORBIDDEN_NAMES:
                        out.append(f"{rel}:{line}: import of forbidden name {alias.name!r}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            low = node.value.lower()
            word = next((w for w in FORBIDDEN_WORDS if w in low), None)
            if word and not _is_cuda_source_text(node.value):
                out.append(f"{rel}:{line}: string mentions {word!r}")
            elif word and CUDA_PATTERN.search(_strip_c_comments(node.value)):
                out.append(f"{rel}:{line}: library solver in embedded CUDA source")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"getattr", "setattr"}:
            if len(node.args) >= 2 and not isinstance(node.args[1], ast.Constant):
                out.append(f"{rel}:{line}: {node.func.id} with a computed attribute name")
            elif len(node.args) >= 2 and str(getattr(node.args[1], "value", "")) in FORBIDDEN_NAMES:
                out.append(f"{rel}:{line}: {node.func.id} of forbidden attribute {node.args[1].value!r}")  # type: ignore[attr-defined]
    return out


def _is_cuda_source_text(text: str) -> bool:
    return "__global__" in text or "#include" in text


# --- runtime guard -------------------------------------------------------------------------------------

class _State:
    active = False
    installed = False
    tripped: list[str] = []


STATE = _State()


def _wrap(owner: Any, name: str, label: str) -> None:
    original = getattr(owner, name, None)
    if original is None or getattr(original, "_evolve_guarded", False):
        return

    def guarded(*args: Any, **kwargs: Any) -> Any:
        if STATE.active:
            STATE.tripped.append(label)
            raise GuardError(f"{label} is forbidden inside a candidate")
        return original(*args, **kwargs)

    guarded._evolve_guarded = True  # type: ignore[attr-defined]
    try:
        setattr(owner, name, guarded)
    except (AttributeError, TypeError):
        pass


def install() -> None:
    """Wrap the forbidden entry points once per process (before the candidate is imported)."""
    if STATE.installed:
        return
    import torch

    for name in ("geqrf", "orgqr", "ormqr", "qr", "svd", "cholesky", "cholesky_solve", "cholesky_inverse",
                 "triangular_solve", "lu", "pinverse"):
        _wrap(torch, name, f"torch.{name}")
        _wrap(torch.Tensor, name, f"Tensor.{name}")
    for name in dir(torch.linalg):
        if not name.startswith("_") and callable(getattr(torch.linalg, name)):
            _wrap(torch.linalg, name, f"torch.linalg.{name}")
    for name in ("geqrf", "orgqr", "ormqr", "linalg_qr", "linalg_householder_product", "linalg_cholesky"):
        with contextlib.suppress(Exception):
            _wrap(torch.ops.aten, name, f"torch.ops.aten.{name}")
    import os

    for name in PROCESS_CALLS:
        _wrap(os, name, f"os.{name}")
    with contextlib.suppress(ImportError):
        import numpy.linalg

        for name in ("qr", "svd", "cholesky", "lstsq", "solve", "inv", "pinv"):
            _wrap(numpy.linalg, name, f"numpy.linalg.{name}")
    with contextlib.suppress(ImportError):
        import cupy.linalg

        for name in ("qr", "svd", "cholesky", "lstsq", "solve", "inv", "pinv"):
            _wrap(cupy.linalg, name, f"cupy.linalg.{name}")
    STATE.installed = True


@contextlib.contextmanager
def candidate_scope() -> Iterator[None]:
    """Forbidden functions raise while the candidate's code runs."""
    STATE.active = True
    try:
        yield
    finally:
        STATE.active = False
