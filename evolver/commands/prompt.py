"""`evolve prompt`: the messages a mutation of a candidate would send (before any run: of the first seed), their
size against the prompt's budget and their price."""

from __future__ import annotations

import argparse

from evolver.commands.common import (
    UserError,
    Verb,
    open_repo,
    run_name,
    run_of,
    run_winner,
    target,
)
from evolver.records.candidates import Candidate, Snapshot
from evolver.records.config import Config, ModelSpec
from evolver.records.runs import run_base
from evolver.records.store import Store
from evolver.search.breed import mutation_messages, prompt_context


def cmd_prompt(args: argparse.Namespace) -> int:
    from evolver.evaluation.evaluate import Evaluator, make_slots
    from evolver.evaluation.slots import EvaluationError
    from evolver.records.results import measured
    from evolver.search.llm import estimate_tokens

    config, store = open_repo(args)
    if args.candidate is None and not store.runs(config.problem.kernel_dir):
        snapshot, parent, base = first_seed(config, store)  # before any run: what its first mutation sends
    else:
        snapshot, parent = target(args, config, store) if args.candidate else target_latest(args, config, store)
        base = run_base(store, snapshot.run)
    # the engine's parent pool: results of today's judge on this machine's devices
    try:
        version, fingerprints = Evaluator(config, store, base).version, {s.fingerprint for s in make_slots(config)}
    except EvaluationError:  # a GPU problem looked at on a machine without one: the prompt is the same
        version, fingerprints = "", set()
    pool = [c for c in snapshot.candidates.values() if measured(c, version, fingerprints)]
    messages = mutation_messages(config, parent, prompt_context(store, config, snapshot, base, parent, pool))
    for message in messages:
        print(f"===== {message['role']} =====\n{message['content']}\n")
    print(prompt_size(config, sum(estimate_tokens(m["content"]) for m in messages)))
    return 0

def prompt_size(config: Config, used: int) -> str:
    """The prompt's size against its budget, and what one request costs at each configured model's prices."""
    llm = config.llm
    budget = llm.context_tokens - llm.max_tokens
    line = (f"===== about {used} tokens ({100 * used / budget:.0f}% of the prompt budget of {budget}: "
            f"llm.context_tokens {llm.context_tokens} - llm.max_tokens {llm.max_tokens})")
    raw = config.raw.get("llm") or {}
    models = llm.models or (ModelSpec("the model", 1.0, float(raw.get("input_usd_per_mtok") or 0),
                                      float(raw.get("output_usd_per_mtok") or 0)),)
    prices = [f"{m.name} ${used * m.input_usd_per_mtok / 1e6:.4f} in + up to "
              f"${llm.max_tokens * m.output_usd_per_mtok / 1e6:.4f} out" for m in models
              if m.input_usd_per_mtok or m.output_usd_per_mtok]
    if prices:
        return line + "\n===== a request costs " + "; ".join(prices)
    return line + "\n===== price: no [llm] prices configured (input_usd_per_mtok, output_usd_per_mtok)"

def first_seed(config: Config, store: Store) -> tuple[Snapshot, Candidate, str]:
    """The parent of a run's first mutation, before the run exists: the first seed as committed at HEAD."""
    from evolver.records.candidates import git_tree_hash

    base = store.head_commit()
    seed = config.problem.seeds[0]
    files = store.read_files(base, seed)
    if not files:
        raise UserError(f"seed directory {seed!r} is not in the commit HEAD ({base[:10]}); commit it first")
    tree = git_tree_hash(files)
    commit = store.write_candidate([base], base, config.problem.kernel_dir, files,
                                   f"evolve prompt: the first seed {seed}\n")  # an unreachable commit, no ref
    parent = Candidate(run="-", id="seed", commit=commit, parents=(base,), created=0, subject=f"seed {seed}",
                       trailers={"Op": "seed", "Kernel-Tree": tree})
    return Snapshot("-", {"seed": parent}), parent, base

def target_latest(args: argparse.Namespace, config: Config, store: Store) -> tuple[Snapshot, Candidate]:
    """With no candidate named: the best of the latest run, else its newest candidate."""
    snapshot = store.snapshot(run_of(args, config, store))
    chosen = run_winner(config, store, snapshot) or max(snapshot.candidates.values(), key=lambda c: c.id, default=None)
    if chosen is None:
        raise UserError(f"run {snapshot.run!r} has no candidate yet")
    return snapshot, chosen


def add_verb(verb: Verb) -> None:
    p = verb("prompt", "the prompt a mutation of a candidate would send, its size and price",
             "Print the messages that `mutate` would send to the LLM with this candidate as the parent (guidance, "
             "its source, its result and where its time goes, its lineage, ideas from other islands), fitted to "
             "the configured context budget (the coldest files outlined when the source does not fit), then "
             "their estimated size and what one request costs at the configured prices. Before any run, the "
             "parent is the first seed: see and price what a run will send before spending on it.")
    p.add_argument("candidate", nargs="?", help="candidate id or `best` (default: the latest run's best; before any "
                   "run, the first seed)")
    p.add_argument("--run", metavar="NAME", type=run_name)
    p.set_defaults(func=cmd_prompt)
