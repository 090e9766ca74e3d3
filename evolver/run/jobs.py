"""What waits for an evaluation slot: a job (a candidate to judge, or to confirm), with the engine's own costs of
making it, which its result carries (`engine`: bench/run_stages.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from evolver.records.candidates import Candidate


@dataclass
class Job:
    candidate: Candidate
    holds_room: bool  # took a pipeline place (fresh proposals do; resumed candidates do not)
    confirm: bool = False  # a re-measurement of a would-be best in the thorough mode
    retried_from: int | None = None  # the slot whose device failed it (evolver/evaluation/health.py)
    judged_again: bool = False  # its evaluator asked for one more judging once already (health.judge_again)
    costs: dict[str, float] = field(default_factory=dict)  # the engine's stages so far: propose_s, commit_s
    queued_at: float = 0.0  # when it joined the queue (time.monotonic)

    def started(self) -> dict[str, Any]:
        """The engine's costs of this job as its evaluation starts (the wait for a slot included); {} for a job
        that was not proposed in this engine (a confirmation, a resumed candidate)."""
        if not self.costs:
            return {}
        return {**self.costs, "queued_s": round(time.monotonic() - self.queued_at, 3)}


# Queued after a candidate went back for another slot (evolver/evaluation/health.py): a slot waiting on the queue wakes
# and looks at the retries first.
WAKE = Job(Candidate(run="", id="", commit="", parents=(), created=0, subject="", trailers={}), holds_room=False)
