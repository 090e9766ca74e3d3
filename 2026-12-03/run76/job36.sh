#!/bin/bash
# Session 43: the judge's own clock, second design (its end on a host word the runner's GPU writes; nothing of the
# judge's waits on the GPU during the call). 1 seed full: clock, off, clock  2 blocked_wy vs early_finish (quick)
# 3 the planted cheats (two workers)
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD:/tmp/site
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r; date -u +%FT%TZ
show() { python3 - "$@" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(sys.argv[2], r.get("status"), r.get("score"), "clock", r.get("judge_clock"), r.get("judge_clock_error"), (r.get("error") or "")[:300])
for s in r.get("shapes") or []:
    print("  ", s["shape"], s["mean_us"], s["std_us"], s["min_us"], s.get("clock"), s.get("judge_overhead_us"))
PY
}
for run in clock1 off clock2; do
  [[ $run == off ]] && export EVOLVE_JUDGE_CLOCK=0 || unset EVOLVE_JUDGE_CLOCK
  timeout 100 python3 -m qrjudge --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7 2>$OUT/seed_$run.log | tail -1 > $OUT/seed_$run.json
  show $OUT/seed_$run.json $run
done
unset EVOLVE_JUDGE_CLOCK
d=/tmp/ef; rm -rf $d; mkdir -p $d/early_finish; cp -r qrjudge $d/; cp seed_kernels/blocked_wy/kernel.py $d/early_finish/base.py
cp seed_kernels/blocked_wy/qr.cu $d/early_finish/; cp tests/cheats/early_finish.py $d/early_finish/kernel.py
for k in blocked_wy early_finish; do kd=$PWD/seed_kernels/blocked_wy; [[ $k == early_finish ]] && kd=$d/early_finish
  (cd $d && PYTHONPATH=$d:/tmp/site timeout 100 python3 -m qrjudge --kernel-dir $kd --mode quick --seed 5 > $OUT/q_$k.json 2>$OUT/q_$k.log); show $OUT/q_$k.json $k; done
echo "== cheats"
s=$(date +%s); EVOLVE_GPU_LOCKS=$(mktemp -d) timeout 210 python3 -m pytest -q -rs -m "gpu and not alone" -k planted_cheat -n 2 -p no:cacheprovider tests/test_harness_gpu.py > $OUT/gputests.out 2>&1
echo "gpu tests rc $? $(( $(date +%s) - s )) s"; grep -E "passed|failed|FAILED|ERROR|Error" $OUT/gputests.out | tail -14
