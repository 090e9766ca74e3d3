#!/bin/bash
# For the next session (branch judge-clock, the enqueued design with the tick): the judge clock against the seed
# and the cheats that target it
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD:/tmp/site
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
show() { python3 - "$@" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(sys.argv[2], r.get("status"), r.get("score"), "clock", r.get("judge_clock"), r.get("judge_clock_error"), (r.get("error") or "")[:300])
for s in r.get("shapes") or []:
    print("  ", s["shape"], s["mean_us"], s["std_us"], s["min_us"], s.get("clock"), s.get("judge_overhead_us"))
PY
}
d=/tmp/ef; rm -rf $d; mkdir -p $d; cp -r qrjudge $d/
for k in early_finish frames_clock; do mkdir -p $d/$k; cp seed_kernels/blocked_wy/kernel.py $d/$k/base.py; cp seed_kernels/blocked_wy/qr.cu $d/$k/; cp tests/cheats/$k.py $d/$k/kernel.py; done
for k in blocked_wy early_finish frames_clock; do kd=$PWD/seed_kernels/blocked_wy; [[ $k != blocked_wy ]] && kd=$d/$k
  (cd $d && PYTHONPATH=$d:/tmp/site timeout 60 python3 -m qrjudge --kernel-dir $kd --mode quick --seed 5 > $OUT/q_$k.json 2>$OUT/q_$k.log); show $OUT/q_$k.json $k; done
for run in clock1 off clock2; do
  [[ $run == off ]] && export EVOLVE_JUDGE_CLOCK=0 || unset EVOLVE_JUDGE_CLOCK
  timeout 90 python3 -m qrjudge --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7 2>$OUT/seed_$run.log | tail -1 > $OUT/seed_$run.json
  show $OUT/seed_$run.json $run
done
echo "== cheats"
s=$(date +%s); EVOLVE_GPU_LOCKS=$(mktemp -d) timeout 220 python3 -m pytest -q -rs -m "gpu and not alone" -k planted_cheat -n 2 -p no:cacheprovider tests/test_harness_gpu.py > $OUT/gputests.out 2>&1
echo "gpu tests rc $? $(( $(date +%s) - s )) s"; grep -E "passed|failed|FAILED|ERROR|Error" $OUT/gputests.out | tail -14
