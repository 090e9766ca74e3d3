"""A candidate in words, as `evolve show` prints it and the TUI's panes show it: its identity and provenance,
its result, and what the LLM answered, attempt by attempt, with why an answer was not applied. Pure."""

from __future__ import annotations

import json
from typing import Any

from evolver.records.candidates import PROVENANCE_KEYS, Candidate


def describe(c: Candidate) -> list[str]:
    r = c.result
    lines = [f"candidate {c.run}/{c.id}  commit {c.commit[:12]}  branch evolve/{c.run}/{c.id}",
             f"  op {c.op}  parents {', '.join(c.parent_ids) or c.trailers.get('Seed', '-')}  island {c.island}"]
    for key in PROVENANCE_KEYS:
        if key in c.trailers:
            lines.append(f"  {key.lower()}: {c.trailers[key]}")
    if r is None:
        lines.append("  result: not evaluated yet")
    else:
        score = f" score {r.score:.6g}" if r.score is not None else ""
        lines.append(f"  result: {r.status}{score}  (evaluator {r.harness}, {r.gpu})")
        confirmed = c.confirmation
        if confirmed is not None:
            value = f" score {confirmed.score:.6g}" if confirmed.score is not None else ""
            lines.append(f"  confirmed: {confirmed.status}{value}  (evaluator {confirmed.harness})")
        if r.cached_from:
            lines.append(f"  result copied from {r.cached_from} (same kernel, same evaluator and device)")
        if r.error:
            lines.append("  error: " + r.error.replace("\n", "\n    "))
        flags = r.details.get("flags")  # the judge's warnings about a score (timed under MPS, below a floor)
        if isinstance(flags, list) and flags:
            lines.extend("  flag: " + str(flag)[:300] for flag in flags[:10])
        if r.details:
            lines.append("  details: " + json.dumps(r.details, sort_keys=True)[:1500])
    return lines

def replies_text(c: Candidate, replies: list[dict[str, Any]]) -> str:
    """What the LLM answered for `c`, attempt by attempt, and what became of each answer."""
    if not replies:
        made_by = "no LLM made it" if c.op in ("seed", "tune") or c.trailers.get("Merge") == "clean" else \
            "no reply was kept (an LLM error before any answer, or a run older than kept replies)"
        return f"{c.id}: {made_by}"
    out = []
    for r in replies:
        fate = f"not applied: {r['error']}" if r.get("error") else "applied"
        cut = " (cut at max_tokens)" if r.get("truncated") else ""
        out.append(f"===== {c.id} attempt {r.get('attempt', '?')}, {r.get('model', '?')}{cut}: {fate} =====\n"
                   f"{r.get('reply', '')}\n")
    return "\n".join(out)
