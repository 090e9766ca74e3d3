"""`evolve status`: a run in figures: counts by status, the best, LLM spend, what each operator and model
produced and at what cost, and the funnel of every reply (evolver/search/funnel.py)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from evolver.commands.common import (
    Verb,
    best_lines,
    branch_best,
    brief,
    open_repo,
    run_name,
    run_of,
    run_winner,
)
from evolver.evaluation.health import HEALTH_REF
from evolver.records.candidates import Candidate, Snapshot
from evolver.records.config import Config
from evolver.records.refs import RUN_REF
from evolver.records.store import Store
from evolver.search.funnel import Funnel, funnel
from evolver.search.funnel import lines as funnel_lines
from evolver.search.summary import summarise


def status_data(snapshot: Snapshot, eval_usd: float, funnels: dict[str, Funnel], best: Candidate | None = None,
                held: Candidate | None = None) -> dict[str, Any]:
    """The run in figures; `funnels`: each arm's (search/funnel.py), `best`: the run's best (run_winner),
    `held`: what the branch `best` holds."""
    from evolver.search.bandit import observe

    header, _, outcomes = summarise(snapshot)
    arms = {arm: {"tried": s.tries, "improved": s.improved, "mean_gain": round(s.gain / s.improved, 4)
                  if s.improved else None, "cost_usd": round(s.cost, 4)}
            for arm, s in sorted(observe(snapshot.candidates.values(), eval_usd).items())}
    return {
        "run": snapshot.run,
        "candidates": len(snapshot.candidates),
        "statuses": dict(sorted(outcomes.items())),
        "best": brief(best),
        "best_branch": brief(held),
        "speedup_vs_first_seed": header.speedup_vs_seed,
        "llm_tokens": header.tokens,
        "llm_cost_usd": round(header.cost_usd, 6),
        "malformed_note_lines": snapshot.malformed_notes,
        "operators": arms,  # what each (operator, model) produced: the bandit's view of the run
        "funnel": {arm: f.as_dict() for arm, f in funnels.items()},
        "last_activity": max((c.created for c in snapshot.candidates.values()), default=None),
    }

def cmd_status(args: argparse.Namespace) -> int:
    config, store = open_repo(args)
    snapshot = store.snapshot(run_of(args, config, store))
    best, held = run_winner(config, store, snapshot), branch_best(store)
    funnels = funnel(snapshot.candidates.values(), snapshot.by_commit(), config.evaluation.min_gain)
    data = status_data(snapshot, config.evolution.eval_usd, funnels, best, held)
    from evolver.evaluation.command import sandbox_choice
    from evolver.evaluation.sandbox import sandbox_line

    data["sandbox"] = "on" if sandbox_choice(config) else "off"
    data["other_runs"] = other_runs(config, store, snapshot.run)
    data["out_of_rotation"] = (store.get_meta(HEALTH_REF.format(run=snapshot.run)) or {}).get("retired", [])
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"run {data['run']}: {data['candidates']} candidates")
    print("  " + sandbox_line(data["sandbox"] == "on", config.evaluation.network))
    print("  " + ", ".join(f"{k} {v}" for k, v in data["statuses"].items()))
    for line in best_lines(snapshot.run, best, held):
        print("  " + line)
    if best is not None and data["speedup_vs_first_seed"]:
        print(f"  ({best.op}; lower is better: {data['speedup_vs_first_seed']:.2f}x the first seed)")
    print(f"  LLM: {data['llm_tokens']} tokens, ${data['llm_cost_usd']:.4f}")
    eval_usd = config.evolution.eval_usd
    set_by_user = "eval_usd" in (config.raw.get("evolution") or {})
    for arm, a in data["operators"].items():
        gain = f" by {100 * a['mean_gain']:.1f}% on average" if a["mean_gain"] else ""
        print(f"  {arm}: {a['tried']} tried, {a['improved']} beat their parent{gain}; ${a['cost_usd']:.4f} "
              "(LLM and evaluations)")
    if funnels:
        print("  what became of each child (`evolve show ID --reply`: every reply and why it failed):")
        for line in funnel_lines(funnels):
            print("    " + line)
    if data["operators"]:
        print(f"  (each evaluation is valued at ${eval_usd:g}"
              + (", [evolution] eval_usd)" if set_by_user else ": an assumption, set [evolution] eval_usd to your "
                 "GPU's cost; it only weighs the operators against each other)"))
    if data["malformed_note_lines"]:
        print(f"  warning: {data['malformed_note_lines']} malformed line(s) in refs/notes/evolve were skipped")
    for gone in data["out_of_rotation"]:
        print(f"  GPU {gone.get('gpu')} ({gone.get('device')}) out of rotation: {gone.get('error')}")
    for other in data["other_runs"]:
        print(f"  also run {other['run']}: {other['candidates']} candidates (clone {other['clone']}; --run to see it)")
    return 0

def other_runs(config: Config, store: Store, run: str) -> list[dict[str, Any]]:
    """The problem's other runs (this clone's earlier ones, and those pulled from others: `evolve pull`)."""
    out = []
    for other in store.runs(config.problem.kernel_dir):
        if other != run:
            count = sum(1 for ref in store.ref_listing(other) if ref.startswith(f"refs/heads/evolve/{other}/"))
            clone = (store.get_meta(RUN_REF.format(run=other)) or {}).get("clone") or "this one"
            out.append({"run": other, "candidates": count, "clone": clone})
    return out


def add_verb(verb: Verb) -> None:
    p = verb("status", "summarise a run", "Counts by status, the best candidate, LLM tokens and cost.")
    p.add_argument("--run", metavar="NAME", type=run_name)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_status)
