"""What results mean to a run. The statuses, in one place, and the `Recorder`, the one part of the engine
that writes results and judges them: it appends each to its candidate's note, and decides from the results
alone which are comparable (same judge, one of this machine's devices), whether a kernel's result is
already known (the evaluation cache), which would-be best is measured again in the thorough mode
(`confirm`), and where `best` points.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, cast

from evolver.records.candidates import Candidate, Result, Snapshot, now
from evolver.records.reader import candidate_at
from evolver.records.store import Store, StoreError

T = TypeVar("T")

EVALUATOR_STATUSES = ("ok", "incorrect", "compile_error", "timeout", "crash", "rejected")  # what a judge reports
NOT_EVALUATED = ("patch_failed", "llm_error")  # attempts that made no code: no judge saw them
FIXABLE = ("compile_error", "incorrect", "timeout", "crash")  # failures a `fix` may repair
FAILED = (*(s for s in EVALUATOR_STATUSES if s != "ok"), *NOT_EVALUATED)


def beats(score: float, leading: float, min_gain: float) -> bool:
    """Whether `score` takes the lead from `leading`: lower by more than `min_gain` of it (the one place the
    minimum gain is applied: choosing `best` and queueing a would-be best for confirmation)."""
    return score < leading * (1 - min_gain)


def lead_changes(entries: list[tuple[Candidate, Result]], min_gain: float) -> list[Candidate]:
    """Of (candidate, its deciding result) pairs, taken in the order the results were written, each that took
    the lead: the first scored, then each that beats the one before it by more than min_gain (a fraction of the
    leader's score)."""
    took: list[Candidate] = []
    leading: float | None = None
    for c, r in sorted(entries, key=lambda e: (e[1].t or 0.0, e[0].id)):
        if r.score is not None and (leading is None or beats(r.score, leading, min_gain)):
            took.append(c)
            leading = r.score
    return took


def leader(entries: list[tuple[Candidate, Result]], min_gain: float) -> Candidate | None:
    """The last to take the lead (`lead_changes`)."""
    took = lead_changes(entries, min_gain)
    return took[-1] if took else None


def comparable(r: Result | None, version: str, fingerprints: set[str]) -> bool:
    """Whether a result was written by the judge `version` on one of the devices `fingerprints`: the one place
    that decides which results compare with this machine's (scores of different judges or devices never do)."""
    return r is not None and r.harness == version and r.gpu in fingerprints


def measured(c: Candidate, version: str, fingerprints: set[str]) -> bool:
    """Correct, and measured comparably: a candidate that may be a parent or `best`."""
    return comparable(c.result, version, fingerprints) and c.score is not None


class Recorder:
    def __init__(self, store: Store, snapshot: Snapshot, version: str, confirm_mode: str, confirm_version: str,
                 fingerprints: set[str], say: Callable[[str], None], min_gain: float = 0.0) -> None:
        self.store, self.snapshot, self.say = store, snapshot, say
        self.version = version  # the judge of this run's measurements
        self.confirm_mode, self.confirm_version = confirm_mode, confirm_version
        self.min_gain = min_gain  # a new best must beat the one before by more than this fraction of its score
        self.fingerprints = fingerprints  # the devices whose measurements compare with ours
        self.confirms: collections.deque[Candidate] = collections.deque()  # to re-measure, before anything new
        self.confirming: set[str] = set()
        self.awaited_seeds: set[str] = set()  # seeds queued for their first result in this session (`Engine._resume`)
        self._best_warned = False
        self._held: tuple[str, Candidate | None] | None = None  # (commit, candidate) `best` held, read once
        self._recorded = 0  # results written by this recorder: what `_per_change` keeps is worked out again after each
        self._kept: dict[str, tuple[tuple[int, int], Any]] = {}

    # -- judging results ----------------------------------------------------------------------------------
    def measured(self, c: Candidate) -> bool:
        return measured(c, self.version, self.fingerprints)

    def confirmed(self, c: Candidate) -> bool:
        """Correct in the thorough mode too, measured by today's judge on one of this machine's devices."""
        return self.confirmed_here(c) and c.confirmation is not None and c.confirmation.score is not None

    def confirmed_here(self, c: Candidate) -> bool:
        """Re-measured in the thorough mode by today's judge on one of our devices, whatever it found (an
        older judge's confirmation does not count)."""
        return comparable(c.confirmation, self.confirm_version, self.fingerprints)

    def failed_here(self, c: Candidate) -> bool:
        """Failed in a way a `fix` may repair, on this run's judge."""
        r = c.result  # a failed confirmation included: a kernel wrong in the thorough mode is worth a fix
        return r is not None and r.status in FIXABLE and r.harness in (self.version, self.confirm_version)

    def pool(self) -> list[Candidate]:
        """Every candidate a parent may be chosen from."""
        return [c for c in self.snapshot.candidates.values() if self.measured(c)]

    def to_judge_again(self, best: int = 3) -> list[Candidate]:
        """When nothing of the run compares with today's judge (a new harness, another mode or device): its
        judged seeds and its `best` best candidates, to be judged again so that the search goes on from where
        it was rather than stopping for want of a parent (their earlier results stay, never compared)."""
        candidates = self.snapshot.candidates.values()
        if self.pool():
            return []
        earlier = sorted((c for c in candidates if c.score is not None), key=lambda c: (c.score or 0.0, c.id))
        seeds = (c for c in candidates if c.op == "seed" and c.result is not None)  # the others are queued
        again = {c.id: c for c in [*seeds, *earlier[:best]]}
        return [again[cid] for cid in sorted(again)]

    def _per_change(self, name: str, work: Callable[[], T]) -> T:
        """`work()`, worked out once per change of the run's results (every result asks for what it needs)."""
        key = (self._recorded, len(self.snapshot.candidates))
        if name not in self._kept or self._kept[name][0] != key:
            self._kept[name] = (key, work())
        return cast(T, self._kept[name][1])

    def best(self) -> Candidate | None:
        """The run's best (`_best`)."""
        return self._per_change("best", self._best)

    def confirmed_floor(self) -> float | None:
        """The lowest first score of the candidates confirmed here, won or lost (`best` among them)."""
        return self._per_change("floor", lambda: min((c.score for c in self.snapshot.candidates.values()
                                                      if self.confirmed(c) and c.score is not None), default=None))

    def _best(self) -> Candidate | None:
        """The best correct candidate; with a confirm mode, only confirmed ones count, by confirmed score. With
        a min_gain, the lead passes, in the order the deciding scores were recorded, only to a candidate that
        beats the leader by more than that fraction: two measurements of the same code differ by the judge's
        noise, and `best` should not move on it (in a run on the H200 it moved twice to children whose changes
        no timed shape runs: the seed's SMALL_N and GRAPH_BYTES)."""
        if self.confirm_mode:  # each candidate with the result that decides
            decided = [(c, c.confirmation) for c in self.snapshot.candidates.values() if self.confirmed(c)]
        else:
            decided = [(c, c.result) for c in self.pool()]
        scored = [(c, r) for c, r in decided if r is not None and r.score is not None]
        if self.min_gain:
            return leader(scored, self.min_gain)
        return min(scored, key=lambda e: (e[1].score or 0.0, e[0].id), default=(None, None))[0]

    def cached(self, candidate: Candidate) -> dict[str, Any] | None:
        """Another candidate's result for the same kernel tree, by this judge on one of our devices."""
        for other in self.snapshot.candidates.values():
            r = other.result
            if other.id != candidate.id and other.kernel_tree == candidate.kernel_tree and r is not None and \
                    comparable(r, self.version, self.fingerprints) and r.status not in NOT_EVALUATED:
                return {**{k: v for k, v in r.line.items() if k not in ("t", "cached_from", "confirm", "engine")},
                        "cached_from": other.id}
        return None

    def holds_better(self, best: Candidate) -> bool:
        """Whether `best` points at another run's candidate that beats `best` under the same judge and device
        (a candidate judged otherwise - another problem, judge or device - does not compare: it yields)."""
        held_commit = self.snapshot.best_commit
        if held_commit is None or held_commit in self.snapshot.by_commit():
            return False
        if self._held is None or self._held[0] != held_commit:  # this engine holds the lock: its note is fixed
            self._held = (held_commit, candidate_at(self.store, held_commit))
        held = self._held[1]
        if held is None:
            return False
        if self.confirm_mode:
            theirs = held.confirmation.score if held.confirmation and self.confirmed(held) else None
            mine = best.confirmation.score if best.confirmation else None
        else:
            theirs, mine = (held.score if self.measured(held) else None), best.score
        return theirs is not None and mine is not None and theirs <= mine

    # -- writing them -------------------------------------------------------------------------------------
    def record(self, candidate: Candidate, result: dict[str, Any]) -> Candidate | None:
        """Append `result` to the candidate's note; returns the candidate with it (None: not written, so it
        is evaluated again on resume). A would-be best is queued for confirmation."""
        moved = self.store.restore_owned()
        if moved:
            self.say(f"warning: {', '.join(moved)} changed while {candidate.id} was being made or evaluated; evolve "
                     "put it back (only evolve writes these; an evaluation without a sandbox can reach the repository)")
        record = {"t": now(), **result}
        self.awaited_seeds.discard(candidate.id)  # written or not (then judged again on resume), not awaited here
        try:
            self.store.append_note(candidate.commit, record)
        except StoreError as exc:
            self.say(f"{candidate.id}: could not write its result ({exc}); it is re-evaluated on resume")
            return None
        updated = dataclasses.replace(candidate, results=candidate.results + (Result.of(record),))
        self.snapshot.candidates[candidate.id] = updated
        self._recorded += 1
        if record.get("confirm"):
            self.confirming.discard(updated.id)
        if record.get("confirm") or updated.op == "seed":  # the lead may be open again, or decidable now
            for other in self.contenders():
                self.maybe_confirm(other)
        else:
            self.maybe_confirm(updated)
        return updated

    def contenders(self) -> list[Candidate]:
        """What a resumed run offers for confirmation: the candidate `best` holds, if it is this run's, then the
        three best first measurements, which may not include it (it was chosen by its confirmed score, and a
        confirmation by another judge does not count, so it must be confirmed again too)."""
        held = self.snapshot.by_commit().get(self.snapshot.best_commit or "")
        leaders = sorted((c for c in self.snapshot.candidates.values() if c.score is not None),
                         key=lambda c: c.score or 0.0)[:3]
        return ([held] if held is not None and held not in leaders else []) + leaders

    def maybe_confirm(self, c: Candidate) -> None:
        """Queue a re-measurement of `c` in the thorough mode if it would become the new best: the first
        measurement of a winner is biased upwards, so `best` moves only on a confirmed score. Its first score must
        beat, by min_gain, the lowest first score of the candidates confirmed here (won or lost: `best` is one of
        them, and a kernel no faster than one that lost its confirmation would lose too: on the
        H200 a seed's slow first score, 2839 us against its 2724 confirmed, let three children in a row through to
        confirmations of about 14 s each, run53) and of those waiting for theirs. None is queued while a seed this session judges awaits its first
        result (`awaited_seeds`): with several seeds judged side by side, the first one's result and a better
        one's would otherwise both be confirmed. One held back is offered again when a seed's result or a
        confirmation is written (`record`)."""
        if not self.confirm_mode or self.confirmed_here(c) or c.id in self.confirming or not self.measured(c):
            return
        if self.awaited_seeds:
            return
        waiting = (self.snapshot.candidates.get(cid) for cid in self.confirming)
        bars = [self.confirmed_floor(), *(w.score for w in waiting if w is not None)]
        if c.score is not None and any(bar is not None and not beats(c.score, bar, self.min_gain) for bar in bars):
            return
        self.confirming.add(c.id)
        self.confirms.append(c)

    def update_best(self) -> Candidate | None:
        """Move `best` to this run's best candidate, unless it holds one at least as good that today's judge
        measured on one of our devices (another run of this problem); returns this run's best."""
        best = self.best()
        if best is None or best.commit == self.snapshot.best_commit or self.holds_better(best):
            return best
        if self.store.move_best(best.commit, self.snapshot.best_commit):
            self.snapshot.best_commit = best.commit
        elif not self._best_warned:
            self._best_warned = True
            self.say("note: `best` is checked out or was moved by someone else, so evolve leaves it alone; "
                     f"the best candidate is evolve/{self.snapshot.run}/{best.id}")
        return best
