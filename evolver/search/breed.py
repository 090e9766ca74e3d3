"""Breeding: which operator makes the next child, from which parents, and what it shows the LLM.

`Breeder.propose` runs the operator the bandit (or the weights) chose; when that operator cannot act it
falls back along an explicit ordered policy (`FALLBACKS`). Every outcome is an `operators.Proposal`, a
clean three-way merge included, and `children.Children.commit` turns it into the child's commit.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from evolver.records.candidates import Candidate, Snapshot
from evolver.records.config import LLM_OPERATORS, Config, ModelSpec
from evolver.records.results import Recorder
from evolver.records.store import Store
from evolver.records.tomlread import ConfigError
from evolver.search import bandit, operators
from evolver.search.agents import AgentSpec, agent_specs, missing_program, run_agent
from evolver.search.bandit import Choice
from evolver.search.focus import heat, profile_of, where_time_goes
from evolver.search.llm import LLMClient, api_key
from evolver.search.operators import Proposal
from evolver.search.population import code_signature, island_members, lineage, select_parent
from evolver.search.prompts import Inspiration, build_messages

# What runs when the chosen operator cannot act, in order: `fix` with nothing worth repairing, `cross` with
# no pair of islands to merge, `tune` with every reachable value tried. An operator that needs an LLM is
# skipped without one.
FALLBACKS = {"mutate": ("mutate",), "fix": ("fix", "mutate"), "cross": ("cross", "mutate", "tune"),
             "tune": ("tune", "mutate"), "agent": ("agent", "mutate", "tune")}
PARENT_TRIES = 12  # parents tried before `tune` counts as exhausted
CROSS_TRIES = 6  # pairs tried before `cross` gives up


def can_run(op: str, client: LLMClient | None, agents: dict[str, AgentSpec]) -> bool:
    """Whether operator `op` can run at all: an LLM operator needs a client, `agent` a named agent. The one
    place this is decided, for the configured weights and for every fallback."""
    return (op not in LLM_OPERATORS or (client is not None and client.down is None)) and \
        (op != "agent" or bool(agents))


def llm_operators(config: Config, rng: random.Random, say: Callable[[str], None],
                  slots: int = 1) -> tuple[LLMClient | None, dict[str, float]]:
    """The LLM client (None without one) and the operators that can run, by weight. Unless the user set
    `max_concurrent`, the client may have two requests in flight per evaluation slot (at least 4), so that
    proposals keep every GPU busy."""
    llm, client = config.llm, None
    if "max_concurrent" not in (config.raw.get("llm") or {}):
        llm = replace(llm, max_concurrent=max(llm.max_concurrent, 2 * slots))
    wants_llm = any(w > 0 for op, w in config.evolution.operators.items() if op in LLM_OPERATORS)
    if wants_llm and llm.configured and api_key(llm) is not None:
        client = LLMClient(llm, rng, say)
    agents = agent_specs(config)
    if config.evolution.operators.get("agent", 0) > 0:  # else a night of children that are each "cannot start"
        for spec in agents.values():
            why = missing_program(spec)
            if why:
                raise ConfigError(f"{config.path}: [agents.{spec.name}] command: {why}")
    weights = {op: w for op, w in config.evolution.operators.items() if w > 0 and can_run(op, client, agents)}
    if config.evolution.operators.get("agent", 0) > 0 and "agent" not in weights:
        say(f"the agent operator is off: {config.path} names no agents ([agents.NAME] tables, docs/AGENTS.md)")
    if wants_llm and client is None:
        why = "no [llm] base_url/model configured" if not llm.configured else f"${llm.api_key_env} is not set"
        alone = " and ".join(f"`{op}`" for op in weights) or "nothing"
        say(f"LLM operators off ({why}): running with {alone} alone")
    if not weights:
        raise ConfigError(f"{config.path}: no operator can run: the only weighted operators need an LLM; give "
                          "`tune` or `cross` a weight in [evolution] operators or configure [llm]")
    return client, weights


@dataclass
class PromptContext:
    files: dict[str, str]
    chain: list[Candidate]
    guidance: str | None
    inspirations: list[Inspiration]
    profile: str = ""  # where the parent's time goes, measured (evolver/search/focus.py)
    hotness: dict[str, float] = field(default_factory=dict)


def read_guidance(store: Store, config: Config, base: str) -> str | None:
    """The problem's guidance file as committed in the run's base commit."""
    if not config.problem.guidance:
        return None
    blob = store.tree_entry(base, config.problem.guidance)
    return store.cat_blobs([blob]).get(blob, b"").decode("utf-8", "replace") if blob else None


def prompt_context(store: Store, config: Config, snapshot: Snapshot, base: str, parent: Candidate,
                   pool: list[Candidate], files: dict[str, str] | None = None,
                   guidance: str | None = None) -> PromptContext:
    """What a mutation of `parent` shows the model: its files, its lineage, the problem's guidance (from
    the run's base commit) and the change behind the best candidate of up to two other islands."""
    kernel_dir = config.problem.kernel_dir
    files = files if files is not None else operators.decode(store.read_files(parent.commit, kernel_dir))
    by_commit = snapshot.by_commit()
    chain = lineage(parent, by_commit)
    found = profile_of(parent, by_commit)
    profile = where_time_goes(found[0], files, kernel_dir, found[1], parent) if found else ""
    guidance = guidance if guidance is not None else read_guidance(store, config, base)
    best_by_island: dict[int, Candidate] = {}
    for c in sorted(pool, key=lambda c: (c.score, c.id)):
        if c.island != parent.island and c.op != "seed" and c.parents:
            best_by_island.setdefault(c.island, c)
    inspirations = [Inspiration(c, store.diff(c.parents[0], c.commit, kernel_dir))
                    for c in list(best_by_island.values())[:2]]
    return PromptContext(files, chain, guidance, inspirations, profile, heat(files, found[0] if found else None))


def mutation_messages(config: Config, parent: Candidate, context: PromptContext) -> list[dict[str, str]]:
    """The messages a mutation of `parent` sends, within the prompt's budget: `evolve prompt` prints exactly
    these."""
    return build_messages(kernel_dir=config.problem.kernel_dir, files=context.files, parent=parent,
                          chain=context.chain, guidance=context.guidance,
                          budget_tokens=config.llm.context_tokens - config.llm.max_tokens,
                          inspirations=context.inspirations, profile=context.profile, hotness=context.hotness)


class Breeder:
    def __init__(self, config: Config, store: Store, snapshot: Snapshot, base: str, recorder: Recorder,
                 client: LLMClient | None, weights: dict[str, float], rng: random.Random,
                 agents: dict[str, AgentSpec] | None = None) -> None:
        self.config, self.store, self.snapshot, self.base = config, store, snapshot, base
        self.recorder, self.client, self.weights, self.rng = recorder, client, weights, rng
        self.kernel_dir = config.problem.kernel_dir
        self.agents = agents or {}
        self.tune_exhausted = False
        self.guidance = read_guidance(store, config, base)  # the run's base commit is fixed: read once
        self._fixing: set[str] = set()  # fix targets with a fix in flight
        self._signatures: dict[str, str] = {}  # kernel tree -> code signature (novelty in parent selection)

    def choose(self) -> Choice:
        """The operator (and model) for the next child: learnt by the bandit, or drawn by the weights."""
        ev = self.config.evolution
        models = [m.name for m in self.config.llm.models] if self.client is not None else []
        weights = self.acting() or self.weights
        if ev.bandit:
            return bandit.choose(weights, models, self.snapshot.candidates.values(), ev.eval_usd, self.rng,
                                 sorted(self.agents))
        ops = list(weights)
        return Choice(self.rng.choices(ops, weights=[weights[o] for o in ops])[0], None, 0.0)

    def stuck(self) -> str | None:
        """Why no child can be made any more (the run stops), else None."""
        if self.tune_exhausted and self.client is None:
            return ("tune has tried every reachable value of the @tune parameters; configure an LLM or widen the "
                    "choices")
        if self.client is not None and self.client.down and not self.acting():
            return f"no operator can run: the LLM is down ({self.client.down})"
        return None

    def acting(self) -> dict[str, float]:
        """The weighted operators that can act now, themselves or by a fallback (a down LLM's cannot)."""
        return {op: w for op, w in self.weights.items() if self.plan(op)}

    def plan(self, op: str) -> list[str]:
        """`op`, then its fallbacks, without those that cannot act now."""
        return [o for o in FALLBACKS[op] if can_run(o, self.client, self.agents)
                and not (o == "tune" and self.tune_exhausted)]

    async def propose(self, choice: Choice, island: int, pool: list[Candidate]) -> Proposal | None:
        """A child proposal by the chosen operator or, if it cannot act, by its fallbacks; None if none can."""
        model = next((m for m in self.config.llm.models if m.name == choice.model), None) if choice.model else None
        for op in self.plan(choice.op):
            if op == "fix":
                proposal = await self._fix(model)
            elif op == "cross":
                proposal = await self._cross(pool, island)
            elif op == "agent":
                proposal = await self._agent(choice.model, island, pool)
            else:
                proposal = await self._from_one_parent(op, model, island, pool)
            if proposal is not None:
                return proposal
        return None

    # -- the operators ------------------------------------------------------------------------------------
    async def _from_one_parent(self, op: str, model: ModelSpec | None, island: int,
                               pool: list[Candidate]) -> Proposal | None:
        """`mutate` or `tune` of a parent selected on `island` (tune tries other islands when a parent has
        no untried value left, and marks itself exhausted after PARENT_TRIES)."""
        for _ in range(PARENT_TRIES):
            parent, migrant = self._select(pool, island)
            if parent is None:
                return None
            raw = self.store.read_files(parent.commit, self.kernel_dir)  # once: carried on the proposal
            files = operators.decode(raw)
            if op == "tune":
                seen = {c.kernel_tree for c in self.snapshot.candidates.values()}
                proposal = operators.tune(parent, files, seen, self.rng)
                if proposal is None:
                    island = self.rng.randrange(self.config.evolution.islands)
                    continue
            else:
                assert self.client is not None
                context = prompt_context(self.store, self.config, self.snapshot, self.base, parent, pool, files,
                                         self.guidance)
                proposal = await operators.mutate(self.client, self.config.llm, parent, context.files,
                                                  lambda: mutation_messages(self.config, parent, context),  # noqa: B023
                                                  self.kernel_dir, model=model)
            proposal.island, proposal.parent_files = island, raw
            if migrant:
                proposal.trailers["Migrant-From"] = str(parent.island)
            return proposal
        if op == "tune":
            self.tune_exhausted = True
        return None

    async def _cross(self, pool: list[Candidate], island: int) -> Proposal | None:
        """A child of two parents from different islands: git's three-way merge when it is clean (no LLM),
        else, with an LLM, its resolution of the conflict."""
        for _ in range(CROSS_TRIES):
            pair = self._pair(pool, island)
            if pair is None:
                continue
            a, b = pair
            clean, tree = self.store.merge_trees(a.commit, b.commit)
            if not clean:
                proposal = await self._resolve(a, b)
            elif self.store.tree_entry(tree, self.kernel_dir) in (a.kernel_tree, b.kernel_tree):
                proposal = None  # nothing new
            else:
                merged = self.store.read_files(tree, self.kernel_dir)
                proposal = Proposal("cross", a, operators.decode(merged), f"cross {a.id} x {b.id}",
                                    rationale=f"Three-way merge of {a.id} (island {a.island}) and {b.id} "
                                              f"(island {b.island}).",
                                    trailers={"Merge": "clean"}, second_parent=b, merged=merged)
            if proposal is not None:
                proposal.island = a.island
                return proposal
        return None

    def _pair(self, pool: list[Candidate], island: int) -> tuple[Candidate, Candidate] | None:
        """A parent from `island` and one of the best of another island, never a pair crossed before."""
        a, _ = self._select(pool, island)
        others = sorted((c for c in pool if a is not None and c.island != a.island), key=lambda c: (c.score, c.id))
        if a is None or not others:
            return None
        b = self.rng.choice(others[:self.config.evolution.population])
        pairs = {frozenset(c.parent_ids) for c in self.snapshot.candidates.values() if c.op == "cross"}
        return None if frozenset((a.id, b.id)) in pairs else (a, b)

    async def _resolve(self, a: Candidate, b: Candidate) -> Proposal | None:
        """The LLM's crossover of `a` and `b`, whose changes conflict; none without an LLM."""
        base = self.store.merge_base(a.commit, b.commit)
        if self.client is None or base is None:
            return None
        return await operators.resolve(
            self.client, self.config.llm, a, b, operators.decode(self.store.read_files(a.commit, self.kernel_dir)),
            self.store.diff(base, a.commit, self.kernel_dir), self.store.diff(base, b.commit, self.kernel_dir),
            self.kernel_dir, self.guidance)

    async def _agent(self, name: str | None, island: int, pool: list[Candidate]) -> Proposal | None:
        """A child by a coding agent (the one chosen, or one drawn) from a parent selected on `island`."""
        parent, migrant = self._select(pool, island)
        if parent is None:
            return None
        spec = self.agents.get(name or "") or self.rng.choice([self.agents[a] for a in sorted(self.agents)])
        context = prompt_context(self.store, self.config, self.snapshot, self.base, parent, pool)
        messages = mutation_messages(self.config, parent, context)
        proposal = await run_agent(spec, parent, self.config, self.store, messages)
        proposal.island = island
        if migrant:
            proposal.trailers["Migrant-From"] = str(parent.island)
        return proposal

    def fix_target(self) -> Candidate | None:
        """The most recent candidate that failed on the current evaluator and has no fix yet."""
        taken = {c.parent_ids[0] for c in self.snapshot.candidates.values() if c.op == "fix" and c.parent_ids}
        taken |= self._fixing
        failed = [c for c in self.snapshot.candidates.values() if self.recorder.failed_here(c) and c.id not in taken]
        return max(failed, key=lambda c: c.id, default=None)

    async def _fix(self, model: ModelSpec | None) -> Proposal | None:
        target = self.fix_target()
        if target is None:
            return None
        assert self.client is not None
        self._fixing.add(target.id)
        try:
            files = operators.decode(self.store.read_files(target.commit, self.kernel_dir))
            diff = self.store.diff(target.parents[0], target.commit, self.kernel_dir) if target.parents else ""
            proposal = await operators.fix(self.client, self.config.llm, target, files, diff, self.kernel_dir,
                                           self.guidance, model=model)
        finally:
            self._fixing.discard(target.id)
        proposal.island = target.island
        return proposal

    # -- parents ------------------------------------------------------------------------------------------
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
            self._signatures[key] = code_signature(self.store.read_files(c.commit, self.kernel_dir))
        return self._signatures[key]
