"""`evolve try [DIR | --ref REF] [--set NAME=VALUE]`: judge a kernel directory of the working tree (or of a git ref,
with tunables set by hand in a copy) exactly as a candidate would be judged (the run's evaluator, in the sandbox, a
fresh secret seed, the same timeout) and print what an agent or a person needs for the next step: the verdict, the
score against a reference candidate, the per-shape change, the failing gate, the compiler's report. Writes nothing
to git; exit code 0 only for a correct result.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from evolver.commands.common import (UserError, Verb, branch_best, brief, files_of_directory, open_repo, ref_files,
                                     resolve, run_name, set_arg, with_settings)
from evolver.evaluation.evaluate import Evaluator, make_slots
from evolver.records.candidates import Candidate, Result
from evolver.records.config import Config
from evolver.records.runs import run_base
from evolver.records.store import Store


def cmd_try(args: argparse.Namespace) -> int:
    config, store = open_repo(args)
    if args.ref and args.dir:
        raise UserError(f"{args.dir} or --ref {args.ref}: one kernel to judge, not two")
    directory = Path(args.dir).resolve() if args.dir else config.root / config.problem.kernel_dir
    if not args.ref and not directory.is_dir():
        raise UserError(f"{directory}: no such directory (the kernel to judge)")
    runs = store.runs(config.problem.kernel_dir)
    run = args.run or (runs[-1] if runs else None)
    mode = args.mode or config.evaluation.mode
    raw = _judged(config, store, run, directory, mode, args)
    result = Result.of(raw)
    reference = _reference(args, config, store, run)
    if args.json:
        same = in_mode(reference, mode, result.harness)
        against = brief(reference)
        if against is not None:  # its score in this mode by this judge, else none: a mode's scores do not compare
            against.update(score=same.score if same else None, mode=mode if same else None)
        print(json.dumps({**raw, "reference": against}, default=str))
    else:
        print("\n".join(report(result, reference, mode, raw.get("duration_s"))))
    return 0 if result.status == "ok" else 1


def _judged(config: Config, store: Store, run: str | None, directory: Path, mode: str,
            args: argparse.Namespace) -> dict[str, Any]:
    """The directory judged as it is, or a copy of it or of `--ref`'s kernel directory with `--set`'s tunables set
    (the working tree left as it is)."""
    if not args.settings and not args.ref:
        return judge_directory(config, store, run, directory, mode)
    files, changes = with_settings(ref_files(config, store, args.ref) if args.ref else files_of_directory(directory),
                                   args.settings)
    if changes:
        print("with " + "; ".join(changes), file=sys.stderr, flush=True)
    shown = f"{args.ref}'s {config.problem.kernel_dir}/" if args.ref else str(directory)
    shown += f" with {', '.join(args.settings)}" if args.settings else ""
    with tempfile.TemporaryDirectory(prefix="evolve-try-") as tmp:
        copy = Path(tmp) / Path(config.problem.kernel_dir).name
        for path, data in files.items():
            (copy / path).parent.mkdir(parents=True, exist_ok=True)
            (copy / path).write_bytes(data)
        return {**judge_directory(config, store, run, copy, mode, shown + " (a copy)"), "settings": changes}


def judge_directory(config: Config, store: Store, run: str | None, directory: Path, mode: str,
                    shown: str | None = None) -> dict[str, Any]:
    """One evaluation of a kernel directory by `run`'s judge, as a candidate's (nothing written to git); what
    is judged (`shown`, else the directory) is said at once on stderr, and the evaluator's own output follows
    there as it comes."""
    evaluator = Evaluator(config, store, run_base(store, run), purpose="try")
    slots = make_slots(config)
    evaluator.check_runnable(slots)
    evaluator.check_mode(mode, "--mode")
    where = "in the sandbox" if evaluator.sandboxed else "outside a sandbox"
    print(f"judging {shown or directory} in {mode} mode, {where} (timeout {config.evaluation.timeout_s:g} s); the "
          "evaluator's own output follows on stderr", file=sys.stderr, flush=True)
    evaluator.echo = _echo
    return asyncio.run(_judge(evaluator, directory, slots[0], mode))


def _echo(chunk: bytes) -> None:
    sys.stderr.buffer.write(chunk)
    sys.stderr.flush()


async def _judge(evaluator: Evaluator, directory: Path, slot: Any, mode: str) -> dict[str, Any]:
    try:
        return await evaluator.evaluate(directory, slot, mode)
    finally:
        await evaluator.close()


def _reference(args: argparse.Namespace, config: Any, store: Any, run: str | None) -> Candidate | None:
    """The candidate to compare with: `--against ID` in the run, else what `best` holds (if of this problem)."""
    if args.against and args.against != "best":
        if run is None:
            raise UserError("no run of this problem yet to compare with")
        return resolve(store.snapshot(run), args.against)
    held = branch_best(store)
    return held if held is not None and held.run in store.runs(config.problem.kernel_dir) else None


def in_mode(reference: Candidate | None, mode: str, harness: str | None) -> Result | None:
    """The reference's result measured by this judge in this mode: its confirmation (`final`, say) or its first
    measurement. A `full` try against `best`'s confirmed `final` score would credit the try with the modes'
    difference (0.1-0.9% on the H200: a step of the climb once looked 0.6% faster than `best`, and was 0.3% slower
    than best's own `full` score)."""
    if reference is None:
        return None
    confirmed, first = reference.confirmation, reference.result
    if confirmed is not None and confirmed.harness == harness and confirmed.details.get("mode") == mode:
        return confirmed
    if first is not None and first.harness == harness and first.details.get("mode", mode) == mode:
        return first  # (a judge that names no mode has one)
    return None


def report(result: Result, reference: Candidate | None, mode: str, duration: Any) -> list[str]:
    """The verdict, the comparison with the reference (only its result by the same judge in the same mode), the
    shapes."""
    took = f", {duration:.1f} s" if isinstance(duration, (int, float)) else ""
    score = f" {result.score:.6g}{_unit(result)}" if result.score is not None else ""
    lines = [f"{result.status}{score} ({mode} mode{took})"]
    same = in_mode(reference, mode, result.harness)
    if reference is not None and reference.result is not None:
        if same is not None and result.score and same.score:
            lines.append(f"against {reference.run}/{reference.id} in {mode} mode: {same.score:.6g}{_unit(same)} -> "
                         f"{same.score / result.score:.3f}x (above 1: this one is faster)")
        elif same is None:
            lines.append(f"against {reference.run}/{reference.id}: measured by another judge or mode, not compared")
    lines += _shapes(result, same)
    if result.status != "ok":
        lines.append(f"why: {result.error or '(no message)'}")
        log = str(result.line.get("log", "")).strip()
        if log:
            lines.append("log (tail):\n" + "\n".join("  " + line for line in log.splitlines()[-15:]))
    compile_info = result.details.get("compile")
    if compile_info:
        lines.append("compiler: " + json.dumps(compile_info, sort_keys=True)[:600])
    return lines


def _unit(r: Result) -> str:
    unit = r.details.get("unit")
    return f" {unit}" if isinstance(unit, str) and unit and r.score is not None else ""


def _shapes(result: Result, reference: Result | None) -> list[str]:
    shapes = result.details.get("shapes")
    if not isinstance(shapes, list) or not shapes:
        return []
    theirs = {s.get("shape"): s.get("mean_us") for s in (reference.details.get("shapes") or [])} if reference else {}
    lines = [f"  {'shape':<28} {'mean us':>12} {'reference':>12} {'change':>8}"]
    for s in shapes:
        if not isinstance(s, dict):
            continue
        mine, ref = s.get("mean_us"), theirs.get(s.get("shape"))
        change = f"{100 * (mine - ref) / ref:+7.1f}%" if isinstance(mine, (int, float)) and \
            isinstance(ref, (int, float)) and ref else ""
        ref_text = f"{ref:12.1f}" if isinstance(ref, (int, float)) else f"{'':>12}"
        lines.append(f"  {str(s.get('shape', '?')):<28} {mine if not isinstance(mine, float) else round(mine, 1):>12} "
                     f"{ref_text} {change:>8}")
    return lines


def add_verb(verb: Verb) -> None:
    p = verb("try", "judge a kernel directory as a candidate would be (for agents and people)",
             "Judge a kernel directory of the working tree (or of a git ref, --ref) exactly as a candidate is judged "
             "(the run's evaluator, "
             "in the sandbox, a fresh secret seed, the same timeout) and print the verdict, the score against "
             "`best` (or --against ID), the per-shape change, the failing gate and the compiler's report. Writes "
             "nothing to git. Exit code 0 only for a correct result, so an agent can loop on it.")
    p.add_argument("dir", nargs="?", help="the kernel directory (default: the problem's kernel_dir)")
    p.add_argument("--ref", metavar="REF", help="judge the kernel directory of this git ref instead (`best`, a "
                   "candidate's branch, any commit), without a checkout")
    p.add_argument("--mode", metavar="MODE", help="the evaluation mode (default: [evaluation] mode)")
    p.add_argument("--against", metavar="ID", default="best", help="the candidate to compare with (default: best)")
    set_arg(p)
    p.add_argument("--run", metavar="NAME", type=run_name, help="the run whose judge and candidates to use")
    p.add_argument("--json", action="store_true", help="the result as one JSON object")
    p.set_defaults(func=cmd_try)
