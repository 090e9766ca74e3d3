"""Children as commits: the one path from an operator's `Proposal` (or a seed directory) to a candidate.

A child's commit holds the parent's tree with the kernel directory replaced (`Store.write_tree`), its
provenance in trailers, and the kernel's tree hash (`Kernel-Tree`, the evaluation cache's key); its
branch `evolve/<run>/<id>` is what makes it a candidate. Ids are taken in order; an id whose branch exists
already (made by someone else) is skipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from evolver.records.candidates import Candidate, Snapshot, format_message, is_text
from evolver.records.config import Config
from evolver.records.store import Store, StoreError
from evolver.search import operators, tunables
from evolver.search.operators import Proposal

PACK_EVERY = 256  # candidates between `git pack-refs` (keeps ref listings cheap for the TUI and status)


class Children:
    def __init__(self, config: Config, store: Store, snapshot: Snapshot, base: str,
                 on_created: Callable[[Candidate], None]) -> None:
        self.config, self.store, self.snapshot, self.base = config, store, snapshot, base
        self.run = snapshot.run
        self.on_created = on_created
        self.next_id = 1 + max((int(c) for c in snapshot.candidates if c.isdigit()), default=0)

    def commit(self, p: Proposal) -> Candidate:
        """The child of an operator's proposal, written; a failed attempt too (it is recorded, not judged)."""
        parent, second = p.parent, p.second_parent
        trailers: dict[str, str] = {"Run": self.run, "Op": p.op, "Island": str(p.island),
                                    "Parent": f"{parent.id},{second.id}" if second else parent.id}
        if p.model:
            trailers["Model"] = p.model
        if p.usage.calls:
            trailers["Tokens"] = f"{p.usage.prompt_tokens}+{p.usage.completion_tokens}"
            trailers["Cost-USD"] = f"{p.usage.cost_usd:.6f}"
        trailers.update(p.trailers)
        body = p.rationale + (f"\n\nFailed: {p.error}" if p.status else "")
        subject = p.summary if not p.status else f"{p.op} failed ({p.status})"
        child = self._write(subject, body, [parent.commit, second.commit] if second else [parent.commit],
                            parent.commit, self._files(p), trailers)
        if p.replies:
            self.store.add_replies(child.commit, p.replies)
        return child

    def _files(self, p: Proposal) -> dict[str, bytes]:
        if p.merged is not None:  # git's merge, byte for byte
            return p.merged
        parent_files = p.parent_files if p.parent_files is not None else \
            self.store.read_files(p.parent.commit, self.config.problem.kernel_dir)
        if p.files is None:
            return parent_files
        # operators see and edit text only: the parent's other files are carried over byte for byte
        return {**{path: data for path, data in parent_files.items() if not is_text(data)},
                **operators.encode(p.files)}

    def seeds(self, has_llm: bool, say: Callable[[str], None]) -> None:
        """A candidate for every configured seed directory the run does not have yet."""
        have = {c.trailers.get("Seed") for c in self.snapshot.candidates.values() if c.op == "seed"}
        for i, seed in enumerate(self.config.problem.seeds):
            if seed in have:
                continue
            files = self.store.read_files(self.base, seed)
            if not files:
                raise StoreError(f"seed directory {seed!r} has no files in commit {self.base[:10]}")
            if not tunables.find_tunables(operators.decode(files)) and not has_llm:
                say(f"note: seed {seed} declares no @tune parameters; without an LLM it cannot change")
            trailers = {"Run": self.run, "Op": "seed", "Seed": seed, "Island": str(i % self.config.evolution.islands)}
            self._write(f"seed {seed}", "", [self.base], self.base, files, trailers, modes_from=(self.base, seed))

    def _write(self, subject: str, body: str, parents: list[str], tree_from: str, files: dict[str, bytes],
               trailers: dict[str, str], modes_from: tuple[str, str] | None = None) -> Candidate:
        tree, kernel_tree = self.store.write_tree(tree_from, self.config.problem.kernel_dir, files, modes_from)
        for _ in range(100):  # a branch under our name that we did not make (say, from an evaluation): skip it
            cid = f"{self.next_id:05d}"
            self.next_id += 1
            full = {"Id": cid, **trailers, "Kernel-Tree": kernel_tree}  # the kernel's tree as git wrote it
            message = format_message(f"evolve {self.run}/{cid}: {subject}", body, full)
            commit = self.store.commit_tree(tree, parents, message)
            if self.store.create_branch(f"refs/heads/evolve/{self.run}/{cid}", commit):
                break
        else:
            raise StoreError(f"cannot create a branch under refs/heads/evolve/{self.run}/: 100 ids in a row taken")
        candidate = Candidate(run=self.run, id=cid, commit=commit, parents=tuple(parents), created=int(time.time()),
                              subject=message.splitlines()[0], trailers=full)
        self.snapshot.candidates[cid] = candidate
        self.on_created(candidate)
        if self.next_id % PACK_EVERY == 0:
            self.store.pack_refs()
        return candidate
