#!/usr/bin/env bash
# Issue "a thousand judged candidates an hour", one device call: the README's command (`evolve start
# --max-candidates 50`, the shipped evolve.toml: tune only, sandbox on, `final` confirmation) in a fresh copy of
# $BEFORE (a tar of the tree to compare with: `git archive -o FILE COMMIT`) and of this tree, each stopped (Ctrl-C: in-flight evaluations finish) after RUN_S seconds: judged candidates
# an hour and where each candidate's time went (bench/run_stages.py); the compile cache empty before this tree's run.
# PREVIOUS=TAR adds a run of a second tree to compare with (the last change's parent, say; bounded by AFTER_S as this
# tree is, so that the two compare whole runs); SEEDS=0 skips the seeds.
# AFTER_RUNS=N runs this tree N times, each from a fresh copy with the cache emptied (one run's rate is one draw of
# the moves and confirmations: a goal is shown by several).
# PER_GPU="N ..." adds a run of this tree with `per_gpu = N` for each N after each `after` run (the shipped evolve.toml
# has 2: evaluations sharing the GPU, timed one at a time); BEFORE= (set, empty) leaves the other tree out. AFTER_S=N bounds this tree's runs at N s instead of RUN_S (say 600, so that the
# README's command runs to its end, its 50 candidates, while a slow BEFORE tree is still cut at RUN_S).
# Then this tree's judge with that cache warm: torch.geqrf, blocked_wy, and tsqr_wy five times in `full` (the seed's score and its
# noise under the new pipeline), each with what the cache served. About 8 minutes on an H200.
# How busy the GPU was during each run (nvidia-smi's utilization.gpu every 250 ms) in pass.log, overall and by what
# held the GPU's lock at the time (run_stages.py --busy), the samples in busy_*.csv.
# Results: ${OUT:-bench/out}/pass.log, evolve_*.log, rate.svg (the runs' rates in one picture: bench/rate_plot.py),
# run_*.bundle (each run's repository: `git clone --mirror` it, its notes and records too, and run
# `bench/run_stages.py` there), results.jsonl.
source "$(dirname "$0")/lib.sh"
root=$PWD
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
cache=$nvrtc_dir
plotted=()  # name=repository of each run, for rate_plot.py
readme_run() {  # name, a tar of the tree to run ("" for this working tree's tracked and untracked files), seconds
  local clone=/tmp/readme-$1 started seconds=${3:-${RUN_S:-170}}
  rm -rf "$clone" || return 1
  if [[ -n $2 ]]; then mkdir -p "$clone" && tar -xf "$2" -C "$clone" && committed "$clone" "$1"; else this_tree "$clone"; fi || return 1
  log "$1: evolve start --max-candidates 50 in a fresh copy, stopped at $seconds s"
  started=$(date +%s)
  busy_sampling "$1"
  (cd "$clone" && PYTHONPATH=$clone${PYTHONPATH:+:$PYTHONPATH} timeout -s INT "$seconds" $py -m evolver start \
     --max-candidates 50 > "$OUT/evolve_$1.log" 2>&1)
  local rc=$?
  busy_sampled "$1"
  log "$1: rc $rc, $(( $(date +%s) - started )) s; $busy_mean"
  tail -3 "$OUT/evolve_$1.log" | tee -a "$OUT/pass.log"
  git -C "$clone" bundle create -q "$OUT/run_$1.bundle" --all 2> /dev/null  # its branches and notes, to look at later
  plotted+=("$1=$clone")
  (cd "$clone" && PYTHONPATH=$clone${PYTHONPATH:+:$PYTHONPATH} $py "$root/bench/run_stages.py" . \
     $([[ -s $OUT/busy_$1.csv ]] && echo --busy "$OUT/busy_$1.csv")) 2>&1 | tee -a "$OUT/pass.log"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/pass.log"
if [[ -n ${BEFORE-unset} ]]; then  # BEFORE= (empty) compares this tree with itself only (PER_GPU's runs)
  rm -rf "$cache"  # (until 2026-12-04, run54, a second pass in one call gave `before` the cache `after` had filled)
  readme_run before "${BEFORE:?a tar of the tree to compare with: git archive -o FILE COMMIT}"
fi
if [[ -n ${PREVIOUS:-} ]]; then rm -rf "$cache"; readme_run previous "$PREVIOUS" "${AFTER_S:-}"; fi  # a second tree, bounded as this one
for i in $(seq 1 "${AFTER_RUNS:-1}"); do  # AFTER_RUNS=N: this tree N times (how far apart whole runs land: 17-23%)
  suffix=$([[ $i == 1 ]] || echo "_$i")
  rm -rf "$cache"
  readme_run "after$suffix" "" "${AFTER_S:-}"
  for n in ${PER_GPU:-}; do  # the same tree with n evaluations sharing the GPU (qrjudge/gpulock.py), after each
    # `after` run, so that N rounds compare pairs from the same stretch of the machine's time; the cache emptied
    # as for `after` (until 2026-12-04 this run found the cache `after` had filled, so it compiled less)
    rm -rf "$cache"
    sed -i "s/^per_gpu = 2 /per_gpu = $n /" evolve.toml && readme_run "per_gpu_$n$suffix" "" "${AFTER_S:-}"
    sed -i "s/^per_gpu = $n /per_gpu = 2 /" evolve.toml
  done
done
$py bench/rate_plot.py "${plotted[@]}" -o "$OUT/rate.svg" --title "the README's command: judged candidates over time" \
  2>&1 | tee -a "$OUT/pass.log"  # the runs above in one picture (docs/throughput-run54.svg is one)
log "the compile cache after the run: $(find "$cache" -name '*.bin' | wc -l) entries, $(du -sh "$cache" | cut -f1)"
[[ ${SEEDS:-1} == 0 ]] && exit 0  # (the seeds on a shared GPU, with torch.geqrf: bench/share_noise.sh)
export EVOLVE_NVRTC_CACHE=$cache
qr baseline --baseline --mode full --seed 7
qr blocked_wy --kernel-dir seed_kernels/blocked_wy --mode full --seed 7
for i in 1 2 3 4 5; do qr "tsqr_wy_$i" --kernel-dir seed_kernels/tsqr_wy --mode full $([[ $i == 1 ]] && echo --seed 7); done
$py - "$OUT/results.jsonl" <<'PY' | tee -a "$OUT/pass.log"
import json, statistics, sys
rows = {r["name"]: r["result"] for r in map(json.loads, open(sys.argv[1]))}
base = rows.get("baseline", {}).get("score") or 0
scores = [rows[f"tsqr_wy_{i}"].get("score") for i in range(1, 6) if f"tsqr_wy_{i}" in rows]
for name in ["blocked_wy"] + [f"tsqr_wy_{i}" for i in range(1, 6)]:
    r = rows.get(name, {})
    t = r.get("timings") or {}
    print(f"{name}: {r.get('status')} {r.get('score')} us; nvrtc cache {r.get('nvrtc_cache')}; import "
          f"{t.get('import_kernel_s')} s, tests {t.get('tests_s')} s, wall {t.get('wall_s')} s")
ok = [s for s in scores if s]
if len(ok) > 1:
    print(f"tsqr_wy x{len(ok)}: mean {statistics.fmean(ok):.1f} us, CV {100 * statistics.stdev(ok) / statistics.fmean(ok):.2f}%;"
          f" geqrf {base} us: {base / statistics.fmean(ok):.1f}x")
PY
