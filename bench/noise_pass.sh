#!/usr/bin/env bash
# One GPU pass on the judge's noise (issue "the judge cannot be gamed", noise CV < 1%): ${REPEATS:-6} times,
# interleaved, the seed in `full` mode through the judge, then in the contest's loop in one process
# (bench/loop_timing.py), then in that loop beside a neighbour (a second process with a CUDA context of its own
# that works and synchronises every millisecond, as the judge does beside its runner). It asks two questions
# of a slow evaluation: does the CPU itself run slow then (the judge's fixed loop, `judge_loop_us`, and the
# loop's `loop_us`), and does a second CUDA context make the contest's loop slow as it may make the judge? About
# 4 minutes on an H200 (VARIANTS="NAME=VALUE ..." adds a judge evaluation under each setting to every repeat).
# Results: ${OUT:-bench/out}/results.jsonl (judge) and loop_timing.jsonl, pass.log.
source "$(dirname "$0")/lib.sh"
seed=${SEED:-seed_kernels/blocked_wy}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee -a "$OUT/pass.log"
for i in $(seq "${REPEATS:-6}"); do
  qr "judge$i" --kernel-dir "$seed" --mode full
  for v in ${VARIANTS:-}; do  # e.g. EVOLVE_HOLD_US=64 (a fixed hold), EVOLVE_RUNNER_PIN=fastest
    (export "$v"; qr "$v#$i" --kernel-dir "$seed" --mode full)
  done
  log "the contest's loop, alone and beside a neighbour, repeat $i"
  $py bench/loop_timing.py --kernel-dir "$seed" >> "$OUT/loop_timing.jsonl" 2>>"$OUT/harness.log"
  $py bench/loop_timing.py --kernel-dir "$seed" --neighbour >> "$OUT/loop_timing.jsonl" 2>>"$OUT/harness.log"
done
$py - "$OUT/results.jsonl" "$OUT/loop_timing.jsonl" <<'PY' | tee -a "$OUT/pass.log"
# one line per evaluation and per loop: score, the smallest shape, the CPU's speed then
import json, statistics, sys
for line in open(sys.argv[1]):
    row = json.loads(line)
    r = row["result"]
    small = (r.get("shapes") or [{}])[0]
    loops = sorted(s["host"]["judge_loop_us"] for s in r.get("shapes") or [] if (s.get("host") or {}).get("judge_loop_us"))
    print(f"{row['name']}: {r.get('score')} us; 20x32 {small.get('mean_us')} us, rounds {small.get('round_means_us')}, "
          f"judge overhead {small.get('judge_overhead_us')} us; the judge's loop {loops[len(loops) // 2] if loops else None} us")
for line in open(sys.argv[2]):
    r = json.loads(line)
    print(f"loop{' beside a neighbour' if r.get('neighbour') else ''}: {r['score']} us; 20x32 {r.get('smallest')}; "
          f"its loop {r.get('loop_us')} us")
groups = {}
for l in open(sys.argv[1]):
    row = json.loads(l)
    if row["result"].get("score"):
        name = row["name"].split("#")[0] if "#" in row["name"] else row["name"].rstrip("0123456789")
        groups.setdefault(name, []).append(row["result"]["score"])
for name, scores in groups.items():
    if len(scores) > 1:
        print(f"{name}: CV {statistics.pstdev(scores) / statistics.fmean(scores):.2%} over {len(scores)}")
PY
