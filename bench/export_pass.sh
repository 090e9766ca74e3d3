#!/usr/bin/env bash
# One GPU pass for issue "contest-ready", export half: a run whose seeds are ${SEEDS:-seed_kernels/blocked_wy}
# (space-separated) on the QR problem, each seed candidate exported with `evolve export --format gpumode`, and
# each exported file judged by the harness as a one-file kernel directory against the directory form,
# alternating, ${REPEATS:-2} times, in full mode. Each evaluation of an exported file builds the stand-in's one
# extension in its runner's own scratch (the first import on a fresh machine: its `import_kernel_s`), then compiles
# every CUDA module with NVRTC. Results: ${OUT:-bench/out}/export.jsonl
# ({"name", "result"} per evaluation), the exported files beside it.
source "$(dirname "$0")/lib.sh"
seeds=(${SEEDS:-seed_kernels/blocked_wy})
demo=$(mktemp -d)
qr_demo "$demo" "${seeds[@]}" || exit 1
log "the seeds judged by a run"
$py -m evolver start --repo "$demo" --max-candidates "${#seeds[@]}" >>"$OUT/evolve.log" 2>&1
qr() {  # name, kernel dir
  line=$($py -m qrjudge --kernel-dir "$2" --mode full 2>>"$OUT/harness.log" | tail -1)
  echo "{\"name\": \"$1\", \"result\": $line}" >> "$OUT/export.jsonl"
  echo "$1: $(echo "$line" | cut -c1-120)" | tee -a "$OUT/pass.log"
}
for i in "${!seeds[@]}"; do
  id=$((i + 1))
  $py -m evolver export --repo "$demo" "$id" --format gpumode -o "$OUT/export_$id.py" | tee -a "$OUT/pass.log"
  mkdir -p "$demo/one_$id" && cp "$OUT/export_$id.py" "$demo/one_$id/kernel.py"
  for r in $(seq 1 "${REPEATS:-2}"); do
    qr "${seeds[$i]} directory #$r" "${seeds[$i]}"
    qr "${seeds[$i]} exported #$r" "$demo/one_$id"
  done
done
