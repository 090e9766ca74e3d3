"""What the QR judge runs, without torch: the input cases, the 12 benchmark shapes and the test suites.

Shared by the supervisor (qrjudge/supervisor.py, which imports no torch and checks that a result covers every test
and shape of its mode), the judge and the runner. qrjudge/cases.py generates the matrices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

CASES = ("dense", "upper", "rankdef", "nearrank", "clustered", "band", "nearcollinear", "rowscale", "mixed")
ILL = ("upper", "rankdef", "nearrank", "clustered", "band", "nearcollinear", "rowscale")  # non-dense cases
MIXED_WEIGHTS = {"dense": 6.0, **{c: 1.0 for c in ILL}}


@dataclass(frozen=True)
class Spec:
    batch: int
    n: int
    cond: float
    case: str
    force: str | None = None  # mixed only: an ill case that must appear in the batch, or "all" of them

    @property
    def label(self) -> str:
        forced = f"+{self.force}" if self.force else ""
        return f"{self.batch}x{self.n} {self.case}{forced} cond={self.cond:g}"

    def to_list(self) -> list[object]:
        """The spec as the judge sends it to the runner (JSON)."""
        return [self.batch, self.n, self.cond, self.case, self.force]

    @classmethod
    def from_list(cls, value: list[object]) -> "Spec":
        batch, n, cond, case, force = value
        if not (isinstance(batch, int) and isinstance(n, int) and isinstance(cond, (int, float))
                and case in CASES and (force is None or force in ILL or force == "all")):
            raise ValueError(f"not a spec: {value!r}")
        return cls(batch, n, float(cond), str(case), force if force is None else str(force))


# --- the benchmark and the test suites --------------------------------------------------------------------

BENCHMARK = (
    Spec(20, 32, 1, "dense"), Spec(40, 176, 1, "dense"), Spec(40, 352, 1, "dense"),
    Spec(640, 512, 2, "dense"), Spec(640, 512, 2, "mixed"), Spec(640, 512, 0, "rankdef"),
    Spec(640, 512, 0, "clustered"), Spec(60, 1024, 2, "dense"), Spec(60, 1024, 2, "mixed"),
    Spec(60, 1024, 0, "nearrank"), Spec(8, 2048, 1, "dense"), Spec(2, 4096, 1, "dense"),
)


# `tiny`: the harness's own self-test on a CPU (--device cpu): the same judge and runner, matrices small enough
# for a plain-torch Householder kernel; its scores mean nothing.
TINY_TESTS = (Spec(2, 1, 1, "dense"), Spec(3, 5, 1, "dense"), Spec(8, 12, 2, "mixed", force="all"),
              Spec(3, 9, 0, "rankdef"))
TINY_BENCHMARK = (Spec(4, 8, 1, "dense"), Spec(6, 12, 2, "mixed"), Spec(2, 16, 0, "clustered"))


def tests_for(mode: str) -> list[Spec]:
    """Correctness tests (not timed). `quick` screens, `full` covers every case, `final` adds more."""
    if mode == "tiny":
        return list(TINY_TESTS)
    if mode == "quick":
        return [Spec(2, 1, 1, "dense"), Spec(3, 17, 1, "dense"), Spec(12, 64, 2, "mixed", force="rankdef"),
                Spec(32, 64, 2, "mixed", force="all"), Spec(32, 96, 2, "mixed", force="all"),
                Spec(4, 100, 0, "clustered"), Spec(2, 351, 2, "rowscale"), Spec(2, 1000, 1, "nearrank")]
    tests = [Spec(2, n, 1, "dense") for n in (1, 2, 17, 100, 300, 351, 400, 1000, 2050)]
    for case in CASES:
        tests += [Spec(4, 32, 2, case), Spec(3, 300, 2, case), Spec(2, 512, 2, case)]
    tests += [Spec(12, 64, 2, "mixed", force=c) for c in ILL]  # every ill case hidden in a mixed batch
    tests += [Spec(32, n, 2, "mixed", force="all") for n in (48, 64, 96, 160)]
    tests += [Spec(1, 4096, 1, "dense"), Spec(1, 2048, 0, "rankdef"), Spec(2, 1024, 0, "clustered")]
    if mode == "final":
        tests += [Spec(16, 176, 2, "mixed", force=c) for c in ILL]
        tests += [Spec(2, 1024, 2, case) for case in CASES]
    return tests


def by_size(specs: tuple[Spec, ...] | list[Spec]) -> dict[tuple[int, int], Spec]:
    """The first spec of each (batch, n), in order: what depends on an input's size and not its case (a call's
    overhead, a kernel's first call) is measured or made once for the four 640x512 cases and the three 60x1024."""
    first: dict[tuple[int, int], Spec] = {}
    for spec in specs:
        first.setdefault((spec.batch, spec.n), spec)
    return first


def benchmarks_for(mode: str) -> tuple[Spec, ...]:
    if mode == "tiny":
        return TINY_BENCHMARK
    if mode == "quick":  # one small, one middle, one large-batch and one large-n shape
        return (BENCHMARK[0], BENCHMARK[2], BENCHMARK[4], BENCHMARK[10])
    return BENCHMARK


def incomplete(result: dict[str, Any], mode: str) -> str:
    """'' when an `ok` verdict covers every test and shape of its mode with checked timings, else what is
    missing. The one statement of the judge's promise: the supervisor believes no `ok` that lacks anything, and
    the engine (which reads this file from the judge's directory, evolver/evaluation/builtin.py) refuses one."""
    tests = result.get("tests")
    if not isinstance(tests, dict) or tests.get("labels") != [s.label for s in tests_for(mode)]:
        return "the verdict does not list every correctness test of the mode as passed"
    shapes = result.get("shapes")
    if not isinstance(shapes, list) or not all(isinstance(s, dict) for s in shapes) or \
            [s.get("shape") for s in shapes] != [b.label for b in benchmarks_for(mode)]:
        return "the verdict does not time every benchmark shape of the mode"
    for s in shapes:
        means = [s.get(k) for k in ("mean_us", "median_us")]
        if not all(isinstance(v, (int, float)) and v > 0 for v in means) or not isinstance(s.get("checked"), int) \
                or not isinstance(s.get("runs"), int) or s["runs"] < 1:
            return f"shape {s['shape']}: timings or checks are missing"
    score = math.exp(sum(math.log(s["mean_us"]) for s in shapes) / len(shapes))
    if not isinstance(result.get("score"), (int, float)) or abs(result["score"] - score) > 1e-3 * score:
        return "the score is not the geometric mean of the shapes' mean times"
    return ""


MODES = ("quick", "full", "final", "tiny")


def go_line(mode: str, profile: bool) -> bytes:
    """What starts a prestarted evaluation in `mode` (read by `take_go`: the engine sends it, the supervisor
    passes it on to the judge)."""
    return f"go {mode}{' profile' if profile else ''}\n".encode()


def take_go(line: str, args: Any) -> None:
    """A prestarted evaluation's go line: `go`, or `go MODE [profile]` for an evaluation in another mode than
    the one the process was started with (a would-be best's confirmation, profiled). Sets args.mode and
    args.profile; an unknown mode leaves them as they were."""
    words = line.split()
    if len(words) > 1 and words[0] == "go" and words[1] in MODES:
        args.mode, args.profile = words[1], "profile" in words[2:]
