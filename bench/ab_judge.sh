#!/usr/bin/env bash
# The judge at two commits on one GPU, interleaved: did a change to qrjudge/ move the scores or the overhead?
#   OLD=<commit> [NEW=<commit>] [KERNEL=seed_kernels/blocked_wy] [REPEATS=3] [MODE=full] [DEVICE=cpu] bash bench/ab_judge.sh
# Each side's qrjudge/ is taken from git, or from a directory that holds one (the GPU machine's copy of the
# repository may not know a commit made since: `git archive C qrjudge | tar -x -C .ab_old` here, then OLD=.ab_old);
# NEW defaults to the working tree. Every evaluation is prestarted (the
# go line 8 s after the start), old then new, REPEATS times, after one quick evaluation that compiles the kernel.
# Results: ${OUT:-bench/out}/results.jsonl (names old1, new1, ...); the per-shape table and each evaluation's
# overhead by stage in pass.log. About 15 s an evaluation on an H200 in full mode.
source "$(dirname "$0")/lib.sh"
: "${OLD:?OLD=<commit> is the judge to compare with}"
kernel=$PWD/${KERNEL:-seed_kernels/blocked_wy}
copies=$(mktemp -d)
old=$copies/old new=$copies/new
harness_copy "$old" "$OLD" && harness_copy "$new" "${NEW:-}" || exit 1
device=${DEVICE:+--device $DEVICE}  # DEVICE=cpu MODE=tiny QUICK_MODE=tiny KERNEL=tests/cpu_kernel: a check of the script, no GPU
(cd "$old" && PYTHONPATH="$old" $py -m qrjudge --kernel-dir "$kernel" --mode "${QUICK_MODE:-quick}" $device >/dev/null 2>&1)
for i in $(seq "${REPEATS:-3}"); do
  for name in old new; do
    dir=$old; [[ $name == new ]] && dir=$new
    # run from the copy, so that -m finds its harness
    (cd "$dir" && export PYTHONPATH="$dir" && prestarted "$name$i" --kernel-dir "$kernel" --mode "${MODE:-full}" $device)
  done
done
$py bench/passes.py stages "$OUT/results.jsonl" | tee -a "$OUT/pass.log"
$py bench/passes.py shapes "$OUT/results.jsonl" | tee -a "$OUT/pass.log"
