"""What happens to every reply: the funnel of each operator (and model) from the LLM's replies to new bests.

Per arm (`bandit.arm_of`: `mutate@model`, `tune`, ...): the replies it cost (the `Attempts` trailer: edit
retries and a second turn that showed lines included), the children whose edit applied, that compiled, that
were correct, that beat their parent (same judge), and that took the lead when their deciding result came (by
`best`'s own rule: the confirmed score where the run confirms, a gain of more than min_gain); those not yet judged
are counted as pending, not as failures;
and why the others did not, as counts of short reasons (the SEARCH that matched nothing, the compiler's
error, the failing gate). Read from a `Snapshot`, pure: `evolve status` prints it, the TUI shows it (`f`).
Each failed reply's full story (its text and the diagnostic it got) is in `evolve show ID --reply`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from evolver.records.candidates import Candidate
from evolver.records.results import NOT_EVALUATED, lead_changes
from evolver.search.bandit import arm_of

STAGES = ("replies", "applied", "compiled", "correct", "faster", "best", "pending")


@dataclass
class Funnel:
    made: int = 0  # children of this arm
    stages: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STAGES, 0))
    why: dict[str, int] = field(default_factory=dict)  # short reason -> how many children stopped there

    def as_dict(self) -> dict[str, object]:
        return {"made": self.made, **self.stages, "why": dict(sorted(self.why.items(), key=lambda kv: -kv[1]))}


def reason(c: Candidate) -> str:
    """Why a child stopped where it did, in a few words (its status and the kind of error)."""
    error = c.result.error if c.result else ""
    first = error.strip().splitlines()[0] if error.strip() else ""
    if c.status == "patch_failed":
        for pattern, label in ((r"SEARCH does not match", "a SEARCH matched nothing"),
                               (r"SEARCH matches \d+ places", "a SEARCH matched several places"),
                               (r"contains no edit", "no edit in the reply"), (r"change nothing", "the edit changed nothing"),
                               (r"no such file", "an edit of a file that does not exist"),
                               (r"cut off", "the reply was cut off")):
            if re.search(pattern, error):
                return label
        return "the edit could not be applied: " + re.sub(r"\s+", " ", first)[:60]
    if c.status == "incorrect":
        gate = re.search(r"(factor|orthogonality|non-finite|shape|dtype|modified its input)", error)
        return f"incorrect ({gate.group(1)})" if gate else "incorrect"
    if c.status == "compile_error":
        return "compile error: " + re.sub(r"\s+", " ", first)[:60]
    return f"{c.status}: {re.sub(r'[(].*', '', first).strip()[:60]}" if first else c.status


def leads(candidates: list[Candidate], min_gain: float = 0.0) -> set[str]:
    """The ids that took the lead when their deciding result was written (`results.lead_changes`): in a run that
    confirms, only confirmed scores decide; a first measurement that is later not confirmed never led."""
    confirming = any(c.confirmation is not None for c in candidates)
    decided = [(c, c.confirmation if confirming else c.result) for c in candidates]
    return {c.id for c in lead_changes([(c, r) for c, r in decided if r is not None], min_gain)}


def funnel(candidates: Iterable[Candidate], by_commit: dict[str, Candidate], min_gain: float = 0.0) -> dict[str, Funnel]:
    """The funnel of each arm over these candidates (seeds are the start, not an arm)."""
    everyone = sorted(candidates, key=lambda c: c.id)
    took_lead = leads(everyone, min_gain)
    out: dict[str, Funnel] = {}
    for c in everyone:
        if c.op == "seed":
            continue
        row = out.setdefault(arm_of(c), Funnel())
        row.made += 1
        stages = row.stages
        stages["replies"] += int(c.trailers.get("Attempts", "0") or 0) if c.trailers.get("Attempts", "").isdigit() else 0
        status = c.status
        if status == "pending":  # proposed, not judged yet: neither through nor out
            stages["pending"] += 1
            continue
        applied = status not in NOT_EVALUATED
        stages["applied"] += applied
        stages["compiled"] += applied and status != "compile_error"
        stages["correct"] += status == "ok"
        parent = by_commit.get(c.parents[0]) if c.parents else None
        faster = c.score is not None and parent is not None and parent.score is not None and \
            c.result is not None and parent.result is not None and c.result.harness == parent.result.harness and \
            c.score < parent.score
        stages["faster"] += faster
        stages["best"] += c.id in took_lead
        if status != "ok":
            row.why[reason(c)] = row.why.get(reason(c), 0) + 1
    return dict(sorted(out.items()))


def lines(funnels: dict[str, Funnel]) -> list[str]:
    """The funnel as `evolve status` prints it: one line per arm, then its reasons."""
    out = []
    for arm, f in funnels.items():
        s = f.stages
        replies = f"{s['replies']} replies -> " if s["replies"] else ""
        out.append(f"{arm}: {f.made} made: {replies}{s['applied']} applied -> {s['compiled']} compiled -> "
                   f"{s['correct']} correct -> {s['faster']} faster than their parent -> {s['best']} new best"
                   + (f" ({s['pending']} not judged yet)" if s["pending"] else ""))
        if f.why:
            out.append("    why not: " + "; ".join(f"{n} {why}" for why, n in
                                                  sorted(f.why.items(), key=lambda kv: -kv[1])[:5]))
    return out
