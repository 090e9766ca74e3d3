#!/usr/bin/env bash
# One GPU pass on the judge's noise (issue "the judge cannot be gamed", noise CV < 1%): ${REPEATS:-6} times,
# interleaved, the seed in `full` mode through the judge, then in the contest's loop in one process
# (bench/loop_timing.py), then in that loop beside a neighbour (a second process with a CUDA context of its own
# that works and synchronises every millisecond, as the judge does beside its runner). It asks two questions
# of a slow evaluation: does the CPU itself run slow then (the judge's fixed loop, `judge_loop_us`, and the
# loop's `loop_us`), and does a second CUDA context make the contest's loop slow as it may make the judge? About
# 4 minutes on an H200 (VARIANTS="NAME=VALUE ..." adds a judge evaluation under each setting to every repeat).
# Results: ${OUT:-bench/out}/results.jsonl (judge) and loop_timing.jsonl, pass.log, the host's speed every 0.25 s
# (timeline.jsonl, bench/host_timeline.py) and its NUMA layout (host.txt).
source "$(dirname "$0")/lib.sh"
seed=${SEED:-seed_kernels/blocked_wy}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee -a "$OUT/pass.log"
# The machine: its NUMA nodes and which CPUs are near the GPU, beside the host's speed over time.
{ lscpu; cat /sys/devices/system/node/node*/cpulist; nvidia-smi topo -m; } > "$OUT/host.txt" 2>&1
$py bench/host_timeline.py > "$OUT/timeline.jsonl" 2>>"$OUT/harness.log" &
timeline=$!
for i in $(seq "${REPEATS:-6}"); do
  qr "judge$i" --kernel-dir "$seed" --mode full
  for v in ${VARIANTS:-}; do  # e.g. EVOLVE_HOLD_US=64 (a fixed hold), EVOLVE_RUNNER_PIN=fastest
    (export "$v"; qr "$v#$i" --kernel-dir "$seed" --mode full)
  done
  [ "${LOOPS:-1}" = 0 ] && continue  # LOOPS=0: the judge's evaluations only
  log "the contest's loop, alone and beside a neighbour, repeat $i"
  $py bench/loop_timing.py --kernel-dir "$seed" >> "$OUT/loop_timing.jsonl" 2>>"$OUT/harness.log"
  $py bench/loop_timing.py --kernel-dir "$seed" --neighbour >> "$OUT/loop_timing.jsonl" 2>>"$OUT/harness.log"
done
kill $timeline
$py bench/passes.py evaluations "$OUT/results.jsonl" | tee -a "$OUT/pass.log"
[ -f "$OUT/loop_timing.jsonl" ] && $py bench/passes.py loops "$OUT/loop_timing.jsonl" | tee -a "$OUT/pass.log"
$py bench/passes.py cv "$OUT/results.jsonl" | tee -a "$OUT/pass.log"
