#!/usr/bin/env bash
# Issue "the seed at 60x", point 3, in one command: a seed as the contest sees it. A run of the seed alone (SEED, a
# kernel directory of this tree, default seed_kernels/tsqr_wy; no confirmation), `evolve export best --format gpumode
# --check`, GPU MODE's eval.py on the exported file through bench/gpumode_eval.py (PROBLEM: the contest's problem
# directory, as gpu-mode/reference-kernels has problems/linalg/qr_v2; MODES, default "test benchmark"; BENCHMARKS,
# positions in task.yml's list, default all), then bench/small_probe.py on the exported file (20x32 timed the judge's
# way and eval.py's). About seven minutes on an H200 with all 14 benchmarks, most of it eval.py's benchmark mode.
# Results: ${OUT:-bench/out}/pass.log, submission.py, export.log, gpumode.out, eval_*.log, probe.txt.
set -uo pipefail
if [[ -z ${PROBLEM:-} || ! -f ${PROBLEM}/task.yml ]]; then
  echo "contest_pass.sh: set PROBLEM to the contest's problem directory (its task.yml and eval.py)" >&2
  exit 2
fi
source "$(dirname "$0")/lib.sh"
compile_cache_on
demo=$(mktemp -d)
qr_demo "$demo" "${SEED:-seed_kernels/tsqr_wy}" || exit 1
log "the seed judged by a run"
if ! $py -m evolver start --repo "$demo" --max-candidates 1 >> "$OUT/evolve.log" 2>&1; then
  log "the run failed (evolve.log)"
  exit 1
fi
log "evolve export best --format gpumode --check"
$py -m evolver export --repo "$demo" best --format gpumode --check -o "$OUT/submission.py" > "$OUT/export.log" 2>&1
echo "export rc $?: $(tail -1 "$OUT/export.log")" | tee -a "$OUT/pass.log"
log "GPU MODE's eval.py: ${MODES:-test benchmark}"
picked=()
[[ -n ${BENCHMARKS:-} ]] && picked=(--benchmarks $BENCHMARKS)
$py bench/gpumode_eval.py --problem "$PROBLEM" --submission "$OUT/submission.py" --modes ${MODES:-test benchmark} \
  "${picked[@]}" --out "$OUT" > "$OUT/gpumode.out" 2>&1
echo "eval.py rc $?" | tee -a "$OUT/pass.log"
grep -h '^{\|geomean' "$OUT/gpumode.out" | cut -c1-200 | tee -a "$OUT/pass.log"
log "small_probe on the exported file"
$py bench/small_probe.py --calls 100 --kernel "$OUT/submission.py" > "$OUT/probe.txt" 2>&1
tail -5 "$OUT/probe.txt" | tee -a "$OUT/pass.log"
