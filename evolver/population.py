"""Parent selection over a snapshot of the run: islands, elites, exploration, best.

Pure functions over `Candidate` records; the engine passes a seeded `random.Random`, so a run with a fixed
seed makes the same choices. Scores from another evaluator version or device are never compared with the
current ones: `comparable` filters them out.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from evolver.store import Candidate


def comparable(candidates: Iterable[Candidate], harness: str, gpu: str | None) -> list[Candidate]:
    """Correct candidates whose result was measured by this evaluator version on this device."""
    out = []
    for c in candidates:
        r = c.result
        if c.score is not None and r is not None and r.get("harness") == harness and \
                (gpu is None or r.get("gpu") == gpu):
            out.append(c)
    return out


def best_of(candidates: Iterable[Candidate]) -> Candidate | None:
    scored = [c for c in candidates if c.score is not None]
    return min(scored, key=lambda c: (c.score, c.id)) if scored else None


def select_parent(pool: list[Candidate], island: int, elite: int, explore: float,
                  rng: random.Random) -> Candidate | None:
    """A parent for a child on `island`: rank-weighted from the island's elite, or uniformly at random
    among all its correct members with probability `explore`. Falls back to the whole pool when the
    island has no correct member yet."""
    members = [c for c in pool if c.island == island] or pool
    if not members:
        return None
    ranked = sorted(members, key=lambda c: (c.score, c.id))
    if rng.random() < explore:
        return rng.choice(ranked)
    top = ranked[:elite]
    return rng.choices(top, weights=[1.0 / (rank + 1) for rank in range(len(top))])[0]


def next_island(counts: dict[int, int], islands: int) -> int:
    """The island with the fewest children so far, so islands grow evenly."""
    return min(range(islands), key=lambda i: (counts.get(i, 0), i))


def lineage(candidate: Candidate, by_commit: dict[str, Candidate]) -> list[Candidate]:
    """The first-parent ancestry of `candidate`, itself first, back to its seed."""
    chain = [candidate]
    seen = {candidate.commit}
    current = candidate
    while current.parents and current.parents[0] in by_commit and current.parents[0] not in seen:
        current = by_commit[current.parents[0]]
        seen.add(current.commit)
        chain.append(current)
    return chain
