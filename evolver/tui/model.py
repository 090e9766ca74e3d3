"""What the TUI shows, computed from a `Snapshot`: pure functions, no Textual, testable and fast."""

from __future__ import annotations

import time
from dataclasses import dataclass

from evolver.store import Candidate, Snapshot

FAILED = ("incorrect", "compile_error", "timeout", "crash", "rejected", "patch_failed", "llm_error")
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


@dataclass(frozen=True)
class Header:
    run: str
    elapsed_s: float
    done: int
    pending: int
    failed: int
    best_id: str | None
    best_score: float | None
    speedup_vs_seed: float | None
    speedup_vs_baseline: float | None
    evals_per_hour: float | None
    tokens: int
    cost_usd: float
    malformed: int


def status_of(c: Candidate) -> str:
    r = c.result
    return str(r.get("status")) if r else "pending"


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
        path = []
        current: Candidate | None = c
        while current is not None and current.commit not in self._seed:
            if current.op == "seed":
                self._seed[current.commit] = current.commit
                break
            path.append(current.commit)
            current = by_commit.get(current.parents[0]) if current.parents else None
        seed = self._seed.get(current.commit) if current is not None else None
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
            id=c.id, status=status_of(c), score=c.score,
            vs_parent=(parent.score / c.score) if c.score and parent is not None and parent.score else None,
            vs_seed=(seed.score / c.score) if c.score and seed is not None and seed.score else None,
            op=c.op, model=c.trailers.get("Model", ""), island=c.island, created=c.created))
    return out


def summarise(snapshot: Snapshot, now: float | None = None,
              by_commit: dict[str, Candidate] | None = None) -> tuple[Header, list[float], dict[str, int]]:
    """Header figures, the best-so-far series (by candidate id) and the outcome mix, in one pass: this runs
    on every refresh of a run that may hold 10,000 candidates."""
    now = now if now is not None else time.time()
    cands = snapshot.candidates
    started = now
    done = failed = tokens = 0
    cost = 0.0
    times: list[float] = []
    first_seed: Candidate | None = None
    counts: dict[str, int] = {}
    series: list[float] = []
    best_so_far_value: float | None = None
    for cid in sorted(cands):
        c = cands[cid]
        started = min(started, c.created)
        r = c.result
        status = str(r.get("status")) if r is not None else "pending"
        counts[status] = counts.get(status, 0) + 1
        score = None
        if r is not None:
            done += 1
            failed += status in FAILED
            t = r.get("t")
            if isinstance(t, (int, float)):
                times.append(float(t))
            if status == "ok" and isinstance(r.get("score"), (int, float)):
                score = float(r["score"])
        if score is not None and (best_so_far_value is None or score < best_so_far_value):
            best_so_far_value = score
        if best_so_far_value is not None:
            series.append(best_so_far_value)
        trailers = c.trailers
        if "Tokens" in trailers:
            for part in trailers["Tokens"].split("+"):
                tokens += int(part) if part.isdigit() else 0
        if "Cost-USD" in trailers:
            cost += c.cost_usd
        if score and first_seed is None and trailers.get("Op") == "seed":
            first_seed = c  # ids ascend, so the first seed with a score is the first seed
    best = (by_commit if by_commit is not None else snapshot.by_commit()).get(snapshot.best_commit or "")
    rate = None
    if len(times) >= 2:
        times.sort()
        if times[-1] > times[0]:
            rate = (len(times) - 1) / ((times[-1] - times[0]) / 3600)
    baseline = None
    if best is not None and best.result:
        value = (best.result.get("details") or {}).get("baseline_us")
        baseline = value / best.score if isinstance(value, (int, float)) and best.score else None
    header = Header(run=snapshot.run, elapsed_s=max(0.0, now - started), done=done, pending=len(cands) - done,
                    failed=failed, best_id=best.id if best else None, best_score=best.score if best else None,
                    speedup_vs_seed=(first_seed.score / best.score) if best and best.score and first_seed and
                    first_seed.score else None,
                    speedup_vs_baseline=baseline, evals_per_hour=rate, tokens=tokens, cost_usd=cost,
                    malformed=snapshot.malformed_notes)
    return header, series, dict(sorted(counts.items(), key=lambda kv: -kv[1]))


@dataclass(frozen=True)
class Step:
    candidate: Candidate
    parents: tuple[Candidate, ...]  # two for a crossover
    delta: float | None  # relative score change against the first parent (negative: faster)


def ancestry(candidate: Candidate, by_commit: dict[str, Candidate], limit: int = 200) -> list[Step]:
    """First-parent ancestry back to the seed, each step with all its parents (both sides of a merge)."""
    steps = []
    current: Candidate | None = candidate
    seen = set()
    while current is not None and current.commit not in seen and len(steps) < limit:
        seen.add(current.commit)
        parents = tuple(by_commit[p] for p in current.parents if p in by_commit)
        first = parents[0] if parents else None
        delta = ((current.score - first.score) / first.score if current.score is not None and first is not None
                 and first.score else None)
        steps.append(Step(current, parents, delta))
        current = first
    return steps


def fmt_duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def fmt_age(created: int, now: float) -> str:
    return fmt_duration(max(0.0, now - created))
