"""What a GPU pass prints at its end, from what it recorded (bench/trust_pass.sh, bench/noise_pass.sh):

    python bench/passes.py evaluations results.jsonl   # a line per harness evaluation: score, the smallest
                                                        # shape and its rounds, what the host did meanwhile
    python bench/passes.py loops loop_timing.jsonl      # a line per in-process loop (bench/loop_timing.py)
    python bench/passes.py cv results.jsonl             # the CV of the scores per setting (NAME#i or NAMEi)
    python bench/passes.py stages results.jsonl         # a prestarted evaluation's overhead, stage by stage
    python bench/passes.py shapes results.jsonl         # each shape's mean (us), an evaluation per column
    python bench/passes.py share results.jsonl          # bench/share_ab.sh: judged an hour and mean stages per side

Older records, without this session's fields, print with None where a field is missing.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any


def rows(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in open(path) if line.strip()]


def evaluation_line(name: str, result: dict[str, Any]) -> str:
    shapes = result.get("shapes") or []
    if not shapes:
        return f"{name}: {result.get('status')}"
    small, hosts = shapes[0], [s.get("host") or {} for s in shapes]
    if any(hosts):
        cpus = sorted({h["runner_cpu"] for h in hosts if h.get("runner_cpu") is not None})
        loops = sorted(h["judge_loop_us"] for h in hosts if h.get("judge_loop_us"))
        host = (f"steal {sum(h.get('steal_ms') or 0 for h in hosts):.0f} ms, runner preempted "
                f"{sum(h.get('runner_preempted') or 0 for h in hosts)}x, on CPUs {cpus}, the judge's loop "
                f"{loops[len(loops) // 2] if loops else None} us")
    else:
        host = "no host data"
    return (f"{name}: {result.get('score')} us; {small['shape']} {small['mean_us']} us (rounds "
            f"{small.get('round_means_us')}), judge overhead {small.get('judge_overhead_us')} us; {host}; "
            f"overhead {result.get('timings', {}).get('overhead_s')} s")


def loop_line(record: dict[str, Any]) -> str:
    return (f"loop{' beside a neighbour' if record.get('neighbour') else ''}: {record['score']} us; smallest shape "
            f"{record.get('smallest')}; its loop {record.get('loop_us')} us")


STAGES = ("startup_s", "cuda_start_s", "runner_setup_s", "calibrate_s", "import_kernel_s", "tests_s", "bench_s",
          "timed_kernel_s", "runner_stop_s", "after_verdict_s")


def stage_line(name: str, result: dict[str, Any]) -> str | None:
    """Where a prestarted evaluation's overhead went: its stages (start-up includes the calibration), the
    benchmark less its timed calls, the supervisor after the verdict (older records: stopping the runner),
    and what none of them covers."""
    t = result.get("timings") or {}
    if "prestarted_s" not in t or "overhead_s" not in t:
        return None
    bench_rest = t.get("bench_s", 0) - t.get("timed_kernel_s", 0)
    covered = (t.get("startup_s", 0) + t.get("import_kernel_s", 0) + t.get("tests_s", 0) + bench_rest
               + t.get("runner_stop_s", 0) + t.get("after_verdict_s", 0))
    parts = ", ".join(f"{k[:-2]} {t[k]}" for k in STAGES if k in t)
    return (f"{name}: overhead {t['overhead_s']} s = {parts}; benchmark less timed calls {bench_rest:.3f}; "
            f"elsewhere {t['overhead_s'] - covered:.3f}")


def shape_lines(records: list[dict[str, Any]]) -> list[str]:
    """A table: a row per shape, a column per evaluation (its mean time per call, us; '-' where its mode has no
    such shape), the score last."""
    done = [r for r in records if r["result"].get("shapes")]
    means = [{s["shape"]: s["mean_us"] for s in r["result"]["shapes"]} for r in done]
    labels = list(dict.fromkeys(label for m in means for label in m))
    lines = [f"{'shape':28}" + "".join(f"{r['name'][:10]:>11}" for r in done)]
    for label in labels:
        lines.append(f"{label:28}" + "".join(f"{m[label]:11.1f}" if label in m else f"{'-':>11}" for m in means))
    return lines + [f"{'score':28}" + "".join(f"{r['result']['score']:11.1f}" for r in done)]


def setting(name: str) -> str:
    """judge3 -> judge, EVOLVE_HOLD_US=64#3 -> EVOLVE_HOLD_US=64."""
    return name.split("#")[0] if "#" in name else name.rstrip("0123456789")


def cv_lines(records: list[dict[str, Any]]) -> list[str]:
    groups: dict[str, list[float]] = {}
    for row in records:
        if row["result"].get("score"):
            groups.setdefault(setting(row["name"]), []).append(row["result"]["score"])
    return [f"{name}: CV {statistics.pstdev(s) / statistics.fmean(s):.2%} over {len(s)}"
            for name, s in groups.items() if len(s) > 1]


SHARE_STAGES = ("exclusive_s", "relaxed_s", "shared_s", "lock_wait_s", "tests_s", "calibrate_s", "warm_up_s",
                "bench_s", "bench_warmup_s", "timed_kernel_s", "deferred_checks_s")


def share_lines(path: str) -> list[str]:
    """bench/share_ab.sh's rounds (rounds.jsonl beside `path`): each side's candidates judged an hour, round by round
    and in all, and the mean of its evaluations' stages and holds of the GPU's lock (results.jsonl: side+round/i)."""
    from run_stages import lock_spans  # (bench/, this script's directory)

    rounds, evaluations = rows(str(Path(path).with_name("rounds.jsonl"))), rows(path)
    lines = [f"{r['name']}: {r['candidates']} judged in {r['wall_ms'] / 1000:.1f} s, "
             f"{3.6e6 * r['candidates'] / r['wall_ms']:.0f} an hour" for r in rounds]
    for side in dict.fromkeys(setting(r["name"]) for r in rounds):
        mine = [r for r in rounds if setting(r["name"]) == side]
        judged, ms = sum(r["candidates"] for r in mine), sum(r["wall_ms"] for r in mine)
        results = [row["result"] for row in evaluations if setting(row["name"].split("/")[0]) == side]
        stages = [{**(r.get("timings") or {}), **lock_spans(r.get("gpu_lock"))} for r in results]
        means = ", ".join(f"{k[:-2]} {statistics.fmean(t[k] for t in stages if k in t):.2f}"
                          for k in SHARE_STAGES if any(k in t for t in stages))
        ok = sum(r.get("status") == "ok" for r in results)
        lines.append(f"{side}: {judged} judged in {ms / 1000:.1f} s over {len(mine)} rounds, "
                     f"{3.6e6 * judged / ms:.0f} an hour; {ok} of {len(results)} ok; mean s: {means}")
    return lines


def main(argv: list[str]) -> int:
    what, path = argv
    if what == "evaluations":
        lines = [evaluation_line(row["name"], row["result"]) for row in rows(path)]
    elif what == "loops":
        lines = [loop_line(record) for record in rows(path)]
    elif what == "stages":
        lines = [line for row in rows(path) if (line := stage_line(row["name"], row["result"]))]
    elif what == "shapes":
        lines = shape_lines(rows(path))
    elif what == "share":
        lines = share_lines(path)
    else:
        lines = cv_lines(rows(path))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
