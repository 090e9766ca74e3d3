"""Which operator, with which model, to run next: a bandit rewarded by improvement per dollar.

An arm is an operator (`tune`, `cross`) or an LLM operator with a model (`mutate@gpt-4.1`). Every finished
child is an observation of the arm that made it, read from its trailers (`Op`, `Model`, `Cost-USD`) and
its result, so the bandit's state is the run itself: a resumed run, or another machine reading the
repository, sees the same history. Its reward is the relative improvement over its (better) parent, zero
for a failure or a slower child; its cost is the LLM's dollars plus `eval_usd` per evaluation.

The choice is Thompson sampling on the expected improvement per dollar: for each arm, the probability that
a child improves is drawn from Beta(1 + improved, 1 + not improved), times the arm's mean gain when it does
(prior: 5%), divided by its mean cost (prior: `eval_usd` plus what the run's LLM calls cost on average).
The configured operator weights multiply the values, so they remain the prior the user set. Pure: the
engine passes its seeded `random.Random`, so a run with a fixed seed chooses the same arms.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable
from dataclasses import dataclass

from evolver.records.candidates import Candidate
from evolver.records.config import LLM_OPERATORS
from evolver.records.results import NOT_EVALUATED
from evolver.search.population import ancestors

PRIOR_GAIN = 0.05  # relative improvement assumed for an arm's first success
# LLM operators have one arm per model; `cross` is one arm (an LLM only resolves its conflicts)


def arm_of(c: Candidate) -> str:
    """The arm a candidate is an observation of."""
    model = c.trailers.get("Agent") if c.op == "agent" else c.trailers.get("Model")
    return f"{c.op}@{model}" if model and (c.op in LLM_OPERATORS or c.op == "agent") else c.op


@dataclass
class Stats:
    tries: int = 0
    improved: int = 0
    gain: float = 0.0  # sum of relative improvements
    cost: float = 0.0  # dollars


def observe(candidates: Iterable[Candidate], eval_usd: float) -> dict[str, Stats]:
    """Per-arm statistics of every child with a result; parents are looked up among `candidates`."""
    everyone = list(candidates)
    by_commit = {c.commit: c for c in everyone}
    stats: dict[str, Stats] = {}
    for c in everyone:
        r = c.result
        if c.op == "seed" or r is None:
            continue
        parent_scores = [score for p in c.parents if (score := _scored_ancestor(p, by_commit))]
        arm = stats.setdefault(arm_of(c), Stats())
        arm.tries += 1
        arm.cost += c.cost_usd + (0.0 if r.status in NOT_EVALUATED or r.cached_from else eval_usd)
        if c.score is not None and parent_scores and c.score < min(parent_scores):
            arm.improved += 1
            arm.gain += (min(parent_scores) - c.score) / min(parent_scores)
    return stats


def _scored_ancestor(commit: str, by_commit: dict[str, Candidate], hops: int = 4) -> float | None:
    """The score of `commit`, or of its nearest first-parent ancestor with one (a fix's parent failed)."""
    start = by_commit.get(commit)
    if start is None:
        return None
    return next((c.score for c in itertools.islice(ancestors(start, by_commit), hops) if c.score), None)


@dataclass(frozen=True)
class Choice:
    op: str
    model: str | None
    value: float  # the sampled improvement per dollar that won

    @property
    def arm(self) -> str:
        return f"{self.op}@{self.model}" if self.model else self.op


def choose(weights: dict[str, float], models: list[str], candidates: Iterable[Candidate], eval_usd: float,
           rng: random.Random, agents: list[str] | None = None) -> Choice:
    """The arm with the highest sampled improvement per dollar, among the operators with a weight > 0
    (LLM operators once per model; without models they are left out)."""
    stats = observe(candidates, eval_usd)
    llm_tries = [s for arm, s in stats.items() if "@" in arm]
    llm_cost = sum(s.cost for s in llm_tries) / max(1, sum(s.tries for s in llm_tries))
    arms: list[tuple[str, str | None, float]] = []
    for op, weight in sorted(weights.items()):
        if weight <= 0:
            continue
        if op in LLM_OPERATORS:
            arms += [(op, m, weight) for m in models]
        elif op == "agent":  # one arm per agent, like a model
            arms += [(op, a, weight) for a in agents or []]
        else:
            arms.append((op, None, weight))
    best: Choice | None = None
    for op, model, weight in arms:
        s = stats.get(f"{op}@{model}" if model else op, Stats())
        prior_cost = eval_usd + (max(llm_cost, eval_usd) if model else 0.0)
        p = rng.betavariate(1 + s.improved, 1 + s.tries - s.improved)
        gain = (s.gain + PRIOR_GAIN) / (s.improved + 1)
        cost = (s.cost + prior_cost) / (s.tries + 1)
        value = weight * p * gain / cost
        if best is None or value > best.value:
            best = Choice(op, model, value)
    if best is None:
        raise ValueError("no operator can run (every weight is 0, or only LLM operators without a model)")
    return best
