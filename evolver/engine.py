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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evolver import operators, tunables
from evolver.config import LLM_OPERATORS, Config, ModelSpec
from evolver.evaluate import Evaluator, Slot, make_slots
from evolver.llm import LLMClient, LLMError, api_key
from evolver.operators import Proposal
from evolver.prompts import Inspiration, build_messages
from evolver import bandit
from evolver.bandit import Choice
from evolver.population import code_signature, island_members, lineage, next_island, select_parent
from evolver.sandbox import protect_memory, sandbox_line
from evolver.results import NOT_EVALUATED, Recorder
from evolver.store import Candidate, Snapshot, Store, format_message, is_text, now

RUN_REF = "refs/evolve/runs/{run}"
PACK_EVERY = 256  # candidates between `git pack-refs` (keeps ref listings cheap for the TUI and status)


class EngineError(Exception):
    """The run cannot go on; str() is the one-line reason."""


@dataclass(frozen=True)
class Budget:
    max_candidates: int | None = None
    max_usd: float | None = None
    max_hours: float | None = None


@dataclass
class _Job:
    candidate: Candidate
    holds_room: bool  # took a pipeline place (fresh proposals do; resumed candidates do not)
    confirm: bool = False  # a re-measurement of a would-be best in the thorough mode


@dataclass
class RunSummary:
    run: str
    created: int = 0
    evaluated: int = 0
    best: Candidate | None = None
    reason: str = ""
    llm_cost_usd: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)


@dataclass
class PromptContext:
    files: dict[str, str]
    chain: list[Candidate]
    guidance: str | None
    inspirations: list[Inspiration]


def read_guidance(store: Store, config: Config, base: str) -> str | None:
    """The problem's guidance file as committed in the run's base commit."""
    if not config.problem.guidance:
        return None
    blob = store.tree_entry(base, config.problem.guidance)
    return store.cat_blobs([blob]).get(blob, b"").decode("utf-8", "replace") if blob else None


def prompt_context(store: Store, config: Config, snapshot: Snapshot, base: str, parent: Candidate,
                   pool: list[Candidate]) -> PromptContext:
    """What a mutation of `parent` shows the model: its files, its lineage, the problem's guidance (from
    the run's base commit) and the change behind the best candidate of up to two other islands."""
    kernel_dir = config.problem.kernel_dir
    files = operators.decode(store.read_files(parent.commit, kernel_dir))
    chain = lineage(parent, snapshot.by_commit())
    guidance = read_guidance(store, config, base)
    best_by_island: dict[int, Candidate] = {}
    for c in sorted(pool, key=lambda c: (c.score, c.id)):
        if c.island != parent.island and c.op != "seed" and c.parents:
            best_by_island.setdefault(c.island, c)
    inspirations = [Inspiration(c, store.diff(c.parents[0], c.commit, kernel_dir))
                    for c in list(best_by_island.values())[:2]]
    return PromptContext(files, chain, guidance, inspirations)


def mutation_messages(config: Config, parent: Candidate, context: PromptContext) -> list[dict[str, str]]:
    """The messages a mutation of `parent` sends (PromptTooLarge if they cannot fit): `evolve prompt` prints
    exactly these."""
    return build_messages(kernel_dir=config.problem.kernel_dir, files=context.files, parent=parent,
                          chain=context.chain, guidance=context.guidance,
                          budget_tokens=config.llm.context_tokens - config.llm.max_tokens,
                          inspirations=context.inspirations)


def choose_run(store: Store, config: Config, requested: str | None, new: bool) -> str:
    """The run to work on: the one asked for, the configured one, the latest, or a new one."""
    existing = store.runs()
    if requested:
        return requested
    if config.run:
        return config.run
    if existing and not new:
        return existing[-1]
    n = len(existing) + 1
    while f"r{n}" in existing:
        n += 1
    return f"r{n}"


class Engine:
    def __init__(self, config: Config, store: Store, run: str, budget: Budget,
                 say: Callable[[str], None] = print) -> None:
        self.config = config
        self.store = store
        self.run = run
        self.budget = budget
        self.say = say
        self.rng = random.Random(config.evolution.seed)
        self.summary = RunSummary(run)
        self._stopping = False
        self._abandon = False
        self._changed = asyncio.Event()
        self._started = time.monotonic()
        self._in_progress = 0
        self._evaluating = 0
        self._tune_exhausted = False
        self._fixing: set[str] = set()
        self._signatures: dict[str, str] = {}  # kernel tree -> code signature (novelty in parent selection)

    # -- setup ------------------------------------------------------------------------------------------
    def prepare(self) -> None:
        """Lock the repository, find or create the run, and read its state from git."""
        self.open_run(create=True)
        self._choose_operators()
        self.store.own_refs()
        self._reconcile_best()
        self.store.pack_refs()

    def open_run(self, create: bool) -> None:
        """Lock the repository, make the evaluator ready and read the run from git (creating it if asked)."""
        protect_memory()
        self.store.lock()
        meta = self.store.get_meta(RUN_REF.format(run=self.run))
        if meta is None and not create:
            raise EngineError(f"no run {self.run!r} in this repository")
        base = meta["base"] if meta else self.store.head_commit()
        if meta is None:
            for seed in self.config.problem.seeds:
                if self.store.tree_entry(base, seed) is None:
                    raise EngineError(f"seed directory {seed!r} is not in the commit HEAD ({base[:10]}); commit "
                                      "it first (evolve reads seeds from git, not from the work tree)")
        self.base: str = base
        # everything that can refuse to run is checked before the run is written to git
        self.evaluator = Evaluator(self.config, self.store, self.base)
        self.slots: list[Slot] = make_slots(self.config)
        self.evaluator.check_ready(self.slots)
        self.say(sandbox_line(self.evaluator.sandboxed, self.config.evaluation.network))
        self.fingerprints = {s.fingerprint for s in self.slots}
        self.confirm_mode = self.config.evaluation.confirm_mode
        self.confirm_version = self.evaluator.version_for(self.confirm_mode) if self.confirm_mode else ""
        if meta is None:
            meta = {"run": self.run, "base": base, "created": now(), "kernel_dir": self.config.problem.kernel_dir}
            self.store.set_meta(RUN_REF.format(run=self.run), meta)
            self.say(f"new run {self.run!r} from {base[:10]}")
        self.snapshot: Snapshot = self.store.snapshot(self.run)
        self.recorder = Recorder(self.store, self.snapshot, self.evaluator.version, self.confirm_mode,
                                 self.confirm_version, self.fingerprints, self.say)
        self._next_id = 1 + max((int(c) for c in self.snapshot.candidates if c.isdigit()), default=0)

    def _choose_operators(self) -> None:
        self.client: LLMClient | None = None
        llm = self.config.llm
        wants_llm = any(w > 0 for op, w in self.config.evolution.operators.items() if op in LLM_OPERATORS)
        if wants_llm and llm.configured and api_key(llm) is not None:
            self.client = LLMClient(llm, self.rng)
        elif wants_llm:
            why = "no [llm] base_url/model configured" if not llm.configured else \
                f"${llm.api_key_env} is not set"
        self.operators = {op: w for op, w in self.config.evolution.operators.items()
                          if w > 0 and (op not in LLM_OPERATORS or self.client is not None)}
        if wants_llm and self.client is None:
            alone = " and ".join(f"`{op}`" for op in self.operators) or "nothing"
            self.say(f"LLM operators off ({why}): running with {alone} alone")
        if not self.operators:
            raise EngineError("no operator can run: the only weighted operators need an LLM; give `tune` or "
                              "`cross` a weight in [evolution] operators or configure [llm]")

    @property
    def depth(self) -> int:
        if self.config.evolution.pipeline_depth > 0:
            return self.config.evolution.pipeline_depth
        return len(self.slots) * (2 if self.client else 1)

    # -- the loop ---------------------------------------------------------------------------------------
    async def run_async(self) -> RunSummary:
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, self._interrupt)
            loop.add_signal_handler(signal.SIGTERM, self._terminate)
        except (RuntimeError, ValueError):  # not the main thread (embedded use): no signal handling
            pass
        self._queue: asyncio.Queue[_Job | None] = asyncio.Queue()
        self._room = asyncio.Semaphore(self.depth)
        try:
            unfinished = [c for c in self.snapshot.candidates.values() if c.result is None]
            if unfinished:
                self.say(f"resuming: {len(unfinished)} candidate(s) without a result are evaluated first")
            self._create_seeds()
            pending = sorted((c for c in self.snapshot.candidates.values() if c.result is None), key=lambda c: c.id)
            for c in pending:
                self._queue.put_nowait(_Job(c, holds_room=False))
            for c in sorted((c for c in self.snapshot.candidates.values() if c.score is not None),
                            key=lambda c: c.score or 0.0)[:3]:
                self.recorder.maybe_confirm(c)  # a kill may have come between a result and its confirmation
            evaluators = [asyncio.create_task(self._evaluator(slot)) for slot in self.slots]
            proposers = [asyncio.create_task(self._proposer()) for _ in range(self.depth)]
            self._tasks = evaluators + proposers
            for outcome in await asyncio.gather(*proposers, return_exceptions=True):
                if isinstance(outcome, Exception):
                    raise outcome
            for _ in evaluators:
                self._queue.put_nowait(None)
            for outcome in await asyncio.gather(*evaluators, return_exceptions=True):
                if isinstance(outcome, Exception):
                    raise outcome
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            loop.remove_signal_handler(signal.SIGTERM)
            await self.evaluator.close()
            if self.client is not None:
                await self.client.close()
        self.summary.best = self.recorder.best()
        self.summary.llm_cost_usd = self._spent()
        return self.summary

    def _interrupt(self) -> None:
        if self._stopping:
            self._terminate()
            return
        self._stopping = True
        self.summary.reason = "interrupted"
        self.say(f"stopping: no new candidates; finishing {self._evaluating} evaluation(s) in flight "
                 "(Ctrl-C again to abandon them; `evolve start` resumes)")
        for task in getattr(self, "_tasks", [])[len(self.slots):]:
            task.cancel()  # proposers hold nothing that git needs: commits happen between awaits
        self._changed.set()

    def _terminate(self) -> None:
        self._stopping = self._abandon = True
        self.summary.reason = "interrupted"
        for task in getattr(self, "_tasks", []):
            task.cancel()

    def _stop(self, reason: str) -> None:
        if not self._stopping:
            self._stopping = True
            self.summary.reason = reason
            self._changed.set()

    def _budget_left(self) -> bool:
        b = self.budget
        if b.max_candidates is not None and len(self.snapshot.candidates) + self._in_progress >= b.max_candidates:
            self._stop(f"reached max_candidates ({b.max_candidates})")
        elif b.max_usd is not None and self._spent() >= b.max_usd:
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
            if self.recorder.confirms:  # confirmations first: they decide `best`
                job = _Job(self.recorder.confirms.popleft(), holds_room=False, confirm=True)
            elif finished:
                return
            else:
                queued = await self._queue.get()
                if queued is None:
                    finished = True  # but a confirmation this slot queues itself is still served
                    continue
                job = queued
            if job.holds_room:
                self._room.release()
            if self._stopping and (self._abandon or self.summary.reason == "interrupted"):
                continue  # left without a result: the next `evolve start` evaluates it
            self._evaluating += 1
            try:
                result = await self.evaluator.evaluate(job.candidate.commit, slot,
                                                       self.confirm_mode if job.confirm else None)
            finally:
                self._evaluating -= 1
            if job.confirm:
                result["confirm"] = True
            self._record(self.snapshot.candidates.get(job.candidate.id, job.candidate), result)

    # -- proposing --------------------------------------------------------------------------------------
    async def _parent_pool(self) -> list[Candidate]:
        """Correct, comparable candidates; waits while evaluations that could supply one are running."""
        while True:
            pool = self.recorder.pool()
            if pool or self._stopping:
                return pool
            if self._queue.qsize() == 0 and self._evaluating == 0:  # nothing can supply a parent any more
                failed = ", ".join(f"{c.id} ({(c.result or {}).get('status')})"
                                   for c in self.snapshot.candidates.values() if c.op == "seed")
                self._stop(f"no correct candidate to breed from (seeds: {failed or 'none'}); see "
                           "`evolve show <id>` for why")
                return []
            self._changed.clear()
            await self._changed.wait()

    async def _propose_one(self) -> _Job | None:
        pool = await self._parent_pool()
        if not pool or self._stopping:
            return None
        counts: dict[int, int] = {}
        for c in self.snapshot.candidates.values():
            if c.op != "seed":
                counts[c.island] = counts.get(c.island, 0) + 1
        islands = self.config.evolution.islands
        island = next_island(counts, islands)
        ev = self.config.evolution
        choice = self._choose()
        op, model = choice.op, self._model(choice.model)
        if self._tune_exhausted and self.client is not None:
            op = "mutate"
        chosen = {"Bandit": f"{choice.arm} {choice.value:.4g}/$"} if ev.bandit else {}
        if op == "fix":
            target = self._fix_target()
            if target is not None:
                return await self._fix(target, model, chosen)
            op = "mutate"  # nothing failed that is worth repairing yet
        if op == "cross":
            for _ in range(6):
                made, job = await self._cross(pool, island, chosen)
                if made:
                    return job
            op = "mutate" if self.client is not None and "mutate" in self.operators else "tune"
        for _ in range(12):
            parent, migrant = self._select(pool, island)
            if parent is None:
                return None
            files = operators.decode(self.store.read_files(parent.commit, self.config.problem.kernel_dir))
            if op == "tune":
                seen = {c.kernel_tree for c in self.snapshot.candidates.values()}
                proposal = operators.tune(parent, files, seen, self.rng)
                if proposal is None:
                    island = self.rng.randrange(islands)
                    continue
            else:
                assert self.client is not None
                context = prompt_context(self.store, self.config, self.snapshot, self.base, parent, pool)
                proposal = await operators.mutate(
                    self.client, self.config.llm, parent, context.files,
                    lambda: mutation_messages(self.config, parent, context),  # noqa: B023  called at once
                    self.config.problem.kernel_dir, model=model)
            if self._stopping and proposal.files is None:
                return None
            proposal.trailers.update(chosen)
            if migrant:
                proposal.trailers["Migrant-From"] = str(parent.island)
            return self._commit(proposal, island)
        self._tune_exhausted = True
        if self.client is None:
            self._stop("tune has tried every reachable value of the @tune parameters; configure an LLM "
                       "or widen the choices")
        return None

    def _choose(self) -> Choice:
        """The operator (and model) for the next child: learnt by the bandit, or drawn by the weights."""
        ev = self.config.evolution
        models = [m.name for m in self.config.llm.models] if self.client is not None else []
        if ev.bandit:
            return bandit.choose(self.operators, models, self.snapshot.candidates.values(), ev.eval_usd, self.rng)
        ops = list(self.operators)
        return Choice(self.rng.choices(ops, weights=[self.operators[o] for o in ops])[0], None, 0.0)

    def _model(self, name: str | None) -> ModelSpec | None:
        return next((m for m in self.config.llm.models if m.name == name), None) if name else None

    def _select(self, pool: list[Candidate], island: int) -> tuple[Candidate | None, bool]:
        """A parent for a child on `island` from its members and migrants, novelty-weighted; and whether
        it is a migrant."""
        ev = self.config.evolution
        everyone = self.snapshot.candidates.values()
        members, migrants = island_members(pool, everyone, island, ev.islands, ev.migrate_every)
        children: dict[str, int] = {}
        for c in everyone:
            for pid in c.parent_ids:
                children[pid] = children.get(pid, 0) + 1
        parent = select_parent(members, ev.population, ev.explore, self.rng, children, self._signature)
        return parent, parent is not None and parent.id in migrants

    def _signature(self, c: Candidate) -> str:
        """The candidate's code up to whitespace and comments, read once per kernel tree."""
        key = c.kernel_tree or c.commit
        if key not in self._signatures:
            self._signatures[key] = code_signature(self.store.read_files(c.commit, self.config.problem.kernel_dir))
        return self._signatures[key]

    async def _cross(self, pool: list[Candidate], island: int,
                     chosen: dict[str, str] | None = None) -> tuple[bool, _Job | None]:
        """A child of two parents from different islands: git's three-way merge when it is clean (no LLM),
        else, with an LLM, its resolution of the conflict. Returns (a candidate was made, the job to
        evaluate it or None when its result came from the cache or the attempt failed)."""
        ev = self.config.evolution
        a, _ = self._select(pool, island)
        others = sorted((c for c in pool if a is not None and c.island != a.island), key=lambda c: (c.score, c.id))
        if a is None or not others:
            return False, None
        b = self.rng.choice(others[:ev.population])
        pairs = {frozenset(c.parent_ids) for c in self.snapshot.candidates.values() if c.op == "cross"}
        if frozenset((a.id, b.id)) in pairs:
            return False, None
        clean, tree = self.store.merge_trees(a.commit, b.commit)
        kernel_dir = self.config.problem.kernel_dir
        merged = self.store.tree_entry(tree, kernel_dir)
        if not clean:
            return await self._resolve(a, b, chosen or {})
        if merged in (a.kernel_tree, b.kernel_tree):
            return False, None  # nothing new
        files = self.store.read_files(tree, kernel_dir)
        trailers = {"Run": self.run, "Op": "cross", "Parent": f"{a.id},{b.id}", "Island": str(a.island),
                    "Merge": "clean", **(chosen or {})}
        candidate = self._write(f"cross {a.id} x {b.id}", f"Three-way merge of {a.id} (island {a.island}) and "
                                f"{b.id} (island {b.island}).", [a.commit, b.commit], a.commit, files, trailers)
        cached = self.recorder.cached(candidate)
        if cached is not None:
            self._record(candidate, cached)
            return True, None
        return True, _Job(candidate, holds_room=True)

    async def _resolve(self, a: Candidate, b: Candidate, chosen: dict[str, str]) -> tuple[bool, _Job | None]:
        """The LLM's crossover of `a` and `b`, whose changes conflict; skipped without an LLM."""
        if self.client is None:
            return False, None
        kernel_dir = self.config.problem.kernel_dir
        base = self.store.merge_base(a.commit, b.commit)
        if base is None:
            return False, None
        proposal = await operators.resolve(
            self.client, self.config.llm, a, b, operators.decode(self.store.read_files(a.commit, kernel_dir)),
            self.store.diff(base, a.commit, kernel_dir), self.store.diff(base, b.commit, kernel_dir), kernel_dir,
            read_guidance(self.store, self.config, self.base))
        if self._stopping and proposal.files is None:
            return False, None
        proposal.trailers.update(chosen)
        return True, self._commit(proposal, a.island)

    def _fix_target(self) -> Candidate | None:
        """The most recent candidate that failed on the current evaluator and has no fix yet."""
        taken = {c.parent_ids[0] for c in self.snapshot.candidates.values() if c.op == "fix" and c.parent_ids}
        taken |= self._fixing
        failed = [c for c in self.snapshot.candidates.values() if self.recorder.failed_here(c) and c.id not in taken]
        return max(failed, key=lambda c: c.id, default=None)

    async def _fix(self, target: Candidate, model: ModelSpec | None = None,
                   chosen: dict[str, str] | None = None) -> _Job | None:
        assert self.client is not None
        self._fixing.add(target.id)
        try:
            kernel_dir = self.config.problem.kernel_dir
            files = operators.decode(self.store.read_files(target.commit, kernel_dir))
            diff = self.store.diff(target.parents[0], target.commit, kernel_dir) if target.parents else ""
            guidance = read_guidance(self.store, self.config, self.base)
            proposal = await operators.fix(self.client, self.config.llm, target, files, diff, kernel_dir, guidance,
                                           model=model)
        finally:
            self._fixing.discard(target.id)
        if self._stopping and proposal.files is None:
            return None
        proposal.trailers.update(chosen or {})
        return self._commit(proposal, target.island)

    # -- writing ----------------------------------------------------------------------------------------
    def _new_id(self) -> str:
        cid = f"{self._next_id:05d}"
        self._next_id += 1
        return cid

    def _create_seeds(self) -> None:
        have = {c.trailers.get("Seed") for c in self.snapshot.candidates.values() if c.op == "seed"}
        for i, seed in enumerate(self.config.problem.seeds):
            if seed in have:
                continue
            files = self.store.read_files(self.base, seed)
            if not files:
                raise EngineError(f"seed directory {seed!r} has no files in commit {self.base[:10]}")
            has_tunables = bool(tunables.find_tunables(operators.decode(files)))
            if not has_tunables and self.client is None:
                self.say(f"note: seed {seed} declares no @tune parameters; without an LLM it cannot change")
            trailers = {"Run": self.run, "Op": "seed", "Seed": seed, "Island": str(i % self.config.evolution.islands)}
            self._write(f"seed {seed}", "", [self.base], self.base, files, trailers, modes_from=(self.base, seed))

    def _write(self, subject: str, body: str, parents: list[str], tree_from: str, files: dict[str, bytes],
               trailers: dict[str, str], modes_from: tuple[str, str] | None = None) -> Candidate:
        tree, kernel_tree = self.store.write_tree(tree_from, self.config.problem.kernel_dir, files, modes_from)
        for _ in range(100):  # a branch under our name that we did not make (say, from an evaluation): skip it
            cid = self._new_id()
            full = {"Id": cid, **trailers, "Kernel-Tree": kernel_tree}  # the kernel's tree as git wrote it
            message = format_message(f"evolve {self.run}/{cid}: {subject}", body, full)
            commit = self.store.commit_tree(tree, parents, message)
            if self.store.create_branch(f"refs/heads/evolve/{self.run}/{cid}", commit):
                break
        else:
            raise EngineError(f"cannot create a branch under refs/heads/evolve/{self.run}/: 100 ids in a row taken")
        candidate = Candidate(run=self.run, id=cid, commit=commit, parents=tuple(parents), created=int(time.time()),
                              subject=message.splitlines()[0], trailers=full)
        self.snapshot.candidates[cid] = candidate
        self.summary.created += 1
        if self._next_id % PACK_EVERY == 0:
            self.store.pack_refs()
        return candidate

    def _commit(self, p: Proposal, island: int) -> _Job | None:
        parent, second = p.parent, p.second_parent
        trailers: dict[str, str] = {"Run": self.run, "Op": p.op, "Island": str(island),
                                    "Parent": f"{parent.id},{second.id}" if second else parent.id}
        if p.model:
            trailers["Model"] = p.model
        if p.usage.calls:
            trailers["Tokens"] = f"{p.usage.prompt_tokens}+{p.usage.completion_tokens}"
            trailers["Cost-USD"] = f"{p.usage.cost_usd:.6f}"
        trailers.update(p.trailers)
        parent_files = self.store.read_files(parent.commit, self.config.problem.kernel_dir)
        # operators see and edit text only: the parent's other files are carried over byte for byte
        files = {**{path: data for path, data in parent_files.items() if not is_text(data)},
                 **operators.encode(p.files)} if p.files is not None else parent_files
        body = p.rationale + (f"\n\nFailed: {p.error}" if p.status else "")
        candidate = self._write(p.summary if not p.status else f"{p.op} failed ({p.status})", body,
                                [parent.commit, second.commit] if second else [parent.commit], parent.commit,
                                files, trailers)
        if p.status:  # failed before any code existed: recorded, never evaluated
            self._record(candidate, {"status": p.status, "score": None, "error": p.error[:2000],
                                     "harness": self.evaluator.version, "gpu": None})
            return None
        cached = self.recorder.cached(candidate)
        if cached is not None:
            self._record(candidate, cached)
            return None
        return _Job(candidate, holds_room=True)

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

    async def judge_again(self, candidate: Candidate, mode: str) -> dict[str, Any]:
        """`evolve rejudge`: one evaluation of `candidate` in `mode`, recorded as its latest result."""
        try:
            result = await self.evaluator.evaluate(candidate.commit, self.slots[0], mode)
        finally:
            await self.evaluator.close()
        result["rejudged"] = True
        if mode == self.confirm_mode:
            result["confirm"] = True
        self._record(candidate, result)
        return result

    def _reconcile_best(self) -> None:
        """After a crash between a result and the move of `best`, put `best` right."""
        self.recorder.update_best()

    def _progress(self, c: Candidate, best: Candidate | None) -> None:
        r = c.result or {}
        total = self.budget.max_candidates
        done = sum(1 for x in self.snapshot.candidates.values() if x.result is not None)
        count = f"[{done:>4}{'/' + str(total) if total else ''}]"
        score = f"{c.score:10.2f}" if c.score is not None else " " * 10
        best_text = f"best {best.score:.2f} ({best.id})" if best and best.score is not None else "no best yet"
        what = c.trailers.get("Tune") or c.subject.split(": ", 1)[-1]
        error = f"  {str(r.get('error', '')).splitlines()[0][:60]}" if r.get("error") and c.score is None else ""
        cached = " (cached)" if r.get("cached_from") else ""
        confirmed = c.confirmation
        if confirmed is not None and c.id not in self.recorder.confirming and confirmed is c.results[-1]:
            value = confirmed.get("score")
            self.say(f"{'':6} {c.id} confirm {str(confirmed.get('status')):<13}"
                     f"{value if value is not None else '':>10}  ({self.confirm_mode} mode; first measured "
                     f"{c.score})")
            return
        self.say(f"{count} {c.id} {c.op:<6} {str(r.get('status')):<13}{score}{cached}  {best_text}  "
                 f"{what[:48]}{error}")


@dataclass
class Rejudged:
    candidate: Candidate  # as it was before
    result: dict[str, Any]  # today's judge's result, now the last line of its note
    mode: str
    best: Candidate | None  # the best candidate afterwards (None: none has a result from today's judge)
    best_before: str | None  # the id `best` pointed at before


def rejudge(config: Config, store: Store, run: str, pick: Callable[[Snapshot], Candidate], mode: str | None,
            say: Callable[[str], None] = print) -> Rejudged:
    """Judge one candidate of `run` again with today's evaluator (by default in the mode that confirms
    `best`). Its result joins its note like any other, so `best` moves if the candidate no longer wins: a
    result judged by an older judge (an older harness, or one fooled since) is replaced, not trusted."""
    engine = Engine(config, store, run, Budget(), say)
    try:
        engine.open_run(create=False)
        candidate = pick(engine.snapshot)
        before = engine.snapshot.by_commit().get(engine.snapshot.best_commit or "")
        mode = mode or engine.confirm_mode or config.evaluation.mode
        engine.store.own_refs()
        result = asyncio.run(engine.judge_again(candidate, mode))
        return Rejudged(candidate, result, mode, engine.recorder.best(), before.id if before else None)
    finally:
        store.unlock()


def run_engine(config: Config, store: Store, run: str, budget: Budget, say: Callable[[str], None] = print) -> RunSummary:
    engine = Engine(config, store, run, budget, say)
    try:
        engine.prepare()
        return asyncio.run(engine.run_async())
    except LLMError as exc:
        raise EngineError(str(exc)) from None
    finally:
        store.unlock()
