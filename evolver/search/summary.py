"""A run's figures, computed from a `Snapshot`: counts by status, the best and its speedups, the rate of
results, tokens and cost, the best-so-far series. `evolve status` prints them and the TUI's header shows
them (the TUI keeps a `Summary` up to date incrementally); pure, no UI.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable
from dataclasses import dataclass

from evolver.records.candidates import Candidate, Snapshot, score_of
from evolver.records.results import FAILED


@dataclass(frozen=True)
class Header:
    run: str
    elapsed_s: float
    done: int
    pending: int
    failed: int
    best_id: str | None
    best_score: float | None  # the score that made it best: its confirmed one under a confirm mode
    speedup_vs_seed: float | None
    speedup_vs_baseline: float | None
    evals_per_hour: float | None
    tokens: int
    cost_usd: float
    malformed: int
    branch_elsewhere: bool = False  # the branch `best` holds another candidate than this run's best


@dataclass(slots=True)
class _Part:
    """What one candidate adds to the run's summary."""

    status: str
    done: bool
    failed: bool
    t: float | None  # when its result was written
    score: float | None
    tokens: int
    cost: float
    created: int
    seed: bool


def _part(c: Candidate) -> _Part:
    r = c.result
    tokens = sum(int(p) for p in c.trailers.get("Tokens", "").split("+") if p.isdigit())
    return _Part(status=c.status, done=r is not None, failed=c.status in FAILED, t=r.t if r else None,
                 score=c.score, tokens=tokens,
                 cost=c.cost_usd if "Cost-USD" in c.trailers else 0.0, created=c.created,
                 seed=c.trailers.get("Op") == "seed")


class Summary:
    """Header figures, the best-so-far series (by candidate id) and the outcome mix of a run, kept up to
    date from the ids that changed: a refresh of a 10,000-candidate run costs what changed, not 10,000."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._parts: dict[str, _Part] = {}
        self._ids: list[str] = []  # sorted
        self._best: list[float | None] = []  # best score among _ids[:i + 1]
        self._counts: dict[str, int] = {}
        self._done = self._failed = self._tokens = 0
        self._cost = 0.0

    def _add(self, cid: str, part: _Part, sign: int) -> None:
        self._counts[part.status] = self._counts.get(part.status, 0) + sign
        if not self._counts[part.status]:
            del self._counts[part.status]
        self._done += sign * part.done
        self._failed += sign * part.failed
        self._tokens += sign * part.tokens
        self._cost += sign * part.cost
        if sign > 0:
            self._parts[cid] = part
        else:
            del self._parts[cid]

    def update(self, snapshot: Snapshot, changed: set[str] | None, now: float | None = None,
               by_commit: dict[str, Candidate] | None = None,
               winner: Callable[[Snapshot], Candidate | None] | None = None) -> tuple[Header, list[float],
                                                                                dict[str, int]]:
        """Apply the candidates in `changed` (None: everything) and return (header, series, outcomes).
        `winner`: the run's best as the engine decides it (views.run_winner); without it, what `best` holds."""
        cands = snapshot.candidates
        if changed is None:
            self._reset()
        self._apply(cands, set(cands) if changed is None else changed & cands.keys())
        if len(self._parts) != len(cands):  # candidates went away (a deleted branch): start over
            self._reset()
            self._apply(cands, set(cands))
        return self._header(snapshot, now if now is not None else time.time(), by_commit, winner), self.series(), \
            dict(sorted(self._counts.items(), key=lambda kv: (-kv[1], kv[0])))  # ties by name: stable

    def _apply(self, cands: dict[str, Candidate], changed: set[str]) -> None:
        first_changed = len(self._ids)
        new_ids = sorted(changed - self._parts.keys())
        if new_ids and self._ids and new_ids[0] < self._ids[-1]:  # not all after the known ones: re-sort
            self._ids = sorted(self._ids + new_ids)
            self._best = [None] * len(self._ids)
            first_changed = 0
        elif new_ids:  # the usual case: new candidates have the highest ids
            self._ids += new_ids
            self._best += [None] * len(new_ids)
        for cid in changed:
            if cid in self._parts:
                self._add(cid, self._parts[cid], -1)
                first_changed = min(first_changed, bisect.bisect_left(self._ids, cid))
            self._add(cid, _part(cands[cid]), +1)
        best = self._best[first_changed - 1] if first_changed else None
        for i in range(first_changed, len(self._ids)):
            score = self._parts[self._ids[i]].score
            if score is not None and (best is None or score < best):
                best = score
            self._best[i] = best

    def series(self) -> list[float]:
        """Best score so far, from the first candidate with a score on, in id order."""
        start = next((i for i, v in enumerate(self._best) if v is not None), len(self._best))
        return [v for v in self._best[start:] if v is not None]

    @staticmethod
    def _rate(times: list[float]) -> float | None:
        """Results per hour over the last hour of results (gaps between sessions do not count); none until
        they span a minute (two results 0.2 s apart are not a rate of 18,000 an hour)."""
        if not times:
            return None
        last = max(times)
        recent = [t for t in times if t >= last - 3600]
        span = last - min(recent)
        return (len(recent) - 1) / (span / 3600) if span >= 60 else None

    def _header(self, snapshot: Snapshot, now: float, by_commit: dict[str, Candidate] | None,
                winner: Callable[[Snapshot], Candidate | None] | None) -> Header:
        parts = self._parts.values()
        started = min((p.created for p in parts), default=now)
        rate = self._rate([p.t for p in parts if p.t is not None])
        first_seed = next((self._parts[cid] for cid in self._ids
                           if self._parts[cid].seed and self._parts[cid].score), None)
        branch = (by_commit if by_commit is not None else snapshot.by_commit()).get(snapshot.best_commit or "")
        best = winner(snapshot) if winner is not None else branch
        baseline = None
        if best is not None and best.result:
            value = best.result.details.get("baseline_us")
            baseline = value / best.score if isinstance(value, (int, float)) and best.score else None
        return Header(run=snapshot.run, elapsed_s=max(0.0, now - started), done=self._done,
                      pending=len(self._parts) - self._done, failed=self._failed,
                      best_id=best.id if best else None, best_score=score_of(best) if best else None,
                      speedup_vs_seed=(first_seed.score / best.score) if best and best.score and first_seed
                      and first_seed.score else None,
                      speedup_vs_baseline=baseline, evals_per_hour=rate, tokens=self._tokens,
                      cost_usd=self._cost, malformed=snapshot.malformed_notes,
                      branch_elsewhere=best is not None and snapshot.best_commit not in (None, best.commit))


def summarise(snapshot: Snapshot, now: float | None = None,
              by_commit: dict[str, Candidate] | None = None) -> tuple[Header, list[float], dict[str, int]]:
    """Header figures, the best-so-far series and the outcome mix of a whole snapshot (one-off: `status`)."""
    return Summary().update(snapshot, None, now, by_commit)
