"""The timed calls the judge keeps for checking: each call's input and outputs (of a secret sample of its matrices
where checking it whole is costly), checked together in batches, or, on a shared GPU, after the timed region.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from qrjudge.verdict import Verdict

STASH_BYTES = 256 << 20  # cheap checks are batched: inputs and outputs kept until this many bytes
# Where evaluations share the GPU, a timed call's checks wait until its timed runner is gone and run under the
# shared lock, beside the others' tests (`Deferred`): at most this much kept (a `full` evaluation's kept calls
# come to about 5 GiB by its shapes' sizes), or a quarter of the GPU's free memory if that is less; beyond it a stash is checked at once, as alone.
DEFER_BYTES = 8 << 30


class Evaluation(Protocol):
    """What the kept calls need of the evaluation (the judge's `Context`)."""

    torch: Any
    device: Any
    arena: Any  # the shared buffers (qrjudge/arena.py)
    deferred: Deferred | None


class Kept(NamedTuple):
    """What the judge keeps of a timed call for checking: the call's number, which matrices of its batch
    (None: all), and copies of the input and of the outputs of those matrices."""
    number: int
    rows: Any  # a tensor of batch indices, or None
    a: Any
    h: Any
    tau: Any


class Stash:
    """Timed calls kept for checking, checked together once they add up to STASH_BYTES (many small batches
    cost one check) or at the end of the shape; on a shared GPU, after the timed region (`Deferred`)."""

    def __init__(self, ctx: Evaluation, spec: Any) -> None:
        self.ctx, self.spec = ctx, spec
        self.items: list[Kept] = []
        self.kept = 0  # calls kept, each checked before any verdict is ok

    def bytes(self) -> int:
        return sum(item.a.numel() * 8 for item in self.items)  # the input and the outputs, float32

    def add(self, number: int, a: Any, rows: list[int] | None) -> Kept:
        """Keep call `number`: its input `a` (the judge's copy) and the shared outputs, of the matrices `rows`
        of the batch (None: all of them)."""
        _, h, tau = self.ctx.arena.views(self.spec.batch, self.spec.n)
        if rows is None:
            kept = Kept(number, None, a, h.clone(), tau.clone())
        else:
            index = self.ctx.torch.tensor(sorted(rows), device=h.device)
            kept = Kept(number, index, a.index_select(0, index), h.index_select(0, index), tau.index_select(0, index))
        self.items.append(kept)
        self.kept += 1
        if self.bytes() >= STASH_BYTES:
            self.settle()
        return kept

    def settle(self) -> None:
        """The kept calls checked now, or handed to the evaluation's `Deferred` where it takes them."""
        if self.ctx.deferred is None or not self.ctx.deferred.take(self):
            self.check()

    def unchanged(self, kept: Kept) -> bool:
        """Whether the shared outputs still hold what the call left there (no late writes)."""
        _, h, tau = self.ctx.arena.views(self.spec.batch, self.spec.n)
        if kept.rows is not None:
            h, tau = h.index_select(0, kept.rows), tau.index_select(0, kept.rows)
        return bool(self.ctx.torch.equal(kept.h, h) and self.ctx.torch.equal(kept.tau, tau))

    def check(self) -> None:
        from qrjudge.checker import check

        if not self.items:
            return
        cat = self.ctx.torch.cat
        verdict = check(cat([i.a for i in self.items]), cat([i.h for i in self.items]),
                        cat([i.tau for i in self.items]), diagnostics=False)
        if not verdict.ok:
            item, matrix = self.locate(verdict.matrix or 0)
            reason = verdict.reason.replace(f"matrix {verdict.matrix} ", f"matrix {matrix} ", 1)
            raise Verdict("incorrect", f"benchmark {self.spec.label}: timed call {item.number} returned a wrong result: "
                          f"{reason}", failing=self.spec.label)
        self.items.clear()

    def locate(self, position: int) -> tuple[Kept, int]:
        """The kept call and the matrix of its batch at `position` in the checked concatenation."""
        for item in self.items:
            if position < item.a.shape[0]:
                return item, position if item.rows is None else int(item.rows[position])
            position -= item.a.shape[0]
        raise IndexError(position)


class Deferred:
    """Kept timed calls whose checks wait until the timed runner is gone (`evaluate_sharing`): checking is the
    judge's own GPU work, untimed, so it can run under the shared lock beside other evaluations' tests rather
    than inside this evaluation's exclusive hold of the GPU. Up to `budget` bytes; a stash beyond it is checked
    at once. A wrong call is then found after the last shape is timed instead of after its own; a failure found
    in the timed region waits for these checks (`evaluate_sharing`), so the verdict is the one alone gives."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.stashes: list[Stash] = []

    def take(self, stash: Stash) -> bool:
        size = stash.bytes()
        if size > self.budget:
            return False
        held = Stash(stash.ctx, stash.spec)
        held.items, stash.items = stash.items, []
        self.stashes.append(held)
        self.budget -= size
        return True

    def check(self) -> None:
        while self.stashes:
            self.stashes.pop(0).check()


def defer_budget(ctx: Evaluation) -> int:
    """DEFER_BYTES, or a quarter of the GPU's free memory where that is less."""
    if ctx.device.type != "cuda":
        return DEFER_BYTES
    free, _ = ctx.torch.cuda.mem_get_info()
    return int(min(DEFER_BYTES, free // 4))
