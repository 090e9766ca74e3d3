"""What the TUI shows, computed from a `Snapshot`: pure functions, no Textual, testable and fast."""

from __future__ import annotations

from dataclasses import dataclass

from evolver.records.candidates import Candidate, Snapshot
from evolver.records.results import FAILED
from evolver.search.population import ancestors

FILTERS = ("all", "ok", "failed", "pending")


@dataclass(frozen=True)
class Row:
    id: str
    status: str
    score: float | None
    vs_parent: float | None  # speedup over the parent (>1: faster)
    vs_seed: float | None  # speedup over the seed its lineage started from
    op: str
    model: str
    island: int
    created: int


def matches(row: Row, status_filter: str) -> bool:
    if status_filter == "all":
        return True
    if status_filter == "failed":
        return row.status in FAILED
    return row.status == status_filter


class SeedIndex:
    """The seed each candidate's lineage started from, memoised by commit: it never changes."""

    def __init__(self) -> None:
        self._seed: dict[str, str | None] = {}  # commit -> its seed's commit

    def seed_of(self, c: Candidate, by_commit: dict[str, Candidate]) -> Candidate | None:
        path: list[str] = []
        seed: str | None = None
        for a in ancestors(c, by_commit):
            if a.commit in self._seed:
                seed = self._seed[a.commit]
                break
            path.append(a.commit)
            if a.op == "seed":
                seed = a.commit
                break
        for commit in path:
            self._seed[commit] = seed
        return by_commit.get(seed) if seed else None  # the current object: its score may be new


def rows(snapshot: Snapshot, ids: set[str] | None = None, by_commit: dict[str, Candidate] | None = None,
         seeds: SeedIndex | None = None) -> list[Row]:
    """Rows for `ids` (default: every candidate)."""
    by_commit = by_commit if by_commit is not None else snapshot.by_commit()
    seeds = seeds or SeedIndex()
    chosen = snapshot.candidates.values() if ids is None else \
        (snapshot.candidates[i] for i in ids if i in snapshot.candidates)
    out = []
    for c in chosen:
        parent = by_commit.get(c.parents[0]) if c.parents else None
        seed = seeds.seed_of(c, by_commit)
        out.append(Row(
            id=c.id, status=c.status, score=c.score,
            vs_parent=(parent.score / c.score) if c.score and parent is not None and parent.score else None,
            vs_seed=(seed.score / c.score) if c.score and seed is not None and seed.score else None,
            op=c.op, model=c.trailers.get("Model", ""), island=c.island, created=c.created))
    return out


def fmt_duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def fmt_age(created: int, now: float) -> str:
    return fmt_duration(max(0.0, now - created))
