"""Candidates as git holds them, without running git: the `Candidate` and `Snapshot` the rest of evolve
reads, commit messages with their provenance trailers (`format_message`, `parse_commit`), result lines
(`parse_note`), and git's own object hashes computed in Python (`git_tree_hash`)."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

TRAILER_PREFIX = "Evolve-"
_NO_VERDICT = ("patch_failed", "llm_error")  # (results.NOT_EVALUATED: no judge saw them)
PROVENANCE_KEYS = ("Model", "Tokens", "Cost-USD", "Tune", "Edit", "Attempts")  # trailers worth showing a user


@dataclass(frozen=True)
class Result:
    """One line of a candidate's note, parsed once: what a judge said about it (or why no judge saw it)."""

    line: dict[str, Any] = field(compare=False, repr=False)  # as written: copied by the cache, shown by `show`
    status: str = ""
    score: float | None = None  # an `ok` result's score, else None
    harness: str = ""  # the version of the judge that measured it
    gpu: str | None = None  # the fingerprint of the device it was measured on
    error: str = ""
    confirm: bool = False  # a re-measurement in the thorough mode
    cached_from: str | None = None  # the candidate whose identical kernel was measured
    t: float | None = None  # when it was written (unix seconds)

    @classmethod
    def of(cls, line: dict[str, Any]) -> "Result":
        status, score, gpu, t = line.get("status"), line.get("score"), line.get("gpu"), line.get("t")
        ok_score = status == "ok" and isinstance(score, (int, float)) and not isinstance(score, bool)
        return cls(line=line, status=status if isinstance(status, str) else "",
                   score=float(score) if ok_score and score is not None else None, harness=str(line.get("harness") or ""),
                   gpu=gpu if isinstance(gpu, str) else None, error=str(line.get("error") or ""),
                   confirm=bool(line.get("confirm")), cached_from=line.get("cached_from") or None,
                   t=float(t) if isinstance(t, (int, float)) else None)

    @property
    def details(self) -> dict[str, Any]:
        details = self.line.get("details")
        return details if isinstance(details, dict) else {}


@dataclass(frozen=True)
class Candidate:
    """One candidate as the store sees it: its commit, provenance trailers and result lines."""

    run: str
    id: str
    commit: str
    parents: tuple[str, ...]
    created: int  # committer time, unix seconds
    subject: str
    trailers: dict[str, str]
    results: tuple[Result, ...] = ()  # its note's lines, oldest first (dicts are parsed on the way in)

    def __post_init__(self) -> None:
        if any(not isinstance(r, Result) for r in self.results):
            object.__setattr__(self, "results", tuple(r if isinstance(r, Result) else Result.of(r)
                                                      for r in self.results))

    @property
    def op(self) -> str:
        return self.trailers.get("Op", "?")

    @property
    def kernel_tree(self) -> str:
        return self.trailers.get("Kernel-Tree", "")

    @property
    def parent_ids(self) -> tuple[str, ...]:
        value = self.trailers.get("Parent", "")
        return tuple(p for p in value.split(",") if p)

    @property
    def island(self) -> int:
        return int(self._number("Island"))

    @property
    def cost_usd(self) -> float:
        return self._number("Cost-USD")

    def _number(self, key: str) -> float:
        """A numeric trailer; 0 where it is absent or not a number (a hand-edited commit)."""
        try:
            return float(self.trailers.get(key, "0"))
        except ValueError:
            return 0.0

    @property
    def result(self) -> Result | None:
        """The result that judges the candidate: its last result line that is not a confirmation, unless a
        confirmation (a re-measurement in the thorough mode) failed: from then on it is judged by that, as a
        parent, a migrant, a cached result and in every count (a kernel wrong once is not correct)."""
        first = next((r for r in reversed(self.results) if r.status and not r.confirm), None)
        confirmation = self.confirmation
        if first is not None and confirmation is not None and confirmation.status not in ("ok", *_NO_VERDICT):
            return confirmation
        return first

    @property
    def confirmation(self) -> Result | None:
        """The last re-measurement in the thorough mode (`confirm` step), if any."""
        return next((r for r in reversed(self.results) if r.status and r.confirm), None)

    @property
    def status(self) -> str:
        """The final result's status, or "pending"."""
        r = self.result
        return r.status if r is not None else "pending"

    @property
    def score(self) -> float | None:
        r = self.result
        return r.score if r is not None else None


@dataclass
class Snapshot:
    run: str
    candidates: dict[str, Candidate] = field(default_factory=dict)  # by id
    best_commit: str | None = None
    malformed_notes: int = 0
    bad_lines: dict[str, int] = field(default_factory=dict)  # commit -> malformed lines in its note

    def by_commit(self) -> dict[str, Candidate]:
        return {c.commit: c for c in self.candidates.values()}


def with_unit(score: float | None, c: Candidate | None) -> str:
    """A score as the judge reported it: its value and unit (`details.unit`, if the judge gave one)."""
    if score is None:
        return ""
    unit = c.result.details.get("unit") if c is not None and c.result is not None else None
    return f"{score:.6g}" + (f" {unit}" if isinstance(unit, str) and unit else "")


def score_of(c: Candidate) -> float | None:
    """The score that ranks it: confirmed if it was confirmed."""
    return c.confirmation.score if c.confirmation and c.confirmation.score is not None else c.score


# --- pure helpers --------------------------------------------------------------------------------------

def is_text(data: bytes) -> bool:
    """Whether a file is UTF-8 text (what an LLM may read and edit); anything else is kept as bytes."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\0" not in data


def git_blob_hash(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def git_tree_hash(files: dict[str, bytes]) -> str:
    """The hash git gives the tree of `files` (relative paths -> contents, mode 100644).

    Lets the engine recognise a duplicate kernel before writing anything.
    """
    entries: dict[str, tuple[bytes, bytes]] = {}
    subdirs: dict[str, dict[str, bytes]] = {}
    for path, data in files.items():
        head, _, rest = path.partition("/")
        if rest:
            subdirs.setdefault(head, {})[rest] = data
        else:
            entries[head] = (b"100644", bytes.fromhex(git_blob_hash(data)))
    for name, sub in subdirs.items():
        entries[name] = (b"40000", bytes.fromhex(git_tree_hash(sub)))
    # git sorts tree entries by name, with directories compared as if they ended in "/"
    ordered = sorted(entries.items(), key=lambda kv: kv[0] + ("/" if kv[1][0] == b"40000" else ""))
    body = b"".join(mode + b" " + name.encode() + b"\0" + sha for name, (mode, sha) in ordered)
    return hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()


def clean_text(text: str) -> str:
    """Text an LLM wrote, made safe for a commit message: no NUL or other control characters (tabs and
    newlines kept), no lone surrogates (git and UTF-8 refuse them)."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    return "".join(ch for ch in text if ch in "\n\t" or ch >= " " and ch != "\x7f")


def format_message(subject: str, body: str, trailers: dict[str, str]) -> str:
    subject, body = clean_text(subject), clean_text(body)
    trailers = {k: clean_text(str(v)) for k, v in trailers.items()}
    clean_body = body.strip().replace("\r", "")
    lines = [subject.strip().splitlines()[0][:120] if subject.strip() else "evolve candidate", ""]
    if clean_body:
        lines += [clean_body, ""]
    lines += [f"{TRAILER_PREFIX}{k}: {' '.join(str(v).split())}" for k, v in trailers.items()]
    return "\n".join(lines) + "\n"


def parse_note(text: str) -> tuple[list[dict[str, Any]], int]:
    """JSON lines of a note; blank lines (from `git notes append`) are skipped, bad lines counted."""
    out: list[dict[str, Any]] = []
    bad = 0
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if isinstance(value, dict):
            out.append(value)
        else:
            bad += 1
    # in the order they were written: a note merged from two clones (`evolve pull`, git's cat_sort_uniq)
    # has its lines sorted as text
    out.sort(key=lambda v: v["t"] if isinstance(v.get("t"), (int, float)) else 0.0)
    return out, bad


def now() -> float:
    return round(time.time(), 3)


def parse_commit(raw: bytes) -> tuple[tuple[str, ...], int, str, dict[str, str]]:
    """(parents, committer time, subject, Evolve- trailers) of a raw commit object."""
    header, _, message = raw.decode("utf-8", "replace").partition("\n\n")
    parents: list[str] = []
    created = 0
    for line in header.splitlines():
        if line.startswith("parent "):
            parents.append(line[7:].strip())
        elif line.startswith("committer "):
            try:
                created = int(line.rsplit(" ", 2)[-2])
            except (ValueError, IndexError):
                created = 0
    paragraphs = message.strip().split("\n\n")
    subject = paragraphs[0].splitlines()[0] if paragraphs and paragraphs[0] else ""
    trailers: dict[str, str] = {}
    for line in paragraphs[-1].splitlines() if len(paragraphs) > 1 else []:
        key, sep, value = line.partition(": ")
        if sep and key.startswith(TRAILER_PREFIX):
            trailers[key[len(TRAILER_PREFIX):]] = value.strip()
    return tuple(parents), created, subject, trailers
