"""`evolve rejudge`: a candidate judged again by today's evaluator; its result joins its note like any other
and `best` follows (a result judged by an older judge - an older harness, or one fooled since - is replaced,
not trusted)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from evolver.commands.common import UserError, Verb, candidate_args, open_repo, target
from evolver.records.candidates import Candidate, Result, Snapshot
from evolver.records.config import Config
from evolver.records.store import Store
from evolver.run.opening import OpenRun, open_run


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
        opened.evaluator.check_mode(mode, "--mode")
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
    config = opened.evaluator.config
    named = (config.evaluation.mode, config.evaluation.confirm_mode)
    if not config.evaluation.builtin and result.get("status") == "crash" and mode not in named:
        # A command evaluator's modes are its own: a crash in one evolve.toml never named may be the mode's (a
        # typo), not the candidate's, and recorded it would take the candidate out of the running.
        raise UserError(f"--mode {mode}: the evaluator crashed ({str(result.get('error', ''))[:300]}); "
                        f"{config.path} names no such mode ([evaluation] mode, confirm_mode), so nothing "
                        "was recorded")
    result["rejudged"] = True
    if mode == opened.recorder.confirm_mode:
        result["confirm"] = True
    opened.recorder.record(candidate, result)
    opened.recorder.update_best()
    return Result.of(result)


def add_verb(verb: Verb) -> None:
    p = verb("rejudge", "judge a candidate again with today's judge",
             "Evaluate a candidate (default `best`) again with the evaluator as it is now - after an update of "
             "evolve's QR harness, say, whose anti-cheat checks a result judged earlier never faced - in the mode "
             "that confirms `best` (or --mode). The new result joins the candidate's note; `best` moves if the "
             "candidate no longer wins. Not while `evolve start` runs in the repository.")
    candidate_args(p, optional=True)
    p.add_argument("--mode", metavar="MODE", help="the evaluation mode (default: [evaluation] confirm_mode, else mode)")
    p.add_argument("-q", "--quiet", action="store_true", help="only the summary")
    p.set_defaults(func=cmd_rejudge)


def cmd_rejudge(args: argparse.Namespace) -> int:
    config, store = open_repo(args)
    snapshot, chosen = target(args, config, store)
    say = (lambda line: None) if args.quiet else (lambda line: print(line, flush=True))
    done = rejudge(config, store, snapshot.run, lambda opened: opened.candidates[chosen.id], args.mode, say)
    c = done.candidate
    before = c.confirmation if done.result.confirm and c.confirmation else c.result
    print(f"{c.id}: judged again in {done.mode} mode: {_verdict(done.result)}")
    print(f"{'':{len(c.id)}}  before: {_verdict(before)}")
    if done.result.status != "ok" and done.result.error:
        print(f"{'':{len(c.id)}}  why: {done.result.error.splitlines()[0][:200]}")
    if done.best is None:
        print("best: no candidate of this run has a result from today's judge yet; `best` stays where it is until "
              "one does (`evolve start` judges new candidates with it)")
    else:
        moved = f" (it was {done.best_before})" if done.best_before not in (None, done.best.id) else ""
        print(f"best: {done.best.id}{moved}, score {done.best.score:.6g}")
    return 0


def _verdict(result: Result | None) -> str:
    if result is None:
        return "no result"
    text = result.status + (f" {result.score:.6g}" if result.score is not None else "")
    version = result.details.get("judge")
    judge = f", anti-cheat version {version}" if isinstance(version, int) else ""
    return f"{text} (judge {result.harness or '?'}{judge})"
