#!/usr/bin/env bash
# Issue "a thousand judged candidates an hour": the judge at two trees on the same candidates, sharing one GPU as
# `per_gpu` evaluations do, so that a change to qrjudge/ is measured without tune's draw (the README's command
# draws different moves in each run, and one move can cost seconds: docs/benchmarks.md, "Throughput").
#   OLD=<commit, `git archive` tar or directory> [NEW=...] [KERNEL=seed_kernels/tsqr_wy] [VARIANTS=FILE]
#   [PER_GPU=2] [ROUNDS=3] [MODE=full] [COLD=1] bash bench/share_ab.sh
# The candidates: KERNEL and one copy of it per line of VARIANTS (`NAME=VALUE ...`, bench/variant.py; blank and #
# lines skipped), made once. Each round judges all of them with the old harness, then the new, PER_GPU at a time
# under one lock directory (EVOLVE_GPU_LOCKS), the compile cache warmed first: old and new alternate, so a drift of
# the machine shows as a drift between rounds, not as a difference between the judges.
# Its evaluations are not prestarted (each judge starts when its turn comes, its CUDA start in its time: 9-10 s
# each on an H200 with two starting at once, notebook 2026-12-03/run26; `import torch` alone took 3.0-6.7 s a process
# there and a CUDA context 0.3-0.4 s, run31), so its rate is far below evolve's; compare
# the sides' stages (tests, exclusive, deferred checks), which the judge times alike either way.
# COLD=1 measures the compiles instead (qrjudge/foresight.py, say): no warming; each round starts with the compile
# cache empty and judges KERNEL alone first (as a run judges its seed first), then the variants (a file of moves
# that recompile modules: bench/compiling_moves.txt).
# DEVICE=cpu MODE=tiny KERNEL=tests/cpu_kernel: a check of the script, no GPU.
# Results: ${OUT:-bench/out}/results.jsonl ({"name": "old1/2", "result": ...}: side, round, candidate) and
# rounds.jsonl (each side's round: candidates, wall milliseconds); pass.log: judged an hour per side and round, and each
# side's mean stages (bench/passes.py share).
source "$(dirname "$0")/lib.sh"
: "${OLD:?OLD=<commit, tar or directory> is the judge to compare with}"
copies=$(mktemp -d)
harness_copy "$copies/old" "$OLD" && harness_copy "$copies/new" "${NEW:-}" || exit 1
kernel=${KERNEL:-seed_kernels/tsqr_wy}
[[ $kernel == /* ]] || kernel=$PWD/$kernel
candidates=("$kernel")
if [[ -n ${VARIANTS:-} ]]; then
  while IFS= read -r line; do
    [[ -z ${line// } || $line == \#* ]] && continue
    made=$($py bench/variant.py "${candidates[0]}" $line) || exit 1
    candidates+=("$made")
  done < "$VARIANTS"
fi
device=${DEVICE:+--device $DEVICE}
compile_cache_on
export EVOLVE_GPU_LOCKS=${EVOLVE_GPU_LOCKS:-$(mktemp -d)}
log "${#candidates[@]} candidates, ${PER_GPU:-2} at a time, ${ROUNDS:-3} rounds of old and new (compile cache \
$([[ -n ${COLD:-} ]] && echo "emptied each round, KERNEL first" || echo warmed))"
[[ -n ${COLD:-} ]] || for kernel in "${candidates[@]}"; do  # every module compiled once: no side pays the first
  (cd "$copies/new" && PYTHONPATH=$copies/new${PYTHONPATH:+:$PYTHONPATH} $py -m qrjudge --kernel-dir "$kernel" --mode "${QUICK_MODE:-quick}" \
     $device > /dev/null 2>>"$OUT/harness.log")
done
judged() {  # name (old or new with its round): every candidate judged by that side, PER_GPU at a time
  local harness=$copies/${1%%[0-9]*} began i running=0 ms
  began=$(date +%s%N)
  [[ -n ${COLD:-} && -n ${EVOLVE_NVRTC_CACHE:-} ]] && rm -rf "$EVOLVE_NVRTC_CACHE" && mkdir -p "$EVOLVE_NVRTC_CACHE"
  for i in "${!candidates[@]}"; do
    (cd "$harness" && PYTHONPATH=$harness${PYTHONPATH:+:$PYTHONPATH} $py -m qrjudge --kernel-dir "${candidates[$i]}" --mode "${MODE:-full}" \
       $device 2>>"$OUT/harness.log" | tail -1 > "$OUT/$1_$i.json") &
    running=$((running + 1))
    if (( running >= ${PER_GPU:-2} )) || [[ -n ${COLD:-} && $i == 0 ]]; then wait -n; running=$((running - 1)); fi
  done
  wait
  ms=$(( ($(date +%s%N) - began) / 1000000 ))
  echo "{\"name\": \"$1\", \"candidates\": ${#candidates[@]}, \"wall_ms\": $ms}" >> "$OUT/rounds.jsonl"
  for i in "${!candidates[@]}"; do record "$1/$i" "$(cat "$OUT/$1_$i.json")" > /dev/null; done
  log "$1: ${#candidates[@]} judged in $ms ms"
}
for round in $(seq "${ROUNDS:-3}"); do
  judged "old$round"
  judged "new$round"
done
$py bench/passes.py share "$OUT/results.jsonl" | tee -a "$OUT/pass.log"
