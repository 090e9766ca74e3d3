"""What a prompt shows of a kernel, and where the parent's time goes.

Every file whole when the kernel fits the prompt's budget; otherwise the files that matter whole (the entry
file, which holds the dispatch and the `@tune` lines, then the files whose kernels the profile names as hot)
and the rest as an outline: each `@tune` line, each definition and kernel with its signature and line range,
so that the model can still edit against them and ask for the lines it needs (`SHOW path:FIRST-LAST`, answered
once, in a second turn: `shown`). Never a refusal: an outline too is cut to fit.

The profile is the judge's (qrjudge/timed.py `profile`, `--profile`, run on confirmations): per benchmark shape, the
kernels that took the device time, their launches and share. A candidate without one shows its nearest
ancestor's, named as such.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from evolver.records.candidates import Candidate

SHOW = re.compile(r"^\s*SHOW\s+`?([\w./-]+?):(\d+)-(\d+)`?\s*$", re.M)
ENTRY = re.compile(r"^def custom_kernel\(", re.M)
HOT = 0.05  # a kernel with at least this share of some shape's time makes its file worth showing whole
_DEFINITION = re.compile(r"^(?:extern \"C\"\s+)?(?:template\s*<[^>]*>\s*)?(?:static\s+)?(?:__global__|__device__|"
                         r"__host__|inline|void|int|float|double|bool|auto|template)\b[^;]*\(", re.M)
_PYTHON = re.compile(r"^(?:async\s+def|def|class)\s+\w+", re.M)
_KEEP = re.compile(r"@tune|^#define|^[A-Z][A-Z0-9_]* = ")


def profile_of(candidate: Candidate, by_commit: dict[str, Candidate]) -> tuple[dict[str, Any], Candidate] | None:
    """The newest judge's profile of `candidate` or, failing that, of its nearest profiled ancestor."""
    node: Candidate | None = candidate
    while node is not None:
        for result in reversed(node.results):
            found = result.details.get("profile")
            if isinstance(found, dict) and isinstance(found.get("shapes"), list) and found["shapes"] \
                    and not found.get("error"):  # a failed profile says nothing; an older one still does
                return found, node
        node = by_commit.get(node.parents[0]) if node.parents else None
    return None


def _base_name(kernel: str) -> str:
    """A kernel's own name from a profiler's label ('void reg_panel4<32>(float*, ...)' -> 'reg_panel4')."""
    head = kernel.split("(")[0].split("<")[0].strip()
    return head.split()[-1].split("::")[-1] if head else kernel


C_LIKE = (".cu", ".cuh", ".h", ".hpp", ".c", ".cc", ".cpp", ".cxx")  # where a GPU kernel can be defined


def file_of(kernel: str, files: dict[str, str]) -> str | None:
    """The file that defines a profiled kernel: a C-like source with `name(` in it (a CUDA definition; prose
    that mentions the kernel, a NOTES.md, does not define it), else any file that names it (Python that builds
    the source); None for a library's kernel."""
    name = _base_name(kernel)
    if len(name) < 3:
        return None
    defined = re.compile(rf"\b{re.escape(name)}\s*\(")
    named = re.compile(rf"\b{re.escape(name)}\b")
    order = sorted(files, key=lambda p: (not p.endswith(".py"), p))  # Python before prose
    return next((p for p in sorted(files) if p.endswith(C_LIKE) and defined.search(files[p])), None) or \
        next((p for p in order if named.search(files[p])), None)


def heat(files: dict[str, str], profile: dict[str, Any] | None) -> dict[str, float]:
    """How much of the measured time each file's kernels take (the largest share over shapes, summed over its
    kernels); the entry file (custom_kernel) counts as hottest: it holds the dispatch."""
    out = {path: (2.0 if ENTRY.search(text) else 0.0) for path, text in files.items()}
    shares: dict[str, float] = {}
    for shape in (profile or {}).get("shapes", []):
        for k in shape.get("kernels", []):
            shares[str(k.get("name"))] = max(shares.get(str(k.get("name")), 0.0), float(k.get("share", 0.0)))
    for kernel, share in shares.items():
        path = file_of(kernel, files)
        if path is not None:
            out[path] += share
    return out


def where_time_goes(profile: dict[str, Any], files: dict[str, str], kernel_dir: str, of: Candidate,
                    parent: Candidate) -> str:
    """The profile as the model reads it: per shape, the call's device time and its heaviest kernels."""
    whose = "this version" if of.id == parent.id else f"{of.id}, the nearest profiled ancestor of this version"
    unit = "device" if profile.get("device") != "cpu" else "CPU"
    lines = [f"Where the time goes (measured by the judge's profiler on {whose}; one call per shape, share of "
             f"its {unit} time, launches, and the file that defines each kernel):"]
    for shape in profile.get("shapes", []):
        parts = []
        for k in shape.get("kernels", [])[:5]:
            path = file_of(str(k.get("name")), files)
            where = f" in {kernel_dir}/{path}" if path else " (a library kernel)"
            parts.append(f"{_base_name(str(k.get('name')))} {100 * float(k.get('share', 0)):.0f}% "
                         f"x{int(k.get('launches', 0))}{where}")
        total = float(shape.get("total_us", 0))
        lines.append(f"- {shape.get('shape')}: {total:.1f} us: " + "; ".join(parts))
    return "\n".join(lines)


def _end_of(lines: list[str], start: int, python: bool) -> int:
    """The last line (index) of the definition that starts at `start`: by indentation in Python, by braces
    in C-like sources."""
    if python:
        indent = len(lines[start]) - len(lines[start].lstrip())
        end = start
        for k in range(start + 1, len(lines)):
            if lines[k].strip() and len(lines[k]) - len(lines[k].lstrip()) <= indent:
                break
            end = k
        return end
    depth, opened = 0, False
    for k in range(start, len(lines)):
        depth += lines[k].count("{") - lines[k].count("}")
        opened |= "{" in lines[k]
        if opened and depth <= 0:
            return k
        if not opened and lines[k].rstrip().endswith(";"):
            return k
    return len(lines) - 1


def outline(path: str, text: str) -> list[str]:
    """The lines an edit is written against when the file is not shown whole: `@tune` lines, defines and
    constants with their numbers, each definition's signature with its line range."""
    lines = text.splitlines()
    python = path.endswith(".py")
    definition = _PYTHON if python else _DEFINITION
    out = []
    k = 0
    while k < len(lines):
        line = lines[k]
        if definition.match(line):
            end = _end_of(lines, k, python)
            signature = " ".join(x.strip() for x in lines[k:min(end, k + 3) + 1]).split("{")[0].rstrip(":")
            out.append(f"{k + 1:5d}-{end + 1}: {signature[:160]}")
            k = end + 1
            continue
        if _KEEP.search(line):
            out.append(f"{k + 1:5d}| {line.rstrip()[:160]}")
        k += 1
    return out


def _fence(path: str, text: str) -> str:
    return f"{path}\n```\n{text.rstrip()}\n```"


def _outlined(kernel_dir: str, path: str, text: str, keep: int | None = None) -> str:
    lines = outline(path, text)
    cut = lines if keep is None else lines[:keep]
    more = f"\n[{len(lines) - len(cut)} more outline lines left out]" if len(cut) < len(lines) else ""
    return (f"{kernel_dir}/{path} ({len(text.splitlines())} lines, not shown whole: its outline below; to see lines, "
            f"reply with only `SHOW {kernel_dir}/{path}:FIRST-LAST` lines, once)\n```\n" + "\n".join(cut) + more +
            "\n```")


def source_view(kernel_dir: str, files: dict[str, str], hotness: dict[str, float], fits: Callable[[str], bool]
                ) -> tuple[str, list[str]]:
    """The kernel's files as the prompt shows them, and the paths shown as outlines: whole where `fits` says the
    prompt holds them, else the coldest files outlined first (the largest first among equals), then hotter
    ones, then the outlines cut."""
    shown = {p: _fence(f"{kernel_dir}/{p}", files[p]) for p in files}
    order = sorted(files, key=lambda p: (hotness.get(p, 0.0), -len(files[p])))
    outlined: list[str] = []

    def text() -> str:
        return "\n\n".join(shown[p] for p in sorted(files))
    for path in order:
        if fits(text()):
            return text(), outlined
        shown[path] = _outlined(kernel_dir, path, files[path])
        outlined.append(path)
    keep = 64
    while not fits(text()) and keep > 0:
        keep //= 2
        for path in order:
            shown[path] = _outlined(kernel_dir, path, files[path], keep)
    return text(), outlined


def requested(reply: str, files: dict[str, str], kernel_dir: str) -> list[tuple[str, int, int]]:
    """The parts a reply asks to see (`SHOW kernel/file.cu:120-180`), of files that exist, as (path, first,
    last) with 1-based inclusive lines; only when the reply asks and edits nothing."""
    if "<<<<<<< SEARCH" in reply:
        return []
    out = []
    for written, first, last in SHOW.findall(reply):
        path = written.removeprefix(f"{kernel_dir}/")
        if path in files and 0 < int(first) <= int(last):
            out.append((path, int(first), min(int(last), len(files[path].splitlines()))))
    return out


def shown(parts: list[tuple[str, int, int]], files: dict[str, str], kernel_dir: str, budget_chars: int) -> str:
    """The second turn: the lines asked for, numbered, within `budget_chars`."""
    blocks, used = [], 0
    for path, first, last in parts:
        lines = files[path].splitlines()[first - 1:last]
        body = "\n".join(f"{first + k:5d}| {line}" for k, line in enumerate(lines))
        if used + len(body) > budget_chars:
            body = body[:max(0, budget_chars - used)] + "\n[cut: the prompt's budget]"
        used += len(body)
        blocks.append(f"{kernel_dir}/{path}, lines {first}-{last}:\n```\n{body}\n```")
    return ("Here are the lines you asked for. Now reply with the rationale and SEARCH/REPLACE blocks (copy SEARCH "
            "text from these lines exactly, without the line numbers):\n\n" + "\n\n".join(blocks))
