#!/usr/bin/env bash
# One GPU pass for the judge and the sandbox (issues "the judge cannot be gamed" and "candidates are hostile
# code"): GPU tests (seeds, every planted cheat), baseline and seeds in full mode from one run, noise, the
# prestarted harness's overhead, final mode, the harness inside and outside the sandbox, and `evolve start`
# with the sandbox on and off. Results: ${OUT:-bench/out}/results.jsonl (one JSON line per evaluation,
# {"name": ..., "result": ...}); logs beside it.
source "$(dirname "$0")/lib.sh"
qr() {  # name, then harness args
  local name=$1; shift
  log "harness $name $*"
  local line
  line=$($py -m harness.qr "$@" 2>>"$OUT/harness.log" | tail -1)
  echo "{\"name\": \"$name\", \"result\": $line}" >> "$OUT/results.jsonl"
  echo "$name: $(echo "$line" | cut -c1-160)" | tee -a "$OUT/pass.log"
}
prestarted() {  # name, then harness args: the process starts, the go line comes 8 s later
  local name=$1; shift
  log "harness (prestarted) $name $*"
  local line
  line=$( (sleep 8; echo go) | $py -m harness.qr --prestart "$@" 2>>"$OUT/harness.log" | tail -1)
  echo "{\"name\": \"$name\", \"result\": $line}" >> "$OUT/results.jsonl"
  echo "$name: $(echo "$line" | cut -c1-160)" | tee -a "$OUT/pass.log"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee -a "$OUT/pass.log"
$py -c 'import torch, cupy; print("torch", torch.__version__, "cuda", torch.version.cuda, "cupy", cupy.__version__)' | tee -a "$OUT/pass.log"
if [[ ${SKIP_TESTS:-} == "" ]]; then
  log "gpu tests, one at a time (timing checks need the GPU to themselves)"
  $py -m pytest -q -m gpu -p no:cacheprovider -s ${PYTEST_ARGS:-} tests/test_harness_gpu.py >"$OUT/pytest.log" 2>&1
  tail -30 "$OUT/pytest.log" | tee -a "$OUT/pass.log"
fi
qr baseline --baseline --mode full --seed 7
qr blocked_wy --kernel-dir seed_kernels/blocked_wy --mode full --seed 7
for i in 1 2 3 4 5; do qr "noise$i" --kernel-dir seed_kernels/blocked_wy --mode full; done
prestarted warm_full --kernel-dir seed_kernels/blocked_wy --mode full
prestarted warm_quick --kernel-dir seed_kernels/blocked_wy --mode quick
qr final --kernel-dir seed_kernels/blocked_wy --mode final --seed 7
log "the harness inside and outside the sandbox, alternating"
$py bench/sandbox_cost.py --repeats ${SANDBOX_REPEATS:-3} 2>&1 | tee "$OUT/sandbox_cost.jsonl" | tail -1 | tee -a "$OUT/pass.log"
for setting in on off; do
  log "evolve start on the QR problem, sandbox $setting (tune only, ${DEMO_MODE:-quick} mode, ${DEMO_CANDIDATES:-20} candidates)"
  demo=$(mktemp -d)
  cp -r seed_kernels harness "$demo/"
  sed -e 's/^seeds = .*/seeds = ["seed_kernels\/blocked_wy"]/' -e "s/^mode = .*/mode = \"${DEMO_MODE:-quick}\"/" \
      -e 's/^confirm_mode = .*/confirm_mode = ""/' -e "s/^sandbox = .*/sandbox = \"$setting\"/" \
      -e "s/^operators = .*/operators = { tune = 1.0 }/" evolve.toml > "$demo/evolve.toml"
  git -C "$demo" init -q && git -C "$demo" add -A && git -C "$demo" -c user.name=ci -c user.email=ci@x commit -qm qr
  $py -m evolver start --repo "$demo" --max-candidates ${DEMO_CANDIDATES:-20} >>"$OUT/evolve.log" 2>&1
  $py -m evolver status --repo "$demo" --json > "$OUT/status_$setting.json"
  $py - "$demo" "$setting" >> "$OUT/results.jsonl" <<'PY'
import json, sys
from pathlib import Path
from evolver.store import Store
repo, setting = Path(sys.argv[1]), sys.argv[2]
snap = Store(repo).snapshot(Store(repo).runs()[-1])
for c in sorted(snap.candidates.values(), key=lambda c: c.id):
    r = c.result or {}
    print(json.dumps({"name": f"evolve_{setting}", "result": {"id": c.id, "tree": c.kernel_tree, "status": r.get("status"),
                      "score": r.get("score"), "duration_s": r.get("duration_s"), "tune": c.trailers.get("Tune")}}))
PY
done
log "done"
