#!/usr/bin/env bash
# One GPU pass for issue "beyond one GPU": `evolve start` on the QR problem (tune only, full mode, confirm on) for
# ${CANDIDATES:-24} candidates on one GPU, then on ${GPUS:-0,1} (one evaluation slot per GPU): candidates per
# hour from the wall time. RAY=1 adds the same on a local Ray cluster of the machine's GPUs (warm judges;
# needs the ray extra's wheels). Needs a machine with that many GPUs. Results: ${OUT:-bench/out}/pass.log.
source "$(dirname "$0")/lib.sh"
for gpus in 0 "${GPUS:-0,1}"; do
  demo=$(mktemp -d)
  cp -r seed_kernels harness "$demo/"
  sed -e 's/^mode = .*/mode = "full"/' -e "s/^operators = .*/operators = { tune = 1.0 }/" \
      -e "s/^gpus = .*/gpus = [$gpus]/" evolve.toml > "$demo/evolve.toml"
  git -C "$demo" init -q && git -C "$demo" add -A && git -C "$demo" -c user.name=ci -c user.email=ci@x commit -qm qr
  log "gpus [$gpus]: ${CANDIDATES:-24} candidates"
  started=$(date +%s)
  $py -m evolver start --repo "$demo" --max-candidates "${CANDIDATES:-24}" > "$OUT/evolve_$gpus.log" 2>&1
  took=$(( $(date +%s) - started ))
  tail -2 "$OUT/evolve_$gpus.log" | tee -a "$OUT/pass.log"
  echo "gpus [$gpus]: ${CANDIDATES:-24} candidates in $took s: $(( ${CANDIDATES:-24} * 3600 / took )) per hour" | tee -a "$OUT/pass.log"
done
if [[ ${RAY:-} == 1 ]]; then  # the same on a local Ray cluster of this machine's GPUs (warm judges: prestart)
  port=6399
  $py -m ray.scripts.scripts start --head --port=$port --disable-usage-stats --include-dashboard=false > "$OUT/ray_start.log" 2>&1
  demo=$(mktemp -d)
  cp -r seed_kernels harness "$demo/"
  sed -e 's/^mode = .*/mode = "full"/' -e "s/^operators = .*/operators = { tune = 1.0 }/" \
      -e "s/^gpus = .*/gpus = \"auto\"\nbackend = \"ray\"\naddress = \"127.0.0.1:$port\"/" evolve.toml > "$demo/evolve.toml"
  git -C "$demo" init -q && git -C "$demo" add -A && git -C "$demo" -c user.name=ci -c user.email=ci@x commit -qm qr
  log "ray: ${CANDIDATES:-24} candidates"
  started=$(date +%s)
  $py -m evolver start --repo "$demo" --max-candidates "${CANDIDATES:-24}" > "$OUT/evolve_ray.log" 2>&1
  took=$(( $(date +%s) - started ))
  tail -2 "$OUT/evolve_ray.log" | tee -a "$OUT/pass.log"
  echo "ray: ${CANDIDATES:-24} candidates in $took s: $(( ${CANDIDATES:-24} * 3600 / took )) per hour" | tee -a "$OUT/pass.log"
  $py -m ray.scripts.scripts stop --force > /dev/null 2>&1
fi
