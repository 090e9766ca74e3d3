"""The evolution loop: propose children, evaluate them on the slots, record results, move `best`.

An asyncio loop with two kinds of tasks. Proposers pick a parent and an operator and commit the child;
evaluators run queued children on their slot and append the result. A semaphore bounds the proposals in
flight plus those queued to `pipeline_depth`, so children are bred from a fresh population while the
slots never wait. Everything is written to git as it happens (commit, then branch, then note, then
`best`), so a kill at any moment loses at most the work in flight: on restart, candidates without a result
are evaluated first. Ctrl-C once stops proposing and lets running evaluations finish; twice abandons them.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from evolver.evaluation.health import HEALTH_REF, RETIRE_AFTER, Health, first_line, judge_again
from evolver.evaluation.judgefiles import JudgeChanged
from evolver.evaluation.slots import Slot
from evolver.records.candidates import Candidate, now
from evolver.records.config import Config
from evolver.records.results import NOT_EVALUATED
from evolver.records.store import Store
from evolver.run.jobs import WAKE, Job
from evolver.run.opening import EngineError, OpenRun, open_run
from evolver.run.progress import RECENT, STATUS_EVERY, Budget, RunSummary, budget_line, result_line
from evolver.search.agents import agent_specs
from evolver.search.breed import Breeder, llm_operators
from evolver.search.children import Children
from evolver.search.llm import LLMError
from evolver.search.operators import Proposal
from evolver.search.population import next_island

INTERRUPTED = "interrupted"


class Engine:
    """The loop of one run: proposers breed children while evaluators judge them, until the budget is
    spent or the user stops it."""

    def __init__(self, config: Config, store: Store, opened: OpenRun, budget: Budget,
                 say: Callable[[str], None] = print, status: Callable[[str], None] | None = None) -> None:
        self.config, self.store, self.budget, self.say, self.status = config, store, budget, say, status
        self.run = opened.snapshot.run
        self.evaluator, self.slots, self.snapshot, self.recorder = (opened.evaluator, opened.slots, opened.snapshot,
                                                                    opened.recorder)
        self.rng = random.Random(config.evolution.seed)
        self.client, weights = llm_operators(config, self.rng, say, len(self.slots))
        self.breeder = Breeder(config, store, self.snapshot, opened.base, self.recorder, self.client, weights,
                               self.rng, agent_specs(config))
        self.summary = RunSummary(self.run)
        self.children = Children(config, store, self.snapshot, opened.base, self._created)
        depth = config.evolution.pipeline_depth or len(self.slots) * (2 if self.client else 1)
        self._queue: asyncio.Queue[Job | None] = asyncio.Queue()
        self.health = Health(len(self.slots))
        self._retries: deque[Job] = deque()  # candidates a failing device returned, for another slot
        self._room = asyncio.Semaphore(depth)  # proposals in flight plus queued children
        self._proposers: list[asyncio.Task[None]] = []
        self._evaluators: list[asyncio.Task[None]] = []
        self._depth = depth
        self._stop_reason = ""  # why the run is stopping ("" while it runs)
        self._made_all = ""  # the candidate budget is spent (nothing new starts; what is in flight goes on)
        self._abandon = False  # stop evaluating too (a second Ctrl-C, SIGTERM)
        self._changed = asyncio.Event()  # a result arrived or the run is stopping: a waiting proposer looks again
        self._started = time.monotonic()
        self._spent_at_start = self._spent()
        self._results_seen = 0  # this session's results (not confirmations): a budget line every STATUS_EVERY
        self._recent: deque[float] = deque(maxlen=RECENT + 1)  # when the last results came (the recent rate)
        self._in_progress = 0
        self._evaluating = 0
        store.own_refs()
        self.recorder.update_best()  # after a crash between a result and the move of `best`
        store.pack_refs()

    @property
    def _stopping(self) -> bool:
        return bool(self._stop_reason)

    # -- the loop ---------------------------------------------------------------------------------------
    async def run_async(self) -> RunSummary:
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, self._interrupt)
            loop.add_signal_handler(signal.SIGTERM, self._terminate)
        except (RuntimeError, ValueError):  # not the main thread (embedded use): no signal handling
            pass
        ticker = asyncio.create_task(self._tick())
        try:
            await self._fit_the_context()
            self._resume()
            await self.evaluator.prestart_slots(self.slots)  # every slot's first judge starts with the run
            self._evaluators = [asyncio.create_task(self._evaluator(slot)) for slot in self.slots]
            self._proposers = [asyncio.create_task(self._proposer()) for _ in range(self._depth)]
            for outcome in await asyncio.gather(*self._proposers, return_exceptions=True):
                if isinstance(outcome, Exception):
                    raise outcome
            for _ in self._evaluators:
                self._queue.put_nowait(None)
            for outcome in await asyncio.gather(*self._evaluators, return_exceptions=True):
                if isinstance(outcome, Exception):
                    raise outcome
        finally:
            ticker.cancel()
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)
            await self.evaluator.close()
            if self.client is not None:
                await self.client.close()
        self.summary.best = self.recorder.best()
        self.summary.llm_cost_usd = self._spent()
        self.summary.reason = self._stop_reason or self._made_all
        if self._results_seen % STATUS_EVERY:
            self.say(self._budget_line())
        return self.summary

    async def _fit_the_context(self) -> None:
        """Where evolve.toml leaves `context_tokens` unset and the endpoint says how much its models hold (a local
        server's 32k, say), prompts are fitted to that instead of the default."""
        if self.client is None or "context_tokens" in (self.config.raw.get("llm") or {}):
            return
        window = await self.client.context_window()
        if window is None or window >= self.config.llm.context_tokens or window <= self.config.llm.max_tokens:
            return
        self.config = replace(self.config, llm=replace(self.config.llm, context_tokens=window))
        self.breeder.config = self.config
        self.say(f"the endpoint says its model holds {window} tokens: prompts are fitted to {window} - "
                 f"{self.config.llm.max_tokens} (set [llm] context_tokens to choose)")

    def _resume(self) -> None:
        """Seeds the run lacks, then every candidate without a result first, and the confirmations a kill may
        have come between."""
        self.say("scores: lower is better")
        unfinished = [c for c in self.snapshot.candidates.values() if c.result is None]
        if unfinished:
            self.say(f"resuming: {len(unfinished)} candidate(s) without a result are evaluated first")
        self.children.seeds(self.client is not None, self.say)
        again = self.recorder.to_judge_again()  # when the judge has changed since the run's results
        if again:
            self.say(f"this run's results were judged by another judge (an older harness, another mode or "
                     f"device): judging {', '.join(c.id for c in again)} again first")
        for c in [*sorted((c for c in self.snapshot.candidates.values() if c.result is None), key=lambda c: c.id),
                  *again]:
            self._queue.put_nowait(Job(c, holds_room=False))
            if c.op == "seed":  # no confirmation before its result (`Recorder.maybe_confirm`)
                self.recorder.awaited_seeds.add(c.id)
        for c in self.recorder.contenders():
            self.recorder.maybe_confirm(c)

    def _interrupt(self) -> None:
        if self._stopping:
            self._terminate()
            return
        self._stop(INTERRUPTED)
        self.say(f"stopping: no new candidates; finishing {self._evaluating} evaluation(s) in flight "
                 "(Ctrl-C again to abandon them; `evolve start` resumes)")
        for task in self._proposers:
            task.cancel()  # proposers hold nothing that git needs: commits happen between awaits

    def _terminate(self) -> None:
        self._stop(INTERRUPTED)
        self._abandon = True
        for task in self._evaluators + self._proposers:
            task.cancel()

    def _stop(self, reason: str) -> None:
        if not self._stopping:
            self._stop_reason = reason
            self._changed.set()

    def _budget_left(self) -> bool:
        """Whether another proposal may start. The candidate budget counts what is made and what is being made,
        so N means N whatever the concurrency; a full count starts nothing new but stops nothing either (the
        proposals in flight are made, never thrown away: the run ends when they are)."""
        b = self.budget
        if b.max_candidates is not None and len(self.snapshot.candidates) + self._in_progress >= b.max_candidates:
            self._made_all = f"reached max_candidates ({b.max_candidates})"
            return False
        if b.max_usd is not None and self._spent() >= b.max_usd:
            self._stop(f"reached max_usd (${b.max_usd:g}; spent ${self._spent():.4f})")
        elif b.max_hours is not None and time.monotonic() - self._started >= b.max_hours * 3600:
            self._stop(f"reached max_hours ({b.max_hours:g} h)")
        return not self._stopping

    def _spent(self) -> float:
        return sum(c.cost_usd for c in self.snapshot.candidates.values())

    async def _proposer(self) -> None:
        while True:
            await self._room.acquire()
            if not self._budget_left():
                self._room.release()
                return
            self._in_progress += 1
            try:
                job = await self._propose_one()
            finally:
                self._in_progress -= 1
            if job is None:
                self._room.release()
            else:
                self._queue.put_nowait(job)

    async def _evaluator(self, slot: Slot) -> None:
        finished = False
        while True:
            retry = self._retry_for(slot, finished)
            if self.recorder.confirms:  # confirmations first: they decide `best`
                job = Job(self.recorder.confirms.popleft(), holds_room=False, confirm=True)
            elif retry is not None:
                job = retry
            elif finished:
                return
            else:
                queued = await self._queue.get()
                if queued is None:
                    finished = True  # but a confirmation this slot queues itself is still served
                    continue
                if queued is WAKE:
                    continue
                job = queued
            if job.holds_room:
                self._room.release()
            if self._abandon or self._stop_reason == INTERRUPTED:
                continue  # left without a result: the next `evolve start` evaluates it
            costs = job.started()
            self._evaluating += 1
            try:
                result = await self.evaluator.evaluate(job.candidate.commit, slot,
                                                       self.recorder.confirm_mode if job.confirm else None)
            except JudgeChanged as exc:
                return self._halt(str(exc))
            finally:
                self._evaluating -= 1
            if self.health.judge_elsewhere(slot.index, result, job.retried_from):
                self._retries.append(replace(job, holds_room=False, retried_from=slot.index))
                self._queue.put_nowait(WAKE)  # an idle slot takes it
                if self.health.retire(slot.index, result):
                    self._retire(slot)
                    return
                continue
            if self.health.device_gone(slot.index, result):  # the last device in service: never the kernel's
                if self.health.exhausted(slot.index):
                    return self._halt(f"no device left to judge on: GPU {slot.gpu} failed {RETIRE_AFTER} times "
                                      f"in a row ({first_line(result)})")
                self._retries.append(replace(job, holds_room=False))
                continue
            why = judge_again(result)
            if why and not job.judged_again:  # once: a second such crash is recorded as it is
                self.say(f"{job.candidate.id}: {why}; judging it again")
                self._retries.append(replace(job, holds_room=False, judged_again=True))
                continue
            if job.confirm:
                result["confirm"] = True
            if costs:  # where the engine's own time went (bench/run_stages.py)
                result["engine"] = costs
            self._record(self.snapshot.candidates.get(job.candidate.id, job.candidate), result)

    def _retry_for(self, slot: Slot, finished: bool) -> Job | None:
        """A candidate another slot's device failed (never given back to that slot while another serves)."""
        for job in self._retries:
            if job.retried_from != slot.index or finished or self.health.in_service < 2:
                self._retries.remove(job)
                return job
        return None

    def _halt(self, why: str) -> None:
        """Stop at once, a failure: what is in flight keeps no result and is judged when the run resumes."""
        self._stop(f"{why}; the candidates in flight keep no result and are judged when `evolve start` resumes")
        self._abandon = self.summary.failed = True
        for task in self._proposers:
            task.cancel()

    def _retire(self, slot: Slot) -> None:
        error = self.health.retired[slot.index]
        self.say(f"GPU {slot.gpu} ({slot.fingerprint}) is out of rotation after {RETIRE_AFTER} device errors in a "
                 f"row ({error}); its candidates go to the other {self.health.in_service} slot(s)")
        retired = (self.store.get_meta(HEALTH_REF.format(run=self.run)) or {}).get("retired", [])
        self.store.set_meta(HEALTH_REF.format(run=self.run), {"retired": [*retired, {
            "gpu": slot.gpu, "device": slot.fingerprint, "error": error, "t": now()}]})

    # -- proposing --------------------------------------------------------------------------------------
    async def _parent_pool(self) -> list[Candidate]:
        """Correct, comparable candidates; waits while evaluations that could supply one are running. No child is
        made of a seed before its first result: one judged beside the seed delayed the seed's result, and the
        confirmation that follows it, by 9 s on the H200 and lowered three runs' rates (docs/benchmarks.md,
        "Throughput")."""
        while True:
            pool = self.recorder.pool()
            if pool or self._stopping:
                return pool
            if self._queue.qsize() == 0 and self._evaluating == 0:  # nothing can supply a parent any more
                failed = ", ".join(f"{c.id} ({c.status})"
                                   for c in self.snapshot.candidates.values() if c.op == "seed")
                self._stop(f"no correct candidate to breed from (seeds: {failed or 'none'}); see "
                           "`evolve show <id>` for why")
                return []
            self._changed.clear()
            await self._changed.wait()

    async def _propose_one(self) -> Job | None:
        """One child: a parent pool, an island, an operator (`Breeder`), its commit; None if none was made
        or it needs no evaluation."""
        pool = await self._parent_pool()
        if not pool or self._stopping:
            return None
        counts: dict[int, int] = {}
        for c in self.snapshot.candidates.values():
            if c.op != "seed":
                counts[c.island] = counts.get(c.island, 0) + 1
        choice = self.breeder.choose()
        began = time.monotonic()
        proposal = await self.breeder.propose(choice, next_island(counts, self.config.evolution.islands), pool)
        proposed = time.monotonic() - began
        if proposal is None:
            why = self.breeder.stuck()
            if why:
                self._stop(why)
            return None
        if self._stopping and proposal.files is None:
            return None  # an attempt cut short by the stop is not a result
        if self.config.evolution.bandit:
            proposal.trailers["Bandit"] = f"{choice.arm} {choice.value:.4g}/$"
        return self._admit(proposal, proposed)

    def _admit(self, proposal: Proposal, proposed_s: float = 0.0) -> Job | None:
        """Commit the child; a failed attempt and a kernel judged before are recorded at once, anything
        else is queued for evaluation."""
        began = time.monotonic()
        candidate = self.children.commit(proposal)
        costs = {"propose_s": round(proposed_s, 3), "commit_s": round(time.monotonic() - began, 3)}
        if proposal.status:  # failed before any code existed: recorded, never evaluated
            self._record(candidate, {"status": proposal.status, "score": None, "error": proposal.error[:2000],
                                     "harness": self.evaluator.version, "gpu": None})
            return None
        cached = self.recorder.cached(candidate)
        if cached is not None:
            self._record(candidate, cached)
            return None
        return Job(candidate, holds_room=True, costs=costs, queued_at=time.monotonic())

    def _created(self, candidate: Candidate) -> None:
        self.summary.created += 1

    # -- results ----------------------------------------------------------------------------------------
    def _record(self, candidate: Candidate, result: dict[str, Any]) -> None:
        updated = self.recorder.record(candidate, result)
        if updated is None:
            return
        status = str(result.get("status"))
        if not result.get("confirm"):
            self.summary.statuses[status] = self.summary.statuses.get(status, 0) + 1
            if status not in NOT_EVALUATED:
                self.summary.evaluated += 1
        self._progress(updated, self.recorder.update_best())
        self._changed.set()

    def _progress(self, c: Candidate, best: Candidate | None) -> None:
        done = sum(1 for x in self.snapshot.candidates.values() if x.result is not None)
        self.say(result_line(c, best, done, self.budget.max_candidates, self.recorder.confirm_mode))
        if not c.results[-1].confirm:
            self._results_seen += 1
            self._recent.append(time.monotonic())
            if self._results_seen % STATUS_EVERY == 0:
                self.say(self._budget_line())

    async def _tick(self) -> None:
        """The live status line, once a second (where the CLI shows one: a terminal)."""
        while self.status is not None:
            self.status(f"{self._budget_line()}; now {self._evaluating} evaluating, {self._in_progress} proposing")
            await asyncio.sleep(1.0)

    def _budget_line(self) -> str:
        done = sum(1 for c in self.snapshot.candidates.values() if c.result is not None)
        recent = (len(self._recent) - 1, self._recent[-1] - self._recent[0]) if len(self._recent) > RECENT else None
        return budget_line(self.budget, time.monotonic() - self._started, self._results_seen, done, self._spent(),
                           self._spent_at_start, recent)


def run_engine(config: Config, store: Store, run: str, budget: Budget, say: Callable[[str], None] = print,
               status: Callable[[str], None] | None = None) -> RunSummary:
    try:
        engine = Engine(config, store, open_run(config, store, run, create=True, say=say), budget, say, status)
        return asyncio.run(engine.run_async())
    except LLMError as exc:
        raise EngineError(str(exc)) from None
    finally:
        store.unlock()
