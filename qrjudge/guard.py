"""Anti-cheat in the candidate's process: library factorisations refused where every route to them ends, and
a static scan of the candidate's files as a first filter.

Runtime (`install`, in the runner before the candidate is imported; never for the baseline): every overload
(`out=` ones too) of every aten operator of the factorisation and solver families (QR, Cholesky, LU, SVD,
eigen-solvers, solves, inverses, determinants: `factorisation_overloads`) gets a kernel of ours for every backend
dispatch key (`BACKENDS`) that raises, so a call is refused whichever way it reaches the dispatcher (`torch.geqrf`,
`torch.ops.aten`, `torch._C`'s function tables, Tensor methods, `getattr` chains, compiled graphs); CuPy's
cuSOLVER bindings, cuBLAS's batched and triangular solvers and cuSPARSE's solvers, and NumPy's LAPACK modules,
are wrapped where they are defined; process
calls of `os` raise inside the candidate. The solver shared libraries themselves are masked in the
runner's view (qrjudge/isolation.py), so an extension build cannot link or load them either.

Static (`scan`, in the judge): Python files parsed; a finding is a library's own name (geqrf, orgqr,
cuSOLVER, MAGMA, LAPACK...), dynamic code (eval/exec, `getattr` with a computed name or passed around as a
value, `__dict__`, `importlib`, `ctypes`), interpreter introspection (frames, globals, code objects,
subclasses), other processes, an import outside the allowed modules, or a file of the kernel directory that
shadows a module of the standard library or of the installation (`import numpy` would then yield the real
one). Ordinary names are not evidence (a helper called `qr`, a variable called `cpu`, `torch.compile`,
`RawModule.compile`), and prose is not code: comments never reach the syntax tree, a string that is only a
statement (a docstring) is skipped, while a string annotation is code (typing evaluates it). CUDA/C++
sources (comments stripped) may not name a solver library, a factorisation routine or the dynamic loader. The
scan is a first filter; the verdict is the judge's (qrjudge/judge.py). Native code (an FFI, an extension) can
call the LAPACK linked into torch's CPU library, which the runtime guard cannot refuse: there the scan is all
(docs/QR_CONTRACT.md, "Threat model").
"""

from __future__ import annotations

import ast
import contextlib
import importlib.machinery
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PROCESS_CALLS = ("system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "execl", "execle",
                 "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle",
                 "posix_spawn", "posix_spawnp", "kill", "killpg", "setsid", "setpgid", "daemon")
FORBIDDEN_WORDS = ("geqrf", "householder_product", "orgqr", "ormqr", "cusolver", "magma", "lapack", "scipy",
                   "sys.modules")
FORBIDDEN_NAMES = {"geqrf", "householder_product", "orgqr", "ormqr", "cusolver", "scipy", "eval", "exec",
                   "__import__", "importlib", "ctypes", "cdll", "CDLL", "attrgetter", "methodcaller", "__dict__",
                   "__getattribute__", "globals", "vars", "modules", "set_flush_denormal", "allow_tf32",
                   "set_float32_matmul_precision", "__doc__",
                   # introspection: frames, code and class graphs reach the runner's own objects
                   "sys", "_getframe", "f_locals", "f_globals", "f_back", "f_code", "f_builtins", "gi_frame",
                   "cr_frame", "ag_frame", "tb_frame", "currentframe", "stack", "__globals__", "__code__",
                   "__closure__", "__builtins__", "__subclasses__", "__mro__", "__bases__", "__base__",
                   "get_objects", "get_referrers", "get_referents",
                   # eval in disguise: typing evaluates a string annotation as code (`annotation_code`)
                   "__annotations__", "get_type_hints", "ForwardRef", "_eval_type", "evaluate_forward_ref",
                   "get_annotations",
                   # a module imported by a string (what `import` would show): torch's own helper
                   "_import_dotted_name",
                   # other processes: a candidate has no reason to start, signal or leave any
                   *PROCESS_CALLS}
ATTRIBUTE_FUNCTIONS = {"getattr", "setattr", "delattr"}  # fine only when called at once with a constant name
ALLOWED_IMPORTS = {"torch", "cupy", "math", "functools", "os", "pathlib", "typing", "dataclasses", "__future__"}
CUDA_PATTERN = re.compile(r"cusolver|magma|lapack|dlopen|dlsym|dlfcn|(geqrf|getrf|getri|matinv|gels|potrf|getrs)"
                          r"(_?batched|_buffersize)?\b|\b[sdcz](geqrf|getrf|potrf|gesvd|syevd|trsm)", re.I)
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".c", ".cc", ".cpp")


class GuardError(RuntimeError):
    """Raised when a candidate calls a forbidden function."""


COMPILER = re.compile(r"\btorch\s*\.\s*(compile|compiler|_dynamo)\b|\bfrom\s+torch\s+import\b[^\n]*\bcompile\b")


def uses_compiler(kernel_dir: Path) -> bool:
    """Whether the candidate's Python names torch.compile's compiler (so that the runner imports it before its
    snapshots, off the timed runner's hold, as it did for every candidate: qrjudge/runner.py, COMPILER_REPLACES).
    A hint, not a check: a candidate that reaches the compiler otherwise imports it in its own time."""
    return any(COMPILER.search(text) for _, text in candidate_files(kernel_dir, "*.py"))


def candidate_files(kernel_dir: Path, pattern: str = "*") -> Iterator[tuple[Path, str]]:
    """Every file of the kernel directory (matching `pattern`) but Python's caches, in order, with its text."""
    for path in sorted(kernel_dir.rglob(pattern)):
        if path.is_file() and "__pycache__" not in path.parts:
            yield path, path.read_text(encoding="utf-8", errors="replace")


def scan(kernel_dir: Path) -> list[str]:
    """Findings as 'file:line: what'; empty when the candidate's files look clean."""
    findings = shadows(kernel_dir)
    local = {p.stem for p in kernel_dir.glob("*.py")}  # the candidate's own modules may import each other
    for path, text in candidate_files(kernel_dir):
        rel = path.relative_to(kernel_dir).as_posix()
        if path.suffix == ".py":
            findings += _scan_python(rel, text, local)
        elif path.suffix in SOURCE_SUFFIXES:
            for number, line in enumerate(_strip_c_comments(text).splitlines(), 1):
                if CUDA_PATTERN.search(line):
                    findings.append(f"{rel}:{number}: library solver in CUDA source: {line.strip()[:80]}")
    return findings


def shadows(kernel_dir: Path) -> list[str]:
    """Files (or directories) of the kernel directory named like a module that exists without them: the
    standard library's, or one installed here. `import numpy` beside a numpy.py yields whichever was imported
    first, the real one once torch has loaded it, so such a name is refused rather than trusted."""
    around = {kernel_dir.resolve().parent, Path(__file__).resolve().parent.parent, Path.cwd().resolve()}
    installed = [p for p in sys.path if p and Path(p).resolve() not in around]  # not the evaluation's own
    out = []
    for path in sorted(kernel_dir.iterdir()):
        name = path.stem if path.suffix == ".py" else path.name if path.is_dir() else ""
        if not name.isidentifier() or name == "__pycache__":
            continue
        if name in sys.stdlib_module_names or name in sys.builtin_module_names or _installed(name, installed):
            out.append(f"{path.name}: shadows the module {name!r} (name the file otherwise)")
    return out


def _installed(name: str, path: list[str]) -> bool:
    try:
        return importlib.machinery.PathFinder.find_spec(name, path) is not None
    except (ImportError, ValueError):
        return False


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
    called: set[int] = set()  # the names of getattr-like calls with their attribute written out
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
        elif isinstance(node, ast.Call) and any(k.arg == "weights_only" and not (isinstance(k.value, ast.Constant)
                                                                              and k.value.value is True)
                                                for k in node.keywords):
            out.append(f"{rel}:{line}: unpickling without weights_only (a pickle imports and calls what it names)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ATTRIBUTE_FUNCTIONS:
            called.add(id(node.func))
            if len(node.args) >= 2 and not isinstance(node.args[1], ast.Constant):
                out.append(f"{rel}:{line}: {node.func.id} with a computed attribute name")
            elif len(node.args) >= 2 and str(getattr(node.args[1], "value", "")) in FORBIDDEN_NAMES:
                out.append(f"{rel}:{line}: {node.func.id} of forbidden attribute {node.args[1].value!r}")  # type: ignore[attr-defined]
    for node in ast.walk(tree):  # getattr handed to functools.reduce, map, a lambda: a computed name in disguise
        if isinstance(node, ast.Name) and node.id in ATTRIBUTE_FUNCTIONS and id(node) not in called:
            out.append(f"{rel}:{node.lineno}: {node.id} used as a value (attribute access with a computed name)")
    for line, code in annotation_code(tree):
        out += [f"{rel}:{line}: in an annotation: {finding.split(': ', 1)[1]}" for finding in
                _scan_python(rel, code, local)]
    return out


def annotation_code(tree: ast.AST) -> list[tuple[int, str]]:
    """The strings of a module's annotations, with their lines: code, not prose, since typing evaluates them
    (`typing.get_type_hints`, and `functools.singledispatch` through it): `x: "torch.ctypes"` names ctypes."""
    annotations = [node.annotation for node in ast.walk(tree) if isinstance(node, (ast.AnnAssign, ast.arg))
                   and node.annotation is not None]
    annotations += [node.returns for node in ast.walk(tree)
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None]
    return [(node.lineno, node.value) for annotation in annotations for node in ast.walk(annotation)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def _is_cuda_source_text(text: str) -> bool:
    return "__global__" in text or "#include" in text


# --- runtime guard -------------------------------------------------------------------------------------

# Tokens of aten operator names (split on "_") that make an operator a factorisation or a solver.
FAMILY_TOKENS = {"qr", "geqrf", "orgqr", "ormqr", "householder", "cholesky", "lu", "svd", "svdvals", "eig", "eigh",
                 "eigvals", "eigvalsh", "solve", "lstsq", "inv", "inverse", "pinv", "pinverse", "det", "slogdet",
                 "logdet", "ldl", "rank", "tensorsolve", "tensorinv", "spsolve"}
NOT_FAMILY = {"slice_inverse"}  # a view's inverse, not a matrix's
CUBLAS_SOLVERS = re.compile(r"(geqrf|getrf|getri|getrs|matinv|gels|trsm)", re.I)
# cuSPARSE cannot be masked (torch links it): its triangular solves (csrsv2, csrsm2, SpSV, SpSM), incomplete
# factorisations (ic02, ilu02: a complete one on a dense pattern) and banded solvers, refused in CuPy's binding,
# where every layer above it (cupyx.cusparse, cupyx.scipy.sparse.linalg) ends
CUSPARSE_SOLVERS = re.compile(r"(csrsv|csrsm|bsrsv|bsrsm|spsv|spsm|ic02|ilu02|gtsv|gpsv)", re.I)


class _State:
    active = False
    installed = False
    tripped: list[str] = []
    library: Any = None  # the dispatcher registrations: alive as long as the process


STATE = _State()


def factorisation_ops() -> list[str]:
    """The aten operators of the factorisation and solver families, by name, from the dispatcher itself."""
    return sorted({name.split(".")[0] for name in factorisation_overloads()})


def factorisation_overloads() -> list[str]:
    """Every overload of those operators ("geqrf", "geqrf.a": the one `out=` reaches), from the dispatcher itself:
    an overload is an operator of its own there, with kernels of its own."""
    import torch

    names = [n.split("::", 1)[1] for n in torch._C._dispatch_get_all_op_names() if n.startswith("aten::")]
    return sorted(n for n in names if set(n.split(".")[0].strip("_").split("_")) & FAMILY_TOKENS
                  and n.split(".")[0] not in NOT_FAMILY)


def _refuse(label: str) -> Any:
    def refused(*args: Any, **kwargs: Any) -> Any:
        STATE.tripped.append(label)
        raise GuardError(f"{label} (a library factorisation or solver) is forbidden inside a candidate")
    refused._evolve_guarded = True  # type: ignore[attr-defined]
    return refused


# Every backend a kernel of a family operator can live in: dense, sparse (a sparse direct solver, cuDSS's
# `_spsolve`, has a SparseCsrCUDA kernel where torch is built with it), nested and quantized tensors.
BACKENDS = ("CPU", "CUDA", "SparseCPU", "SparseCUDA", "SparseCsrCPU", "SparseCsrCUDA", "NestedTensorCPU",
            "NestedTensorCUDA", "QuantizedCPU", "QuantizedCUDA")


def _at_the_dispatcher() -> int:
    """A kernel that raises for every family operator on every backend (`BACKENDS`); how many were registered."""
    import warnings

    import torch

    STATE.library = torch.library.Library("aten", "IMPL")
    count = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel": that is the point
        for op in factorisation_overloads():
            for key in BACKENDS:
                try:
                    STATE.library.impl(op, _refuse(f"aten::{op}"), key)
                    count += 1
                except RuntimeError:  # an operator the dispatcher will not take a kernel for
                    pass
    return count


def _wrap_module(module: Any, label: str, keep: Any = lambda name: True) -> None:
    """Every public callable of `module` accepted by `keep` raises, for good: wrapped where it is defined, so
    every caller that looks it up there (the library's own Python code included) is refused."""
    for name in list(vars(module)):
        value = vars(module)[name]
        if not name.startswith("_") and callable(value) and keep(name) and not isinstance(value, type):
            with contextlib.suppress(AttributeError, TypeError):
                setattr(module, name, _refuse(f"{label}.{name}"))


def _wrap(owner: Any, name: str, label: str) -> None:
    """`owner.name` raises while the candidate's code runs (`candidate_scope`) and works for the runner."""
    original = getattr(owner, name, None)
    if original is None or getattr(original, "_evolve_guarded", False):
        return

    def guarded(*args: Any, **kwargs: Any) -> Any:
        if STATE.active:
            STATE.tripped.append(label)
            raise GuardError(f"{label} is forbidden inside a candidate")
        return original(*args, **kwargs)

    guarded._evolve_guarded = True  # type: ignore[attr-defined]
    with contextlib.suppress(AttributeError, TypeError):
        setattr(owner, name, guarded)


def _library_bindings() -> None:
    """CuPy's cuSOLVER bindings (if the library loads at all: qrjudge/isolation.py masks it), cuBLAS's
    batched factorisations and triangular solves, cuSPARSE's solves and incomplete factorisations, and NumPy's
    LAPACK modules. (The bindings, not the layers above them: importing cupyx.scipy here would lengthen every
    runner's set-up, and those layers call the bindings.)"""
    with contextlib.suppress(ImportError):
        import cupy  # noqa: F401

        for name, keep in (("cupy_backends.cuda.libs.cusolver", None), ("cupy.cuda.cusolver", None),
                           ("cupy_backends.cuda.libs.cublas", CUBLAS_SOLVERS), ("cupy.cuda.cublas", CUBLAS_SOLVERS),
                           ("cupy.linalg", None), ("cupyx.lapack", None),
                           ("cupy_backends.cuda.libs.cusparse", CUSPARSE_SOLVERS)):
            try:
                module = importlib.import_module(name)
            except Exception:  # noqa: BLE001  a masked library raises whatever its loader raises
                continue
            _wrap_module(module, name, keep=(lambda n: True) if keep is None else keep.search)
    with contextlib.suppress(ImportError):

        for name in ("numpy.linalg", "numpy.linalg._umath_linalg", "numpy.linalg.lapack_lite",
                     "numpy.linalg._linalg", "numpy.linalg.linalg"):
            with contextlib.suppress(ImportError):
                _wrap_module(importlib.import_module(name), name,
                             keep=lambda n: n not in ("norm", "matrix_power", "multi_dot", "matmul", "vecdot",
                                                      "outer", "cross", "diagonal", "trace", "LinAlgError"))


def install() -> None:
    """Refuse library factorisations for good in this process, and process calls inside the candidate (once per
    process, before the candidate is imported)."""
    if STATE.installed:
        return
    _at_the_dispatcher()
    _library_bindings()
    import os

    for name in PROCESS_CALLS:
        _wrap(os, name, f"os.{name}")
    STATE.installed = True


def intact() -> str:
    """'' while the dispatcher still runs our kernels for the family, else which operator lost its guard (a
    candidate that reached the registrations: checked after the import and after the benchmark)."""
    import torch

    for op in ("geqrf", "geqrf.a", "linalg_qr", "linalg_qr.out", "linalg_cholesky_ex", "linalg_householder_product"):
        active = [line for line in torch._C._dispatch_dump(f"aten::{op}").splitlines() if line.startswith("CPU:")]
        if not active or Path(__file__).name not in active[0]:
            return f"the dispatcher's guard on aten::{op} was removed"
    return ""


@contextlib.contextmanager
def candidate_scope() -> Iterator[None]:
    """Process calls raise while the candidate's code runs."""
    STATE.active = True
    try:
        yield
    finally:
        STATE.active = False
