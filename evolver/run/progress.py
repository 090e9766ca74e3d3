"""What `evolve start` prints while it runs: a line per result (scores with their unit; lower is better),
and every few results a line with the elapsed time, the rate, the budget left and the ETA of the limit
that will stop the run first. Pure: the engine passes what it knows."""

from __future__ import annotations

from dataclasses import dataclass, field

from evolver.records.candidates import Candidate, score_of, with_unit

STATUS_EVERY = 10  # results between budget lines
# The rate of the last RECENT results beside the session's: a run's first results pay one-off costs (the seed's
# compiles and confirmation: 446 an hour over the first ten on the H200 against 949 after, docs/benchmarks.md), so
# once there are more, the ETA comes from them.
RECENT = 10


@dataclass(frozen=True)
class Budget:
    max_candidates: int | None = None
    max_usd: float | None = None
    max_hours: float | None = None


@dataclass
class RunSummary:
    """What a run did, for the line `evolve start` ends with."""
    run: str
    created: int = 0
    evaluated: int = 0
    best: Candidate | None = None
    reason: str = ""
    llm_cost_usd: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    failed: bool = False  # stopped because no device was left to judge on


def duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def best_label(best: Candidate | None, confirm_mode: str) -> str:
    """The best by the score that made it best (with a confirm mode, only confirmed candidates are best)."""
    if best is None or score_of(best) is None:
        return "no best yet"
    how = f", {confirm_mode}" if confirm_mode and best.confirmation is not None else ""
    return f"best {with_unit(score_of(best), best)} ({best.id}{how})"


def result_line(c: Candidate, best: Candidate | None, done: int, total: int | None, confirm_mode: str) -> str:
    r = c.result
    confirmed = c.confirmation
    if confirmed is not None and confirmed is c.results[-1]:
        return (f"{'':6} {c.id} confirm {confirmed.status:<13}{with_unit(confirmed.score, c):>12}  "
                f"({confirm_mode} mode; first measured {with_unit(c.score, c)})")
    count = f"[{done:>4}{'/' + str(total) if total else ''}]"
    best_text = best_label(best, confirm_mode)
    what = c.trailers.get("Tune") or c.subject.split(": ", 1)[-1]
    error = f"  {r.error.splitlines()[0][:60]}" if r and r.error and c.score is None else ""
    again = sum(1 for x in c.results if x.status and not x.confirm) > 1  # a resumed run's, under a new judge
    tag = " (judged again)" if again else " (cached)" if r and r.cached_from else ""
    return f"{count} {c.id} {c.op:<6} {c.status:<13}{with_unit(c.score, c):>12}{tag}  {best_text}  {what[:48]}{error}"


def rate_text(per_hour: float) -> str:
    return f"{per_hour / 60:.1f}/min" if per_hour >= 600 else f"{per_hour:.1f}/h"


def budget_line(budget: Budget, elapsed_s: float, results: int, done: int, spent_usd: float,
                spent_at_start: float, recent: tuple[int, float] | None = None) -> str:
    """Elapsed, this session's rate of results, what is left of each limit and when the first one ends the
    run. `results`: this session's results; `done`: the run's candidates with a result; `recent`: (results,
    seconds) of the last RECENT, whose rate then gives the ETA."""
    hours = elapsed_s / 3600
    rate = results / hours if hours > 0 else 0.0
    rates = rate_text(rate)
    if recent is not None and recent[1] > 0:
        rate = recent[0] * 3600 / recent[1]
        rates += f"; the last {recent[0]}: {rate_text(rate)}"
    parts = [f"{results} results in {duration(elapsed_s)} ({rates})"]
    etas: list[tuple[float, str]] = []
    if budget.max_candidates is not None:
        left = max(0, budget.max_candidates - done)
        parts.append(f"{left} of {budget.max_candidates} candidates left")
        if rate > 0:
            etas.append((left / rate * 3600, "max_candidates"))
    if budget.max_usd is not None:
        left_usd = max(0.0, budget.max_usd - spent_usd)
        parts.append(f"${left_usd:.2f} of ${budget.max_usd:g} left")
        usd_rate = (spent_usd - spent_at_start) / hours if hours > 0 else 0.0
        if usd_rate > 0:
            etas.append((left_usd / usd_rate * 3600, "max_usd"))
    if budget.max_hours is not None:
        left_s = max(0.0, budget.max_hours * 3600 - elapsed_s)
        parts.append(f"{duration(left_s)} of {budget.max_hours:g} h left")
        etas.append((left_s, "max_hours"))
    if etas:
        eta, limit = min(etas)
        parts.append(f"ETA {duration(eta)} ({limit})")
    elif budget == Budget():
        parts.append("no budget: until Ctrl-C")
    return "  -- " + "; ".join(parts)
