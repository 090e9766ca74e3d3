"""Where a run's time went, per candidate and per stage, from what its results recorded in git:

    python bench/run_stages.py [REPO] [--run NAME] [--busy FILE]

For each evaluation the engine's stages before it (`engine`: propose_s, the LLM's reply or tune's move;
commit_s, the candidate's commit and branch; queued_s, the wait for a slot), the engine's own duration of it
(`duration_s`: materialising the candidate, the sandbox, the judge's processes and their start-up, the
evaluation, the result read back) and the judge's stages (`details.timings`:
prestarted_s, the judge and runner importing torch before the go line, off the critical path; cuda_start_s (from
the go line: the scan, a wait for the lock, the CUDA contexts), of which contexts_s the contexts;
setup_*_s, the parts of the testing runner's set-up (torch's compiler where imported, cuBLAS, the buffers, the
timer, guard and snapshots; the timed runner's compiler import, timed_setup_compiler_s, beside the tests);
import_kernel_s, the candidate's import with its NVRTC compiles (timed_import_s: its import again in the timed runner,
on a shared GPU); calibrate_s; tests_s; bench_s, of which
bench_inputs_s the judge making inputs, bench_prime_s the prime calls, bench_runner_s the runner until its `done`
line (timed_kernel_s, the candidate's own timed calls, within it) and bench_tail_s from `done` to its reply,
and across those bench_warmup_s, each shape's untimed first call whole; profile_s; after_verdict_s) and, between consecutive results,
the wall time of the whole loop (what a candidate costs, proposal and git included). Means per mode, then the
rate; where evaluations share a GPU, how much of the run their timed chains took (`timed_chains`). The first
figures for issue "a thousand candidates an hour" come from here.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evolver.records.refs import RUN_REF  # noqa: E402
from evolver.records.store import Store  # noqa: E402

ENGINE = ("propose_s", "commit_s", "queued_s")  # the proposal (LLM or tune), its commit, the wait for a slot
STAGES = ("prestarted_s", "lock_wait_s", "cuda_start_s", "contexts_s", "setup_compiler_s", "setup_cublas_s", "setup_arena_s",
          "setup_timer_s", "setup_guard_s", "timed_setup_compiler_s", "import_kernel_s", "timed_import_s", "calibrate_s", "tests_s",
          "warm_up_s", "bench_s", "bench_inputs_s", "bench_prime_s", "bench_runner_s", "bench_tail_s", "bench_warmup_s",
          "timed_kernel_s", "deferred_checks_s", "profile_s", "after_verdict_s", "wall_s", "shared_s", "relaxed_s",
          "exclusive_s")


def lock_spans(gpu_lock: Any) -> dict[str, float]:
    """Where evaluations share the GPU (`per_gpu` > 1): the seconds this one held its lock shared, relaxed and
    exclusive (the exclusive hold is what the GPU's rate is bound by: nothing else runs on it meanwhile)."""
    spans: dict[str, float] = {}
    for how, began, ended in (gpu_lock or {}).get("held", []):
        spans[f"{how}_s"] = spans.get(f"{how}_s", 0.0) + float(ended) - float(began)
    return spans


def holds(results: list[tuple[Any, Any]]) -> list[tuple[Any, Any, list[tuple[str, float, float]]]]:
    """Each shared-GPU evaluation (result, candidate) with its holds of the lock (how, from, to) on the wall clock
    (the judge's record's `wall`), so that different evaluations' holds compare."""
    out = []
    for r, c in results:
        lock = r.details.get("gpu_lock") or {}
        wall = lock.get("wall")
        if isinstance(wall, (int, float)) and lock.get("held"):
            out.append((r, c, [(str(how), float(a) + wall, float(b) + wall) for how, a, b in lock["held"]]))
    return out


def busy_by_hold(busy: list[tuple[float, float]], results: list[tuple[Any, Any]]) -> dict[str, list[float]]:
    """The GPU's busy samples (wall time, percent) by what held its lock at the time: an evaluation exclusively,
    one relaxed (its timed runner warming up, others' untimed work beside it), only shared holds, or none."""
    spans: dict[str, list[tuple[float, float]]] = {"exclusive": [], "relaxed": [], "shared": []}
    for _, _, held in holds(results):
        for how, began, ended in held:
            if how in spans:
                spans[how].append((began, ended))
    by: dict[str, list[float]] = {k: [] for k in (*spans, "none")}
    for t, percent in busy:
        how = next((k for k, held in spans.items() if any(a <= t < b for a, b in held)), "none")
        by[how].append(percent)
    return by


def chain(held: list[tuple[str, float, float]]) -> tuple[float, float] | None:
    """An evaluation's timed chain: its first exclusive hold's start to its last's end (relaxed between), if any."""
    timed = [(a, b) for how, a, b in held if how in ("exclusive", "relaxed")]
    return (timed[0][0], timed[-1][1]) if timed else None


def timed_chains(results: list[tuple[Any, Any]]) -> str:
    """How much of a shared run the timed chains took (an evaluation's first exclusive hold to its last, relaxed
    between: no other evaluation can be timed meanwhile, so these follow one another), and how long an evaluation
    waited between the end of its tests (its first shared hold) and its chain. A chain's share well under 100%
    with long waits says the writers wait for something else: the readers' tests (run52, run53)."""
    chains, waits = [], []
    for _, _, held in holds(results):
        span = chain(held)
        if span is None:
            continue
        chains.append(span)
        if held[0][0] == "shared":
            waits.append(span[0] - held[0][2])
    if len(chains) < 2:
        return ""
    covered, end = 0.0, -math.inf
    for a, b in sorted(chains):
        covered += max(0.0, b - max(a, end))
        end = max(end, b)
    span = max(b for _, b in chains) - min(a for a, _ in chains)
    return (f"timed chains: {len(chains)}, mean {statistics.fmean(b - a for a, b in chains):.2f} s, covering "
            f"{covered:.0f} of the {span:.0f} s from the first to the last ({100 * covered / span:.0f}%); from the end "
            f"of its tests to its chain an evaluation waited {statistics.fmean(waits or [0.0]):.2f} s on average")


STATES = ("exclusive", "relaxed", "shared by one", "shared by two", "shared by three or more", "free")


def lock_states(held: list[tuple[str, float, float]], began: float | None = None,
                ended: float | None = None) -> dict[str, float]:
    """The seconds the GPU's lock spent each way over [began, ended] (by default the first hold to the last), from
    every holder's holds (how, from, to): held exclusively, relaxed, shared by one, by two, by three or more, free."""
    edges = sorted(((when, step, how) for how, a, b in held for when, step in ((a, 1), (b, -1))),
                   key=lambda e: (e[0], e[1]))  # an end before a start at the same instant
    if not edges:
        return {}
    began = edges[0][0] if began is None else began
    ended = edges[-1][0] if ended is None else ended
    active = {"exclusive": 0, "relaxed": 0, "shared": 0}
    spent: dict[str, float] = {}
    last = began
    for when, step, how in [*edges, (ended, 0, "")]:
        when = min(max(when, began), ended)
        if active["exclusive"]:
            state = "exclusive"
        elif active["relaxed"]:
            state = "relaxed"
        else:
            state = {0: "free", 1: "shared by one", 2: "shared by two"}.get(active["shared"], "shared by three or more")
        spent[state] = spent.get(state, 0.0) + when - last
        last = when
        if how in active:
            active[how] += step
    return {state: s for state, s in spent.items() if s > 0}


def occupancy(results: list[tuple[Any, Any]]) -> str:
    """What the GPU's lock was doing from the first hold to the last, as shares of that span: held exclusively, relaxed,
    shared by one evaluation, by two, by three or more, or by none. Shared holds overlap one another and nothing
    overlaps an exclusive one, so a candidate costs about its chain (exclusive and relaxed) plus its shared hold
    divided by how many share at once: the bound on a run's rate that `per_gpu` moves (run57: exclusive 35%,
    relaxed 12%, shared by one 20%, by two 33%)."""
    spent = lock_states([span for _, _, held in holds(results) for span in held])
    span = sum(spent.values())
    if span <= 0:
        return ""
    return (f"the GPU's lock over the {span:.0f} s from the first hold to the last: "
            + ", ".join(f"{state} {100 * spent[state] / span:.0f}%" for state in STATES if state in spent))


def rate_model(results: list[tuple[Any, Any]]) -> str:
    """What sharing the GPU by two, three or four would give, from this run's children: a candidate costs about its
    chain (first exclusive hold to last) plus its shared holds over how many share at once (`occupancy`), if more
    at once did not lengthen them (run57: 1,233 an hour modelled for two, 1,138 measured past the first ten)."""
    chains, shared = [], []
    for r, c, held in holds(results):
        span = chain(held)
        if r.confirm or getattr(c, "op", "") == "seed" or span is None:
            continue
        chains.append(span[1] - span[0])
        shared.append(sum(b - a for how, a, b in held if how == "shared"))
    if len(chains) < 2:
        return ""
    timed, hold = statistics.fmean(chains), statistics.fmean(shared)
    rates = ", ".join(f"{3600 / (timed + hold / k):,.0f} by {word}" for k, word in ((2, "two"), (3, "three"), (4, "four")))
    return (f"modelled from its {len(chains)} children (chain {timed:.2f} s, shared holds {hold:.2f} s): an hour, "
            f"{rates} sharing the GPU, if sharing did not lengthen the holds")


def slow_sessions(results: list[tuple[Any, Any]], most: int = 5) -> list[str]:
    """Where evaluations share a GPU: each one's first shared hold (its candidate's import and tests, which a
    writer waiting at the gate waits out), the median and the slowest, with what each candidate changed (run53: a
    `tune` move that recompiles two to four NVRTC modules held it 14-18 s)."""
    rows = [(held[0][2] - held[0][1], c, r.details.get("timings") or {}) for r, c, held in holds(results)
            if not r.confirm and held[0][0] == "shared"]
    if len(rows) < 2:
        return []
    rows.sort(key=lambda e: -e[0])
    lines = [f"test sessions (the first shared hold): {len(rows)}, median {statistics.median(e[0] for e in rows):.2f} s, "
             f"mean {statistics.fmean(e[0] for e in rows):.2f} s; the slowest:"]
    for length, c, t in rows[:most]:
        lines.append(f"  {c.id} {length:6.2f} s (import {t.get('import_kernel_s', '?')}, tests {t.get('tests_s', '?')}): "
                     f"{c.subject[:70]}")
    return lines


def read_busy(path: Path) -> list[tuple[float, float]]:
    """nvidia-smi's `--query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits` lines as (unix time,
    percent); the timestamp is the machine's local time, as the judge's wall clock reads it there."""
    samples = []
    for line in path.read_text().splitlines():
        stamp, _, percent = line.partition(",")
        try:
            t = datetime.strptime(stamp.strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
            samples.append((t, float(percent)))
        except ValueError:
            continue
    return samples


def start_timeline(store: Store, run: str, results: list[tuple[Any, Any]], events: int = 12) -> None:
    """The run's first results and confirmations in the order written, in seconds since the run was made (its
    record's `created`), with when each evaluation began, and the seed's own stages: where the start of a run goes (the
    seed judged cold, its confirmation under the exclusive lock, the first children)."""
    created = float((store.get_meta(RUN_REF.format(run=run)) or {}).get("created") or 0.0)
    if not created or not results:
        return
    print(f"the run's first {min(events, len(results))} results, seconds since it was made (began - written):")
    for r, c in results[:events]:
        began = r.t - float(r.line.get("duration_s") or 0.0)
        what = "confirm" if r.confirm else c.op
        print(f"  {c.id} {what:8} {r.status:10} {began - created:7.1f} - {r.t - created:7.1f}")
        if c.op == "seed" and not r.confirm:  # judged cold: the stages of the run's critical first half minute
            timings = r.details.get("timings") or {}
            spans = {k: v for k, v in timings.items() if k in STAGES and isinstance(v, (int, float)) and v >= 0.05}
            print("      its stages (s): " + ", ".join(f"{k.removesuffix('_s')} {v:.2f}" for k, v in spans.items()))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("repo", nargs="?", default=".")
    p.add_argument("--run")
    p.add_argument("--busy", type=Path, help="nvidia-smi's samples of the GPU's utilization during the run "
                   "(bench/pipeline_pass.sh's busy_NAME.csv): how busy it was under each kind of hold")
    args = p.parse_args()
    store = Store(Path(args.repo).resolve())
    if not args.run and not store.runs():
        print(f"no run in {args.repo}", file=sys.stderr)
        return 1
    run = args.run or store.runs()[-1]
    snap = store.snapshot(run)
    results = sorted(((r, c) for c in snap.candidates.values() for r in c.results if r.t), key=lambda e: e[0].t or 0)
    by_mode: dict[str, list[dict[str, float]]] = {}
    for r, c in results:
        timings = r.details.get("timings") or {}
        mode = ("confirm " if r.confirm else "") + str(r.details.get("mode", "?"))
        row = {k: float(timings[k]) for k in STAGES if isinstance(timings.get(k), (int, float))}
        row["duration_s"] = float(r.line.get("duration_s") or 0.0)
        row.update(lock_spans(r.details.get("gpu_lock")))
        engine = r.line.get("engine") or {}  # the engine's own stages before the evaluation
        row.update({k: float(v) for k, v in engine.items() if k in ENGINE and isinstance(v, (int, float))})
        by_mode.setdefault(mode, []).append(row)
    caches: dict[str, list[dict[str, Any]]] = {}
    for r, _ in results:
        said = r.details.get("nvrtc_cache")
        if isinstance(said, dict):
            caches.setdefault(("confirm " if r.confirm else "") + str(r.details.get("mode", "?")), []).append(said)
    for mode, rows in by_mode.items():
        print(f"{mode}: {len(rows)} evaluations, mean seconds per stage:")
        for key in (*ENGINE, "duration_s", *STAGES):
            values = [row[key] for row in rows if key in row]
            if values:
                print(f"  {key:16} {statistics.fmean(values):8.2f}  (min {min(values):.2f}, max {max(values):.2f})")
        said = caches.get(mode, [])
        if said:  # what the compile cache served (qrjudge/nvrtc_cache.py), and the last reason it did not
            whys = [str(c["why"]) for c in said if c.get("why")]
            print(f"  compile cache: {sum(int(c.get('hits', 0)) for c in said)} hits, "
                  f"{sum(int(c.get('compiled', 0)) for c in said)} compiled by its server "
                  f"({sum(int(c.get('foreseen', 0)) for c in said)} of them foreseen)"
                  + (f"; not served: {whys[-1]}" if whys else ""))
    times = [r.t for r, _ in results if not r.confirm and r.t]
    if len(times) > 2:
        gaps = [b - a for a, b in zip(times, times[1:])]
        span = times[-1] - times[0]
        print(f"between results: mean {statistics.fmean(gaps):.2f} s, median {statistics.median(gaps):.2f} s; "
              f"{(len(times) - 1) * 3600 / span:.0f} results an hour over {span:.0f} s (confirmations included)")
    if len(times) > 12:  # past the seed's first, uncached evaluation and its confirmation
        span = times[-1] - times[9]
        print(f"past the first ten results: {len(times) - 10} in {span:.0f} s, {(len(times) - 10) * 3600 / span:.0f} an hour")
    start_timeline(store, run, results)
    for line in [timed_chains(results), occupancy(results), rate_model(results), *slow_sessions(results)]:
        if line:
            print(line)
    if args.busy:
        for how, samples in busy_by_hold(read_busy(args.busy), results).items():
            if samples:
                print(f"the GPU busy {statistics.fmean(samples):.0f}% while {how if how != 'none' else 'no one'} "
                      f"held its lock ({len(samples)} samples)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
