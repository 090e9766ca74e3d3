"""`evolve export <id|best> --format gpumode [-o FILE]`: a candidate as one self-contained Python file for
GPU MODE's runner, which has torch and its extension build but is not known to have CuPy.

The file is: a header naming the candidate, its score and the judge that measured it, and its tunable
values (frozen: the `@tune` annotations are gone); a stand-in for the part of CuPy candidates use
(`export_shim.txt`: `RawModule` compiles the CUDA sources with NVRTC, as CuPy does, through one small C++
extension that torch's `load_inline` builds once per machine, and launches on the current stream with each
argument as its kernel declares it); the candidate's other files as strings
(`Path(__file__).with_name(...)` reads them); and its `kernel.py`, with `import cupy` bound to the stand-in.
The file keeps to the judge's rules for candidates, so the harness can judge it as a kernel directory of
one file (`evolve try DIR` with the file as `DIR/kernel.py`). What cannot be carried over (a module of the
candidate's own, a CuPy feature the stand-in lacks, an import the contest may not have) is refused with
a one-line reason.
"""

from __future__ import annotations

import argparse
import ast
import tempfile
import time
from pathlib import Path
from typing import Any

from evolver.records.candidates import Candidate
from evolver.records.config import Config
from evolver.records.store import Store
from evolver.search.tunables import find_tunables

SHIM = Path(__file__).with_name("export_shim.txt")
IMPORTABLE = {"torch", "math", "functools", "pathlib", "os", "typing", "dataclasses", "__future__", "cupy"}
CHECK_TOLERANCE = 0.05  # `--check`: the exported file's score against the candidate's
CUPY_FEATURES = {"RawModule", "uint64", "uint32", "int64", "int32", "float32", "float64", "cuda", "cuda.Device",
                 "cuda.ExternalStream"}


PROSE = (".md", ".txt", ".rst")  # a kernel directory's notes: not code, never embedded in the one file


class ExportError(Exception):
    """Why a candidate cannot be exported; str() is one line."""


def export_dir(kernel_dir: Path, header: list[str]) -> str:
    """The single-file form of the kernel directory (`kernel.py` and the files it reads)."""
    files = {p.relative_to(kernel_dir).as_posix(): p.read_text(encoding="utf-8") for p in sorted(kernel_dir.rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts and p.suffix not in PROSE}
    if "kernel.py" not in files:
        raise ExportError("its kernel directory has no kernel.py (the one-file form is the QR contract's: "
                          "`custom_kernel` in kernel.py)")
    own = [name for name in files if name.endswith(".py") and name != "kernel.py"]
    if own:
        raise ExportError(f"{own[0]}: a module of the candidate's own; export inlines kernel.py only")
    source = files.pop("kernel.py")
    tunables = find_tunables({"kernel.py": source, **files})
    frozen = [f"{t.name}={t.value}" for t in tunables]
    for path in {t.path for t in tunables}:  # the values stay, the annotations go
        text = source if path == "kernel.py" else files[path]
        lines = [line.split("@tune")[0].rstrip().removesuffix("#").removesuffix("//").rstrip() if "@tune" in line
                 else line for line in text.splitlines()]
        if path == "kernel.py":
            source = "\n".join(lines) + "\n"
        else:
            files[path] = "\n".join(lines) + "\n"
    body, future = _carried_over(source)
    comment = [f"# {line}" for line in header + [f"tunables (frozen): {', '.join(frozen) or 'none'}",
                                                  "exported by `evolve export --format gpumode`"]]
    embedded = "_EVOLVE_FILES = {\n" + "".join(f"    {name!r}: {text!r},\n" for name, text in files.items()) + "}\n"
    return "\n".join(comment) + "\n" + future + SHIM.read_text() + embedded + body


def _carried_over(source: str) -> tuple[str, str]:
    """kernel.py with `import cupy` bound to the stand-in and `Path(__file__)` to the embedded files; and the
    `from __future__` line it had (it must come first in the file)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ExportError(f"kernel.py:{exc.lineno}: {exc.msg}") from None
    taken = _top_level_names(tree) & (_top_level_names(ast.parse(SHIM.read_text())) | {"_EVOLVE_FILES"})
    if taken:  # the file is one module: a name of the stand-in's, redefined, would break it
        raise ExportError(f"kernel.py defines {', '.join(sorted(taken))}, a name the exported file's CuPy stand-in uses")
    lines = source.splitlines()
    future, alias = "", None
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            root = (node.module or "").split(".")[0]
            if node.level or root not in IMPORTABLE or root == "cupy":
                raise ExportError(f"kernel.py:{node.lineno}: `from {node.module or '.'} import ...` cannot be exported "
                                  f"(modules it may import: {', '.join(sorted(IMPORTABLE - {'cupy'}))}, and cupy)")
            if root == "__future__":
                future = lines[node.lineno - 1] + "\n"
                lines[node.lineno - 1] = ""
        elif isinstance(node, ast.Import):
            for name in node.names:
                root = name.name.split(".")[0]
                if root not in IMPORTABLE:
                    raise ExportError(f"kernel.py:{node.lineno}: `import {name.name}` cannot be exported")
                if root == "cupy":
                    alias = name.asname or "cupy"
                    lines[node.lineno - 1] = f"{alias} = _EVOLVE_CUPY"
    if alias is not None:
        for node in ast.walk(tree):
            path = _dotted(node, alias)
            if path is not None and path not in CUPY_FEATURES:
                raise ExportError(f"kernel.py:{node.lineno}: {alias}.{path}: export's CuPy stand-in has "  # type: ignore[attr-defined]
                                  f"{', '.join(sorted(CUPY_FEATURES))} only")
    body = "\n".join(lines).replace("Path(__file__)", "_EvolveEmbedded()") + "\n"
    return body, future


def _top_level_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level (assignments, functions, classes)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _dotted(node: ast.AST, alias: str) -> str | None:
    """`a.b` for an attribute chain `alias.a.b` (None for anything else). `ast.walk` also visits the chain's
    inner links (`alias.a`), which must be features too."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join(reversed(parts)) if parts and isinstance(node, ast.Name) and node.id == alias else None


def header_for(candidate: Candidate) -> list[str]:
    r = candidate.confirmation or candidate.result
    unit = r.details.get("unit", "") if r is not None else ""
    judge = r.details.get("judge") if r is not None else None
    score = f"{r.score:.6g} {unit}".strip() if r is not None and r.score is not None else "no score"
    mode = r.details.get("mode", "?") if r is not None else "?"
    return [f"evolve candidate {candidate.run}/{candidate.id} (commit {candidate.commit[:12]})",
            f"score {score} ({mode} mode; judge {r.harness if r else '?'}"
            + (f", anti-cheat version {judge}" if isinstance(judge, int) else "") + f"; on {r.gpu if r else '?'})",
            f"exported {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC"]


def cmd_export(args: argparse.Namespace) -> int:
    from evolver.commands.common import UserError, open_repo, target

    config, store = open_repo(args)
    _, candidate = target(args, config, store)
    with tempfile.TemporaryDirectory(prefix="evolve-export-") as tmp:
        store.archive(candidate.commit, [config.problem.kernel_dir], Path(tmp))
        try:
            text = export_dir(Path(tmp) / config.problem.kernel_dir, header_for(candidate))
        except ExportError as exc:
            raise UserError(f"{candidate.run}/{candidate.id} cannot be exported: {exc}") from None
    out = Path(args.output or f"{candidate.run}-{candidate.id}-gpumode.py")
    try:  # -o into a folder that does not exist yet is a request for that folder
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    print(f"wrote {out} ({len(text.splitlines())} lines): {candidate.run}/{candidate.id} as one file for GPU MODE")
    return check(config, store, candidate, text) if args.check else 0


def check(config: Config, store: Store, candidate: Candidate, text: str) -> int:
    """The exported file judged by the run's judge as a kernel directory of one file, in the mode of the
    candidate's own score: correct, and within CHECK_TOLERANCE of that score."""
    from evolver.commands.try_ import judge_directory
    from evolver.records.candidates import Result

    mine = candidate.confirmation or candidate.result
    mode = str(mine.details.get("mode") or config.evaluation.mode) if mine is not None else config.evaluation.mode
    with tempfile.TemporaryDirectory(prefix="evolve-export-check-") as tmp:
        (Path(tmp) / "kernel.py").write_text(text, encoding="utf-8")
        result = Result.of(judge_directory(config, store, candidate.run, Path(tmp), mode))
    if result.status != "ok" or result.score is None:
        print(f"check: the exported file is {result.status}: {(result.error or '').splitlines()[0][:300] if result.error else ''}")
        return 1
    if mine is None or mine.score is None:
        print(f"check: the exported file is ok, {result.score:.6g}; the candidate has no score to compare with")
        return 0
    ratio = result.score / mine.score
    verdict = "faithful" if abs(ratio - 1) <= CHECK_TOLERANCE else f"not within {CHECK_TOLERANCE:.0%}"
    print(f"check: the exported file is ok, {result.score:.6g} against the candidate's {mine.score:.6g} in {mode} "
          f"mode (ratio {ratio:.3f}): {verdict}")
    return 0 if verdict == "faithful" else 1


def add_verb(verb: Any) -> None:
    from evolver.commands.common import candidate_args

    p = verb("export", "write a candidate as one file for a contest submission",
             "Write a candidate (default `best`) as one self-contained Python file for GPU MODE's runner: its CUDA "
             "sources embedded and compiled with torch's extension build (no CuPy needed), its tunable values "
             "frozen, a header naming the candidate, its score and the judge that measured it. The file is also "
             "a kernel directory of one file: `evolve try DIR` with it as DIR/kernel.py judges it.")
    candidate_args(p, optional=True)
    p.add_argument("--format", choices=("gpumode",), default="gpumode", help="the submission format (gpumode)")
    p.add_argument("-o", "--output", metavar="FILE", help="where to write it (default: RUN-ID-gpumode.py)")
    p.add_argument("--check", action="store_true", help="judge the written file with the run's judge as a kernel "
                   "directory of one file: correct, and within 5%% of the candidate's score (exit 1 otherwise)")
    p.set_defaults(func=cmd_export)
