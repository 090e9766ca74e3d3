"""Strict application of LLM edits to a kernel directory.

A reply carries SEARCH/REPLACE blocks, each headed by the path of the file it edits:

    kernel/qr.cu
    <<<<<<< SEARCH
    lines copied exactly from the file
    =======
    the new lines
    >>>>>>> REPLACE

or, where the configuration allows, whole files in fenced blocks headed by their path (or put after a
sentence that names the file, if the block could be all of it). Each SEARCH must match exactly once; a second,
whitespace-tolerant try is allowed and recorded. A block that repeats the prompt's example, a miss, an edit outside
the kernel directory, a reply cut off by the token limit (for whole files) or a child identical to its
parent is an `EditError` whose message is written for the LLM: it quotes the closest lines of the file.
Pure functions over {path: text}; called by the operators.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from dataclasses import dataclass

_OPEN = re.compile(r"^\s*<{5,9}\s*SEARCH\s*$")
_WRONG_OPEN = re.compile(r"^\s*(>{5,9}|={5,9})\s*SEARCH\s*$")
_MID = re.compile(r"^\s*={5,9}\s*$")
_CLOSE = re.compile(r"^\s*>{5,9}\s*REPLACE\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
_PATHLIKE = re.compile(r"^(?=.*[./])[\w./\-]+$")  # no spaces, and a dot or a slash somewhere
# The format as the prompt shows it (evolver/search/prompts.py): a reply that repeats it has copied the example
EXAMPLE_PATH = "path/of/file.ext"
EXAMPLE_SEARCH = "lines copied exactly from the current file, whitespace included"
EXAMPLE_REPLACE = "the lines that replace them"
_NOT_PATHS = {EXAMPLE_PATH.lower(), "search/replace"}  # headers that name the format, not a file
_BACKTICKED = re.compile(r"`([^`\s]+)`")


class EditError(Exception):
    """Edits that cannot be applied; str() is the diagnostic sent back to the LLM."""


@dataclass(frozen=True)
class Block:
    path: str | None  # as written in the reply
    search: str
    replace: str


@dataclass(frozen=True)
class EditResult:
    files: dict[str, str]  # the child's kernel directory, path -> text
    changed: tuple[str, ...]
    mode: str  # "exact", "fuzzy" (a whitespace-tolerant match was needed) or "rewrite"


def _clean_path(line: str) -> str | None:
    text = line.strip().strip("*`'\"").strip()
    for prefix in ("File:", "file:", "Path:", "path:", "#", "//"):
        if text.startswith(prefix):
            text = text[len(prefix):].strip().strip("*`'\"").strip()
    text = text.rstrip(":").strip()
    if text.endswith(".") or text.lower() in _NOT_PATHS:  # a sentence's last word ("Faster."), the format's name
        return None
    return text if _PATHLIKE.match(text) else None


def parse_blocks(reply: str) -> list[Block]:
    """SEARCH/REPLACE blocks of a reply, in order. Malformed blocks raise `EditError`."""
    lines = reply.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        if _WRONG_OPEN.match(lines[i]):
            raise EditError(f"line {i + 1}: {lines[i].strip()!r} is not a valid opening marker; a block "
                            "opens with a line `<<<<<<< SEARCH`")
        if not _OPEN.match(lines[i]):
            i += 1
            continue
        path = None
        for back in range(i - 1, max(-1, i - 4), -1):
            if _FENCE.match(lines[back]) or not lines[back].strip():
                continue
            path = _clean_path(lines[back])
            break
        mid = next((j for j in range(i + 1, len(lines)) if _MID.match(lines[j])), None)
        if mid is None:
            raise EditError(f"line {i + 1}: SEARCH block has no `=======` separator (was the reply cut off?)")
        close = next((j for j in range(mid + 1, len(lines)) if _CLOSE.match(lines[j])), None)
        if close is None:
            raise EditError(f"line {i + 1}: SEARCH block has no `>>>>>>> REPLACE` line (was the reply cut off?)")
        if any(_OPEN.match(lines[j]) for j in range(i + 1, close)):
            raise EditError(f"line {i + 1}: a new SEARCH starts before this block's `>>>>>>> REPLACE`")
        blocks.append(Block(path, "\n".join(lines[i + 1:mid]), "\n".join(lines[mid + 1:close])))
        i = close + 1
    return blocks


def parse_fence_pairs(reply: str) -> list[Block]:
    """SEARCH and REPLACE as two fenced blocks, each labelled by its info string (```search) or by the line before
    it ("SEARCH:", "**Replace:**"), the second right after the first: how models often write the format. The
    SEARCH must still match the file exactly (`apply_block`); a SEARCH fence with no REPLACE after it is none."""
    lines = reply.splitlines()
    fences = _fences(lines)
    blocks = []
    for (label, i, end, above), (next_label, j, next_end, next_above) in zip(fences, fences[1:]):
        between = [k for k in range(end + 1, j) if lines[k].strip() and k != next_above]
        if label == "search" and next_label == "replace" and not between:
            header = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip() and k != above), "")
            blocks.append(Block(_clean_path(header), "\n".join(lines[i + 1:end]), "\n".join(lines[j + 1:next_end])))
    return blocks


def _fences(lines: list[str]) -> list[tuple[str | None, int, int, int | None]]:
    """Each complete fenced block: its label, its opening and closing lines, and the line that labels it, if any."""
    found = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == fence.group(1)), None) if fence else None
        if fence is None or end is None:
            i += 1
            continue
        above = next((k for k in range(i - 1, -1, -1) if lines[k].strip()), None)
        own = _label(fence.group(2))  # ```search
        label = own or (_label(lines[above]) if above is not None else None)  # "Search:" over the fence
        found.append((label, i, end, above if label and not own else None))
        i = end + 1
    return found


def _label(text: str) -> str | None:
    word = re.sub(r"[^a-z]", "", text.lower())
    return word if word in ("search", "replace") else None


def parse_rewrites(reply: str, parent: dict[str, str]) -> dict[str, str]:
    """Whole files in fenced blocks, each headed (line before, or info string) by a known path, or put after a
    sentence that names exactly one known file in backticks ("... update `kernel/sort.py` with:") when the block
    is at least half that file's length (a sentence may as well introduce a snippet of it).

    Unterminated fences are left out: they mean the reply was cut off.
    """
    known = set(parent)
    lines = reply.splitlines()
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        marker, info = fence.group(1), fence.group(2).strip()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == marker), None)
        if end is None:
            break
        candidates = [w for w in info.split() if _clean_path(w)]
        back = i - 1
        while back >= 0 and not lines[back].strip():
            back -= 1
        if back >= 0 and _clean_path(lines[back]):
            candidates.append(_clean_path(lines[back]) or "")
        body = "\n".join(lines[i + 1:end]) + "\n"
        path = next(filter(None, (_match_known(name, known) for name in candidates)), None)
        path = path or _named_in_prose(lines[back] if back >= 0 else "", body, parent, known)
        if path:
            out[path] = body
        i = end + 1
    return out


def _named_in_prose(sentence: str, body: str, parent: dict[str, str], known: set[str]) -> str | None:
    """The one known file a sentence names in backticks, if `body` could be all of it."""
    named = {p for p in (_match_known(w.strip("./"), known) for w in _BACKTICKED.findall(sentence)) if p}
    if len(named) != 1:
        return None
    path = named.pop()
    return path if 2 * body.count("\n") >= parent[path].count("\n") else None


def _match_known(name: str, known: set[str]) -> str | None:
    if name in known:
        return name
    tails = [k for k in known if name.endswith("/" + k) or k.endswith("/" + name)]
    return tails[0] if len(tails) == 1 else None


MAX_NAME_BYTES, MAX_PATH_BYTES = 255, 1024  # what file systems (and git checkouts of them) accept


def path_problem(path: str) -> str:
    """'' when `path` can be a file of a candidate on any file system and in git, else why not."""
    parts = path.split("/")
    if any(ord(ch) < 32 or ch == "\x7f" for ch in path):
        return "control characters in a file name"
    if len(path.encode()) > MAX_PATH_BYTES:
        return f"a path longer than {MAX_PATH_BYTES} bytes"
    for part in parts:
        if part in ("", ".", ".."):
            return f"a path component {part!r}"
        if part.lower() == ".git":
            return "a .git component (git refuses to store it)"
        if len(part.encode()) > MAX_NAME_BYTES:
            return f"a file name longer than {MAX_NAME_BYTES} bytes"
    return ""


def resolve_path(written: str | None, files: dict[str, str], kernel_dir: str) -> str:
    """Map a path as the LLM wrote it to a path inside the kernel directory, or raise."""
    names = sorted(files)
    if written is None:
        if len(files) == 1:
            return names[0]
        raise EditError("a SEARCH/REPLACE block is not headed by a file path; write the path (one of "
                        f"{', '.join(names)}) on the line before `<<<<<<< SEARCH`")
    norm = posixpath.normpath(written)
    if norm.startswith("/") and norm.lstrip("/").startswith(kernel_dir + "/"):  # the prompt's path, a slash before
        norm = norm.lstrip("/")
    if norm.startswith("../") or norm == ".." or norm.startswith("/"):
        raise EditError(f"{written}: edits outside the kernel directory are not allowed")
    if norm.startswith(kernel_dir + "/"):
        norm = norm[len(kernel_dir) + 1:]
    if norm in files:
        return norm
    match = _match_known(norm, set(files))
    if match:
        return match
    if "/" in norm and not norm.startswith(kernel_dir):
        raise EditError(f"{written}: edits outside the kernel directory ({kernel_dir}/) are not allowed")
    problem = path_problem(norm)
    if problem:
        raise EditError(f"{written[:80]}: not a usable file name ({problem}); use a short plain name")
    return norm  # a new file inside the kernel directory (allowed with an empty SEARCH)


def _closest(text: str, search: str, path: str) -> str:
    lines = text.splitlines()
    want = [s for s in search.splitlines() if s.strip()]
    if not want or not lines:
        return ""
    first = want[0].strip()
    scored = sorted(((difflib.SequenceMatcher(None, first, line.strip()).ratio(), n)
                     for n, line in enumerate(lines)), reverse=True)[:2]
    shown = []
    for ratio, n in scored:
        if ratio < 0.4:
            continue
        lo, hi = n, min(len(lines), n + max(3, len(want)))
        excerpt = "\n".join(f"{k + 1:5d}| {lines[k]}" for k in range(lo, hi))
        shown.append(f"closest lines in {path} (similarity {ratio:.2f}):\n{excerpt}")
    return "\n".join(shown)


def _fuzzy_span(text: str, search: str) -> list[tuple[int, int]]:
    """Line spans of `text` equal to `search` when each line is compared without surrounding blanks."""
    lines = text.splitlines(keepends=True)
    want = [s.strip() for s in search.strip("\n").splitlines()]
    while want and not want[-1]:
        want.pop()
    if not want:
        return []
    spans = []
    for start in range(len(lines) - len(want) + 1):
        if all(lines[start + k].strip() == want[k] for k in range(len(want))):
            spans.append((start, start + len(want)))
    return spans


def _reindented(replace: str, search: str, matched: str) -> str:
    """REPLACE shifted as far as the file's lines are from SEARCH's (a SEARCH matched only without its indentation
    was written at another depth, and so was its REPLACE: in Python the depth is the code)."""
    have, want = _indent(next((line for line in search.splitlines() if line.strip()), "")), _indent(matched)
    lines = replace.split("\n")
    if want.startswith(have):
        return "\n".join(want[len(have):] + line if line.strip() else line for line in lines)
    cut = len(have) - len(want)
    if not have.startswith(want) or any(line.strip() and not line.startswith(have[len(want):]) for line in lines):
        return replace  # no one shift between them: as written
    return "\n".join(line[cut:] if line.strip() else line for line in lines)


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def apply_block(text: str, block: Block, path: str) -> tuple[str, bool]:
    """Apply one block to `text`; returns (new text, needed the whitespace-tolerant match)."""
    if not block.search.strip():
        raise EditError(f"{path}: empty SEARCH; copy the lines to replace exactly from the file")
    count = text.count(block.search)
    if count == 1:
        return text.replace(block.search, block.replace, 1), False
    if count > 1:
        raise EditError(f"{path}: SEARCH matches {count} places; include more surrounding lines so it "
                        "matches exactly one")
    spans = _fuzzy_span(text, block.search)
    if len(spans) == 1:
        lines = text.splitlines(keepends=True)
        start, end = spans[0]
        replace = _reindented(block.replace, block.search, lines[start])
        replacement = replace + ("\n" if replace and not replace.endswith("\n") else "")
        return "".join(lines[:start]) + replacement + "".join(lines[end:]), True
    if len(spans) > 1:
        raise EditError(f"{path}: SEARCH matches {len(spans)} places (ignoring indentation); include more "
                        "surrounding lines")
    hint = _closest(text, block.search, path)
    began = "\n".join(block.search.strip("\n").splitlines()[:3])
    raise EditError(f"{path}: SEARCH does not match the file. It must be copied exactly, whitespace "
                    f"included. Your SEARCH began:\n{began[:400]}\n{hint}".rstrip())


def apply_reply(reply: str, parent: dict[str, str], kernel_dir: str, *, truncated: bool,
                allow_rewrite: bool) -> EditResult:
    """The child's files from a reply, or `EditError` with a diagnostic for the LLM."""
    blocks = parse_blocks(reply) or parse_fence_pairs(reply)
    files = dict(parent)
    if blocks:
        fuzzy = False
        for block in blocks:
            if block.search.strip() == EXAMPLE_SEARCH or block.replace.strip() == EXAMPLE_REPLACE:
                raise EditError("a block repeats the format's example text instead of an edit: copy the lines to "
                                "change from the file into SEARCH, and their new version into REPLACE")
            path = resolve_path(block.path, files, kernel_dir)
            if path not in files:
                if block.search.strip():
                    raise EditError(f"{path}: no such file in the kernel directory (files: "
                                    f"{', '.join(sorted(files))})")
                files[path] = block.replace + "\n"
                continue
            files[path], used_fuzzy = apply_block(files[path], block, path)
            fuzzy |= used_fuzzy
        mode = "fuzzy" if fuzzy else "exact"
    else:
        rewrites = parse_rewrites(reply, parent) if allow_rewrite else {}
        if not rewrites:
            expected = "SEARCH/REPLACE blocks" + (" or a whole file in a fenced block headed by its path"
                                                   if allow_rewrite else "")
            cut = " The reply was cut off by the token limit." if truncated else ""
            raise EditError(f"the reply contains no edit; expected {expected}.{cut}")
        if truncated:
            raise EditError("the reply was cut off by the token limit, so the rewritten file may be "
                            "incomplete; send SEARCH/REPLACE blocks for the lines you change instead")
        files.update(rewrites)
        mode = "rewrite"
    changed = tuple(p for p in sorted(files) if files[p] != parent.get(p))
    if not changed:
        raise EditError("the edits change nothing; propose a change that differs from the current code")
    return EditResult(files=files, changed=changed, mode=mode)
