"""One call of the candidate as the judge makes it (`Context.call`): a fresh input from a secret seed written into
the shared buffers, the runner asked over its pipe, the judge's clock stopped at the runner's `done` line, the reply
judged (`judge_reply`) and the input found unchanged; and `Context`, what every stage of the judge needs.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from qrjudge.kept import Deferred
from qrjudge.link import Runner
from qrjudge.verdict import Report, Verdict

ESCAPED = ("the outputs changed after custom_kernel returned: work left running on another stream was not "
           "joined to the current stream")


def judge_error(reply: dict[str, Any], where: str) -> None:
    """Raises the verdict for a reply that reports the candidate's error or a change to the machinery."""
    error = reply.get("error")
    if isinstance(error, dict):
        status = error.get("status") if error.get("status") in ("rejected", "compile_error", "crash") else "crash"
        raise Verdict(str(status), f"{where}: {str(error.get('message', ''))[:3000]}",
                      trace=str(error.get("trace", ""))[-2000:])
    if reply.get("tamper"):
        raise Verdict("rejected", f"{where}: the candidate changed the harness's machinery: {reply['tamper']}")


def judge_reply(reply: dict[str, Any], where: str) -> dict[str, Any]:
    """What the runner's reply to a call means for the candidate; raises the verdict if it ends here."""
    judge_error(reply, where)
    if reply.get("problem"):
        raise Verdict("incorrect", f"{where}: {str(reply['problem'])[:500]}")
    if reply.get("escaped"):
        raise Verdict("rejected", f"{where}: {ESCAPED}")
    times = [reply.get("event_us"), reply.get("wall_us")]
    if not all(isinstance(t, (int, float)) and math.isfinite(t) and t > 0 for t in times):
        raise Verdict("rejected", f"{where}: the candidate's process reported impossible times {times}")
    return reply


@dataclass
class Context:
    """What every stage needs."""

    args: argparse.Namespace
    runner: Runner
    report: Report
    rng: random.Random
    torch: Any
    device: Any
    arena: Any
    timings: dict[str, float] = field(default_factory=dict)
    overhead_us: dict[str, float] = field(default_factory=dict)  # calibrated judge-clock overhead per shape
    wall_overhead_us: dict[str, float] = field(default_factory=dict)  # the runner's wall clock over its events, same
    runner_cpu: int | None = None  # where the runner pinned its launching thread (EVOLVE_RUNNER_PIN=fastest)
    compiler: bool = False  # the candidate names torch.compile's compiler: its runners import it first (`go`)
    nvrtc_cache: Any = None  # what the runner says the compile cache served it (shown, never believed)
    hold_us: float | None = None  # how long the runner holds the GPU before each timed call (timing.Hold)
    hold_error: str | None = None
    mps: bool = False  # a runner's CUDA context is a client of an MPS server (timing.mps_enabled)
    last_timed: tuple[int, int] | None = None  # (batch, n) of the shape timed last
    warm_failed: tuple[tuple[int, int], Verdict] | None = None  # the size whose first call failed in `warm_up`
    handles: Any = None  # the shared buffers' handles, for a second runner (the timed one, `evaluate_sharing`)
    deferred: Deferred | None = None  # kept timed calls checked after the timed region (a GPU shared), or None
    alive: list[tuple[float, float]] = field(default_factory=list)  # when candidate code could exist (monotonic)
    # Where the calls' time goes (`spent`), by the judge's clock: making and writing inputs; the prime calls; the
    # runner from the ask to its `done` line (the candidate's call, the pipes, flush and hold); from `done` to its
    # reply (the runner's own checks once the clock has stopped). The benchmark reports its own share.
    spent: dict[str, float] = field(default_factory=lambda: dict.fromkeys(("inputs", "prime", "runner", "tail"), 0.0))

    def call(self, spec: Any, where: str, primed: bool = False, keep: Keep | None = None, **options: Any) -> Call:
        """One call of the candidate on a fresh input, generated here from a secret seed and written into the
        shared A before the runner is asked: the runner never learns the seed, and what it does around the
        call no longer depends on the input's case, so the judge's clock sees a steady overhead.

        A primed call is preceded by an untimed call on the previous input, and its input reaches the runner
        through host memory, so that between that call and the timed one the judge does no GPU work: a
        short timed call then finds the GPU, the runner's CPU and its caches as a loop of calls in one
        process leaves them (PRIME_BYTES).

        `keep` takes the judge's copy of the outputs at the runner's `done` (`receive`)."""
        return self.receive(self.send(spec, where, primed, **options), keep)

    def send(self, spec: Any, where: str, primed: bool = False, op: str = "call", **options: Any) -> Sent:
        """The first half of `call`: the input written, the runner asked (a `call`, or another `op` on the
        input); the judge is free until `receive`."""
        from qrjudge.cases import make_batch

        began = time.perf_counter()
        seed = self.rng.getrandbits(48)
        mine = make_batch(spec, seed, self.device)
        a, _, _ = self.arena.views(spec.batch, spec.n)
        if primed:
            host = mine.cpu()
            asked = time.perf_counter()
            judge_error(self.runner.ask({"op": "prime", "spec": spec.to_list(), **options}, where), where)
            prime_s = time.perf_counter() - asked
            self.spent["prime"] += prime_s
            began += prime_s  # (not the input's time)
            self.arena.stage(spec.batch, spec.n).copy_(host)  # a memcpy: the input exists from here on
        else:
            a.copy_(mine)
            if self.device.type == "cuda":
                # the runner's context must see the whole input (the device named: without it torch asks the
                # driver how many devices there are, about 1 ms a call in the judge on an H200)
                self.torch.cuda.synchronize(self.device)
        self.spent["inputs"] += time.perf_counter() - began
        began = time.perf_counter()
        nonce = self.runner.post({"op": op, "spec": spec.to_list(), "staged": primed, **options})
        return Sent(spec, where, seed, mine, nonce, began)

    def receive(self, sent: Sent, keep: Keep | None = None) -> Call:
        """The second half of `call`: the runner's reply, judged, and the input found unchanged. The judge's
        clock stops at the runner's `done` line, sent once the outputs are in the shared buffers and its device
        is idle, before its checks and its reply: what the clock sees beyond the candidate's time is then the
        pipes, the flush and the hold, steady enough to be calibrated (`calibrate`).

        The runner then waits for the judge's `kept` line, and `keep` (a timed call's: the outputs it checks)
        copies the shared outputs before it is sent: what the runner runs after `done` (its checks, and any code
        of the candidate's they reach: a function replaced for a moment, a hook of the dispatcher's) can no
        longer change them unseen, since the judge's clock has stopped (docs/QR_CONTRACT.md, "Times")."""
        first = self.runner.line(sent.nonce, sent.where)
        done = time.perf_counter()
        wall = (done - sent.began) * 1e6
        said_done, kept = first.get("done") is True, None
        if said_done:
            if keep is not None:
                kept = keep(sent)
                if self.device.type == "cuda":
                    self.torch.cuda.synchronize(self.device)  # the copy made before the runner runs on
            self.runner.kept(sent.nonce)
        reply = self.runner.reply(sent.nonce, sent.where) if said_done else first
        self.spent["runner"] += done - sent.began
        self.spent["tail"] += time.perf_counter() - done
        reply = judge_reply(reply, sent.where)
        a, _, _ = self.arena.views(sent.spec.batch, sent.spec.n)
        if not self.torch.equal(a, sent.a):
            raise Verdict("incorrect", f"{sent.where}: custom_kernel modified its input A")
        return Call(sent.seed, sent.a, reply, wall, kept)


class Sent(NamedTuple):
    spec: Any
    where: str
    seed: int
    a: Any  # the judge's own copy of the input
    nonce: int | None
    began: float


class Call(NamedTuple):
    seed: int
    a: Any  # the judge's own copy of the input
    reply: dict[str, Any]
    wall_us: float  # the judge's clock, from asking to the reply
    kept: Any = None  # what `keep` took of the outputs at `done`


Keep = Callable[[Sent], Any]  # the judge's copy of a call's outputs, taken at its `done` (Context.receive)
