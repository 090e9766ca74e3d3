#!/usr/bin/env bash
# One build-test-benchmark pass on a GPU machine; logs and JSON results go to ${OUT:-bench/out}.
#   bench/gpu_pass.sh [smoke|full]
# smoke:    gpu tests + quick evaluations of both seeds + baseline quick (a first look, a few minutes)
# profile:  seed gpu tests + per-kernel profile of blocked_wy (and of VARIANTS) + one full evaluation
# overhead: where the harness's time goes: the checker's cost, cold and prestarted evaluations
# full:     gpu tests + baseline/naive/blocked_wy full from one run + 5 noise repeats + quick timing
# demo:     only `evolve start` on the QR problem (DEMO_OPERATORS, DEMO_CANDIDATES)
source "$(dirname "$0")/lib.sh"
what=${1:-full}
qr() {  # name, then harness args
  local name=$1; shift
  log "harness $name $*"
  $py -m qrjudge "$@" >"$OUT/$name.json" 2>>"$OUT/harness.log"
  echo "$name: $(cut -c1-200 "$OUT/$name.json")" | tee -a "$OUT/pass.log"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee -a "$OUT/pass.log"
$py -c 'import torch, cupy; print("torch", torch.__version__, "cuda", torch.version.cuda, "cupy", cupy.__version__)' | tee -a "$OUT/pass.log"
if [[ $what == profile ]]; then
  $py -m pytest -q -m gpu -p no:cacheprovider -k seed tests/test_harness_gpu.py 2>&1 | tail -5 | tee -a "$OUT/pass.log"
  $py bench/profile_blocked.py 2>&1 | tee "$OUT/profile.txt" | grep -E "per call|panel_qr|small_qr"
  for variant in ${VARIANTS:-}; do  # NAME=VALUE[,NAME=VALUE]: kernel.py constants to override
    $py bench/profile_blocked.py seed_kernels/blocked_wy ${variant//,/ } 2>&1 | tee -a "$OUT/profile.txt" | grep -E "^==|per call"
  done
  qr blocked_full --kernel-dir seed_kernels/blocked_wy --mode full --seed 2
  exit 0
fi
prestarted() {  # name, then harness args: the process starts, the go line comes 8 s later
  local name=$1; shift
  log "harness (prestarted) $name $*"
  (sleep 8; echo go) | $py -m qrjudge --prestart "$@" >"$OUT/$name.json" 2>>"$OUT/harness.log"
  echo "$name: $(cut -c1-200 "$OUT/$name.json")" | tee -a "$OUT/pass.log"
}
if [[ $what == overhead ]]; then
  $py bench/checker_cost.py 2>&1 | tee -a "$OUT/pass.log"
  qr cold_full --kernel-dir seed_kernels/blocked_wy --mode full --seed 3
  prestarted warm_full --kernel-dir seed_kernels/blocked_wy --mode full --seed 3
  prestarted warm_quick --kernel-dir seed_kernels/blocked_wy --mode quick --seed 3
  exit 0
fi
if [[ $what == smoke ]]; then
  $py -m pytest -q -m gpu -p no:cacheprovider ${PYTEST_ARGS:-} tests/test_harness_gpu.py 2>&1 | tail -25 | tee -a "$OUT/pass.log"
  qr blocked_quick --kernel-dir seed_kernels/blocked_wy --mode quick --seed 1
  qr naive_quick --kernel-dir seed_kernels/naive --mode quick --seed 1
  qr baseline_quick --baseline --mode quick --seed 1
  qr blocked_full --kernel-dir seed_kernels/blocked_wy --mode full --seed 2
  exit 0
fi
if [[ $what == full ]]; then
log "gpu tests: seeds alone on the GPU (timing checks need an unshared device), then the cheats in parallel"
$py -m pytest -q -m gpu -p no:cacheprovider -k seed tests/test_harness_gpu.py 2>&1 | tail -15 | tee -a "$OUT/pass.log"
[[ -n ${SKIP_CHEATS:-} ]] || $py -m pytest -q -m gpu -p no:cacheprovider -k cheat ${PYTEST_ARGS:-} tests/test_harness_gpu.py 2>&1 | tail -25 | tee -a "$OUT/pass.log"
qr baseline --baseline --mode full --seed 7
qr blocked_wy --kernel-dir seed_kernels/blocked_wy --mode full --seed 7
for i in 1 2 3 4 5; do qr "noise$i" --kernel-dir seed_kernels/blocked_wy --mode full; done
qr blocked_quick --kernel-dir seed_kernels/blocked_wy --mode quick
prestarted warm_full --kernel-dir seed_kernels/blocked_wy --mode full
prestarted warm_quick --kernel-dir seed_kernels/blocked_wy --mode quick
for variant in ${VARIANTS:-}; do  # A/B against the seed in the same run: NAME=VALUE[,NAME=VALUE]
  qr "variant_${variant//[,=]/_}" --kernel-dir "$($py bench/variant.py seed_kernels/blocked_wy ${variant//,/ })" --mode full --seed 7
done
qr final --kernel-dir seed_kernels/blocked_wy --mode final --seed 7
qr naive --kernel-dir seed_kernels/naive --mode full --seed 7 --stall ${NAIVE_STALL:-90}
fi
if [[ $what == full || $what == demo ]]; then
log "evolve start on the QR problem (built-in harness, quick mode, ${DEMO_OPERATORS:-tune only})"
demo=$(mktemp -d)
cp -r seed_kernels qrjudge "$demo/"  # seed_kernels/GUIDANCE.md: the problem's guidance file
sed -e 's/^seeds = .*/seeds = ["seed_kernels\/blocked_wy"]/' -e 's/^mode = .*/mode = "quick"/' \
    -e "s/^operators = .*/operators = { ${DEMO_OPERATORS:-tune = 1.0} }/" evolve.toml > "$demo/evolve.toml"
committed "$demo" qr
$py -m evolver start --repo "$demo" --max-candidates ${DEMO_CANDIDATES:-6} 2>&1 | tee "$OUT/evolve_start.log"
$py -m evolver status --repo "$demo" --json > "$OUT/evolve_status.json"
$py -m evolver lineage best --repo "$demo" | tee -a "$OUT/evolve_start.log"
log "done"
fi
