#!/usr/bin/env bash
# One GPU pass for issue "beyond one GPU": `evolve start` on the QR problem (tune only, full mode, confirm on) for
# ${CANDIDATES:-24} candidates on one GPU, then on ${GPUS:-0,1} (one evaluation slot per GPU): candidates per
# hour from the wall time (the second only where the machine has that many GPUs). RAY=1 adds the same on a
# local Ray cluster of the machine's GPUs (warm judges; needs the ray extra's wheels: bench/ray_wheels.sh);
# SKIP_LOCAL=1 leaves out the local settings. Results: ${OUT:-bench/out}/pass.log.
source "$(dirname "$0")/lib.sh"
measure() {  # name, then the [evaluation] lines that replace `gpus = ...` in the root evolve.toml
  local demo started took
  demo=$(mktemp -d)
  cp -r seed_kernels qrjudge "$demo/"
  sed -e 's/^mode = .*/mode = "full"/' -e "s/^operators = .*/operators = { tune = 1.0 }/" -e "s|^gpus = .*|$2|" \
      evolve.toml > "$demo/evolve.toml"
  committed "$demo" qr
  log "$1: ${CANDIDATES:-24} candidates"
  started=$(date +%s)
  $py -m evolver start --repo "$demo" --max-candidates "${CANDIDATES:-24}" > "$OUT/evolve_$1.log" 2>&1
  took=$(( $(date +%s) - started ))
  tail -2 "$OUT/evolve_$1.log" | tee -a "$OUT/pass.log"
  echo "$1: ${CANDIDATES:-24} candidates in $took s: $(( ${CANDIDATES:-24} * 3600 / took )) per hour" | tee -a "$OUT/pass.log"
}
if [[ -z ${SKIP_LOCAL:-} ]]; then
  measure one-gpu "gpus = [0]"
  count=$(nvidia-smi -L 2>/dev/null | wc -l)
  if (( count >= $(echo "${GPUS:-0,1}" | tr ',' '\n' | wc -l) )); then
    measure "gpus-${GPUS:-0,1}" "gpus = [${GPUS:-0,1}]"
  else
    log "only $count GPU(s) here: no measurement on ${GPUS:-0,1}"
  fi
fi
if [[ ${RAY:-} == 1 ]]; then  # the same on a local Ray cluster of this machine's GPUs (warm judges: prestart)
  $py -m ray.scripts.scripts start --head --port=6399 --disable-usage-stats --include-dashboard=false > "$OUT/ray_start.log" 2>&1
  measure ray 'gpus = "auto"\nbackend = "ray"\naddress = "127.0.0.1:6399"'
  $py -m ray.scripts.scripts stop --force > /dev/null 2>&1
fi
