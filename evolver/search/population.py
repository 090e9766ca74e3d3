"""Parent selection over a snapshot of the run: islands, elites, exploration, lineage.

Pure functions over `Candidate` records; the engine passes a seeded `random.Random`, so a run with a fixed
seed makes the same choices. Scores from another evaluator version or device are never compared with the
current ones: `comparable` filters them out.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from evolver.records.candidates import Candidate


def select_parent(members: list[Candidate], elite: int, explore: float, rng: random.Random,
                  children: dict[str, int] | None = None,
                  signature: Callable[[Candidate], str] | None = None) -> Candidate | None:
    """A parent among an island's members (its own and its migrants): with probability `explore`
    uniformly among all, else from the elite, weighted by rank and by novelty. Novelty: of candidates
    whose code is the same up to whitespace and comments (`signature`) only the best is eligible, and a
    parent's weight is divided by one plus the children it already has, so the search does not breed the
    same kernel again and again."""
    if not members:
        return None
    ranked = sorted(members, key=lambda c: (c.score, c.id))
    if rng.random() < explore:
        return rng.choice(ranked)
    top: list[Candidate] = []
    seen: set[str] = set()
    for c in ranked:  # signatures only as far down the ranking as the elite reaches (each may read git)
        if signature is not None:
            key = signature(c)
            if key in seen:
                continue
            seen.add(key)
        top.append(c)
        if len(top) == elite:
            break
    bred = children or {}
    return rng.choices(top, weights=[1.0 / (rank + 1) / (1 + bred.get(c.id, 0)) for rank, c in enumerate(top)])[0]


def island_members(pool: list[Candidate], everyone: Iterable[Candidate], island: int, islands: int,
                   migrate_every: int) -> tuple[list[Candidate], set[str]]:
    """The parents `island` may draw from: its own correct candidates (`pool`) and its migrants. Islands
    form a ring; after every `migrate_every` children of the run (`everyone`, by id, failures included),
    each island receives the best candidate that the island before it had by then. Derived from ids alone,
    so a resumed or repeated run sees the same migrations. Falls back to the whole pool while the island
    has no member yet. Returns (members, ids of the migrants among them)."""
    own = [c for c in pool if c.island == island]
    arrived: dict[str, Candidate] = {}
    if islands > 1 and migrate_every > 0:
        children = sorted(c.id for c in everyone if c.op != "seed")
        boundaries = children[migrate_every - 1::migrate_every]
        source = sorted((c for c in pool if c.island == (island - 1) % islands), key=lambda c: c.id)
        best: Candidate | None = None
        i = 0
        for boundary in boundaries:  # one sweep: the source's best as of each boundary
            while i < len(source) and source[i].id <= boundary:
                if best is None or (source[i].score, source[i].id) < (best.score, best.id):
                    best = source[i]
                i += 1
            if best is not None:
                arrived[best.id] = best
    if not own:
        return pool, set()
    return own + list(arrived.values()), set(arrived)


def code_signature(files: dict[str, bytes]) -> str:
    """The kernel's code up to whitespace, blank lines and whole-line comments: equal signatures are the
    same kernel for the purposes of breeding."""
    digest = hashlib.sha1()
    for path in sorted(files):
        digest.update(path.encode() + b"\0")
        for line in files[path].decode("utf-8", "replace").splitlines():
            text = " ".join(line.split())
            if text and not text.startswith(("#", "//")):
                digest.update(text.encode() + b"\n")
    return digest.hexdigest()


def next_island(counts: dict[int, int], islands: int) -> int:
    """The island with the fewest children so far, so islands grow evenly."""
    return min(range(islands), key=lambda i: (counts.get(i, 0), i))


def ancestors(candidate: Candidate, by_commit: dict[str, Candidate]) -> Iterator[Candidate]:
    """`candidate`, then its first parent, and so on back to its seed (or the first commit that is not a
    candidate): the one walk of a lineage (prompts, `evolve lineage`, the TUI, the bandit, the seed index)."""
    seen: set[str] = set()
    current: Candidate | None = candidate
    while current is not None and current.commit not in seen:
        seen.add(current.commit)
        yield current
        current = by_commit.get(current.parents[0]) if current.parents else None


def lineage(candidate: Candidate, by_commit: dict[str, Candidate]) -> list[Candidate]:
    """The first-parent ancestry of `candidate`, itself first, back to its seed."""
    return list(ancestors(candidate, by_commit))


@dataclass(frozen=True)
class Step:
    candidate: Candidate
    parents: tuple[Candidate, ...]  # two for a crossover
    delta: float | None  # relative score change against the first parent (negative: faster)


def ancestry(candidate: Candidate, by_commit: dict[str, Candidate], limit: int | None = 200) -> list[Step]:
    """First-parent ancestry back to the seed, each step with all its parents (both sides of a merge)."""
    steps = []
    for current in itertools.islice(ancestors(candidate, by_commit), limit):
        parents = tuple(by_commit[p] for p in current.parents if p in by_commit)
        first = by_commit.get(current.parents[0]) if current.parents else None
        delta = ((current.score - first.score) / first.score if current.score is not None and first is not None
                 and first.score else None)
        steps.append(Step(current, parents, delta))
    return steps
