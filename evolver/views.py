"""The verbs that read a run and print it: `status`, `show`, `prompt`, `lineage`; and how the command line
names a repository, a run and a candidate (shared with the verbs in cli.py)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evolver.breed import mutation_messages, prompt_context
from evolver.candidates import PROVENANCE_KEYS, Candidate, Snapshot
from evolver.config import Config, ModelSpec, find_config, load_config
from evolver.funnel import funnel
from evolver.funnel import lines as funnel_lines
from evolver.health import HEALTH_REF
from evolver.opening import choose_run, run_base
from evolver.population import ancestry
from evolver.progress import score_of, with_unit
from evolver.reader import candidate_at
from evolver.results import Recorder
from evolver.store import BEST_REF, REPLIES_REF, RUN_REF, Store
from evolver.summary import summarise


def run_name(text: str) -> str:
    """An argparse type: a run name that is one ref component (letters, digits, '.', '_', '-')."""
    import re

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", text) or text.endswith((".", ".lock")):
        raise argparse.ArgumentTypeError(f"{text!r}: a run name is letters, digits, '.', '_' and '-' (no '/')")
    return text


def candidate_args(p: argparse.ArgumentParser, optional: bool = False) -> None:
    """The candidate a verb works on (`best` if left out, where `optional`) and `--run`, its run."""
    if optional:
        p.add_argument("candidate", nargs="?", default="best", help="candidate id or `best` (default)")
    else:
        p.add_argument("candidate", help="candidate id or `best`")
    p.add_argument("--run", metavar="NAME", type=run_name)


class UserError(Exception):
    pass



def open_repo(args: argparse.Namespace) -> tuple[Config, Store]:
    cwd = Path(args.repo).resolve() if getattr(args, "repo", None) else Path.cwd()
    store = Store.discover(cwd)
    config = load_config(find_config(cwd), store.root)
    return config, store


def run_of(args: argparse.Namespace, config: Config, store: Store) -> str:
    """The run a reading verb means: the one named, else this clone's latest, else the latest of any clone (a
    fresh clone shows what `evolve pull` brought)."""
    runs = store.runs(config.problem.kernel_dir)
    run = choose_run(store, config, getattr(args, "run", None), new=False)
    if run not in runs and not getattr(args, "run", None) and not config.run and runs:
        run = runs[-1]
    if run not in runs:
        raise UserError(f"no run {run!r} of the problem in {config.path} (its runs: {', '.join(runs) or 'none yet'}"
                        "); `evolve start` begins one")
    return run


def resolve(snapshot: Snapshot, ref: str) -> Candidate:
    """A candidate of `snapshot` by id (42, 00042, or a branch name ending in it)."""
    key = ref.rsplit("/", 1)[-1]
    if key in snapshot.candidates:
        return snapshot.candidates[key]
    if key.isdigit() and f"{int(key):05d}" in snapshot.candidates:
        return snapshot.candidates[f"{int(key):05d}"]
    raise UserError(f"no candidate {ref!r} in run {snapshot.run!r}")


def target(args: argparse.Namespace, config: Config, store: Store) -> tuple[Snapshot, Candidate]:
    """The candidate the command line names, with its run: an id (in --run or the latest run), `best` with
    --run (that run's own best), or `best` (what the branch `best` holds, in whichever run of this problem)."""
    if args.candidate != "best":
        snapshot = store.snapshot(run_of(args, config, store))
        return snapshot, resolve(snapshot, args.candidate)
    if getattr(args, "run", None):
        snapshot = store.snapshot(run_of(args, config, store))
        mine = run_winner(config, store, snapshot)
        if mine is None:
            raise UserError(f"run {snapshot.run!r} has no correct candidate yet")
        return snapshot, mine
    held = branch_best(store)
    if held is None:
        raise UserError("there is no `best` yet (no candidate has passed its evaluation)")
    if held.run not in store.runs(config.problem.kernel_dir):
        raise UserError(f"`best` holds {held.run}/{held.id}, a candidate of another problem; name this problem's "
                        "run with --run")
    snapshot = store.snapshot(held.run)
    return snapshot, snapshot.candidates.get(held.id, held)


def branch_best(store: Store) -> Candidate | None:
    commit = store.rev_parse(BEST_REF)
    return candidate_at(store, commit) if commit else None


def run_winner(config: Config, store: Store, snapshot: Snapshot) -> Candidate | None:
    """A run's best as the engine decides it (today's judge, this machine's devices, confirmed scores with a
    confirm mode); on a machine without the run's devices, whichever device measured with today's judge."""
    return winner_for(config, store, snapshot.run)(snapshot)


def winner_for(config: Config, store: Store, run: str) -> Callable[[Snapshot], Candidate | None]:
    """`run_winner` for repeated snapshots of one run (the TUI): the judge and devices are found once."""
    recorder = recorder_for(config, store, run)
    return lambda snapshot: recorder(snapshot).best() if recorder is not None else None


def recorder_for(config: Config, store: Store, run: str) -> Callable[[Snapshot], Recorder] | None:
    """The engine's judgement of a run's snapshots (`results.Recorder`: today's judge, this machine's devices,
    confirmed scores with a confirm mode), made without running the engine; None without a usable judge."""
    from evolver.evaluate import EvaluationError, Evaluator, make_slots

    base = run_base(store, run)
    try:
        evaluator = Evaluator(config, store, base)
    except EvaluationError:
        return None
    try:
        devices: set[str] | None = {s.fingerprint for s in make_slots(config)}
    except EvaluationError:
        devices = None
    mode = config.evaluation.confirm_mode
    confirm_version = evaluator.version_for(mode) if mode else ""

    def recorder(snapshot: Snapshot) -> Recorder:
        seen = devices if devices is not None else {r.gpu for c in snapshot.candidates.values()
                                                    for r in c.results if r.gpu}
        return Recorder(store, snapshot, evaluator.version, mode, confirm_version, seen, lambda line: None,
                        min_gain=config.evaluation.min_gain)
    return recorder


def best_lines(run: str, mine: Candidate | None, held: Candidate | None) -> list[str]:
    """What `evolve start` ends with and `evolve status` shows: the run's best and what the branch holds."""
    if mine is not None and held is not None and held.commit == mine.commit:
        return [f"best: {mine.id} score {with_unit(score_of(mine), mine)} (`git checkout best` or "
                "`evolve show best`)"]
    lines = [f"best of run {run}: {mine.id} score {with_unit(score_of(mine), mine)} (`git checkout "
             f"evolve/{run}/{mine.id}`)" if mine is not None else f"no correct candidate in run {run} yet"]
    if held is not None:
        why = ("judged by another judge than today's (an older harness, another mode or device; `evolve start` "
               "judges it again)" if held.run == run else "a better candidate of another run under the same judge")
        lines.append(f"the branch `best` holds {held.run}/{held.id}, score {with_unit(score_of(held), held)}: "
                     f"{why}, or `best` is checked out")
    return lines


def status_data(snapshot: Snapshot, eval_usd: float, best: Candidate | None = None,
                held: Candidate | None = None) -> dict[str, Any]:
    """The run in figures; `best`: the run's best (run_winner), `held`: what the branch `best` holds."""
    from evolver.bandit import observe

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
        "funnel": {arm: f.as_dict() for arm, f in funnel(snapshot.candidates.values(), snapshot.by_commit()).items()},
        "last_activity": max((c.created for c in snapshot.candidates.values()), default=None),
    }


def brief(c: Candidate | None) -> dict[str, Any] | None:
    """A candidate in a JSON summary (`status --json`, `try --json`)."""
    if c is None:
        return None
    return {"run": c.run, "id": c.id, "score": score_of(c), "commit": c.commit, "op": c.op,
            "unit": c.result.details.get("unit") if c.result else None,
            "harness": c.result.harness if c.result else None}


def cmd_status(args: argparse.Namespace) -> int:
    config, store = open_repo(args)
    snapshot = store.snapshot(run_of(args, config, store))
    best, held = run_winner(config, store, snapshot), branch_best(store)
    data = status_data(snapshot, config.evolution.eval_usd, best, held)
    from evolver.evaluate import sandbox_choice
    from evolver.sandbox import sandbox_line

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
    funnels = funnel(snapshot.candidates.values(), snapshot.by_commit())
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


def _describe(c: Candidate) -> list[str]:
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


def cmd_show(args: argparse.Namespace) -> int:
    config, store = open_repo(args)
    _, c = target(args, config, store)
    if args.reply:
        print(replies_text(c, store.note_lines(c.commit, REPLIES_REF)))
        return 0
    print("\n".join(_describe(c)))
    message = store.message(c.commit)
    print("\n" + "\n".join("    " + line for line in message.splitlines()))
    if c.parents:
        print()
        print(store.diff(c.parents[0], c.commit, config.problem.kernel_dir) or "(no change in the kernel directory)")
    return 0


def cmd_prompt(args: argparse.Namespace) -> int:
    from evolver.evaluate import EvaluationError, Evaluator, make_slots
    from evolver.llm import estimate_tokens
    from evolver.results import measured

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
    from evolver.candidates import git_tree_hash

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


def cmd_lineage(args: argparse.Namespace) -> int:
    config, store = open_repo(args)
    snapshot, c = target(args, config, store)
    by_commit = snapshot.by_commit()
    for step in ancestry(c, by_commit, limit=None):
        node = step.candidate
        delta = f"{100 * step.delta:+7.2f}%" if step.delta is not None else ""
        score = f"{node.score:12.6g}" if node.score is not None else f"{node.status:>12}"
        others = [by_commit[p].id for p in node.parents[1:] if p in by_commit]
        merge = f"  (merge with {', '.join(others)})" if others else ""
        what = node.trailers.get("Tune") or node.trailers.get("Seed") or node.subject.split(": ", 1)[-1]
        print(f"{node.id}  {node.op:<6} {score} {delta:>8}  {what[:70]}{merge}")
    return 0
