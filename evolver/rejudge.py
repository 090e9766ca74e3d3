"""`evolve rejudge`: a candidate judged again by today's evaluator; its result joins its note like any other
and `best` follows (a result judged by an older judge - an older harness, or one fooled since - is replaced,
not trusted)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from evolver.candidates import Candidate, Result, Snapshot
from evolver.config import Config
from evolver.opening import OpenRun, open_run
from evolver.store import Store


@dataclass
class Rejudged:
    candidate: Candidate  # as it was before
    result: Result  # today's judge's result, now the last line of its note
    mode: str
    best: Candidate | None  # the best candidate afterwards (None: none has a result from today's judge)
    best_before: str | None  # the id `best` pointed at before


def rejudge(config: Config, store: Store, run: str, pick: Callable[[Snapshot], Candidate], mode: str | None,
            say: Callable[[str], None] = print) -> Rejudged:
    """Judge one candidate of `run` again with today's evaluator (by default in the mode that confirms
    `best`). Its result joins its note like any other, so `best` moves if the candidate no longer wins: a
    result judged by an older judge (an older harness, or one fooled since) is replaced, not trusted."""
    try:
        opened = open_run(config, store, run, create=False, say=say)
        candidate = pick(opened.snapshot)
        before = opened.snapshot.by_commit().get(opened.snapshot.best_commit or "")
        mode = mode or config.evaluation.confirm_mode or config.evaluation.mode
        store.own_refs()
        result = asyncio.run(_judge_again(opened, candidate, mode))
        return Rejudged(candidate, result, mode, opened.recorder.best(), before.id if before else None)
    finally:
        store.unlock()


async def _judge_again(opened: OpenRun, candidate: Candidate, mode: str) -> Result:
    try:
        result = await opened.evaluator.evaluate(candidate.commit, opened.slots[0], mode)
    finally:
        await opened.evaluator.close()
    result["rejudged"] = True
    if mode == opened.recorder.confirm_mode:
        result["confirm"] = True
    opened.recorder.record(candidate, result)
    opened.recorder.update_best()
    return Result.of(result)
