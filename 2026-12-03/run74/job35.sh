#!/bin/bash
# Session 43: the judge's own clock (qrjudge/clock.py) on a GPU for the first time.
# 1 the probe's enqueued design, --side and --early (stream memory operations work here? the runner's side stream
#   before the judge's start?)  2 the seed in `full` with the judge's clock twice, without it once (same call)
# 3 the planted cheats (two workers)  4 honest_names's start-up
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD:/tmp/site
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r; date -u +%FT%TZ
for opt in "--side" "--early"; do echo "== probe enqueued $opt"
  timeout 100 python3 bench/judge_clock_probe.py --calls 150 $opt --out $OUT/clock_enq${opt//-/_}.json 2>&1 | grep -v CudaIPCTypes | tail -9; done
for run in clock1 off clock2; do
  [[ $run == off ]] && export EVOLVE_JUDGE_CLOCK=0 || unset EVOLVE_JUDGE_CLOCK
  timeout 100 python3 -m qrjudge --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7 2>$OUT/seed_$run.log | tail -1 > $OUT/seed_$run.json
  python3 - $OUT/seed_$run.json $run <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read())
print(sys.argv[2], r.get("status"), r.get("score"), "clock", r.get("judge_clock"), r.get("judge_clock_error"), (r.get("error") or "")[:300])
for s in r.get("shapes") or []:
    print("  ", s["shape"], s["mean_us"], s["std_us"], s.get("clock"), s.get("judge_overhead_us"))
PY
done
unset EVOLVE_JUDGE_CLOCK
echo "== cheats"
s=$(date +%s); EVOLVE_GPU_LOCKS=$(mktemp -d) timeout 250 python3 -m pytest -q -rs -m "gpu and not alone" -k planted_cheat -n 2 -p no:cacheprovider tests/test_harness_gpu.py > $OUT/gputests.out 2>&1
echo "gpu tests rc $? $(( $(date +%s) - s )) s"; grep -E "passed|failed|FAILED|ERROR|Error" $OUT/gputests.out | tail -14
echo "== honest_names"
d=/tmp/hn; rm -rf $d; mkdir -p $d/honest_names; cp -r qrjudge $d/; cp seed_kernels/blocked_wy/kernel.py $d/honest_names/base.py
cp seed_kernels/blocked_wy/qr.cu $d/honest_names/; cp tests/cheats/honest_names.py $d/honest_names/kernel.py
timeout 60 python3 -c "import time; t=time.time(); import torch; a=time.time(); import torch._dynamo; print('import torch', round(a-t, 2), 's, then torch._dynamo', round(time.time()-a, 2), 's')"
s=$(date +%s); (cd $d && PYTHONPATH=$d:/tmp/site timeout 150 python3 -m qrjudge --kernel-dir $d/honest_names --mode quick --stall 120 > $OUT/hn.json 2>$OUT/hn.log)
echo "judge rc $? $(( $(date +%s) - s )) s"; python3 -c "
import json; r=json.loads(open('$OUT/hn.json').read().strip().splitlines()[-1]); print(r.get('status'), r.get('score'), (r.get('error') or '')[:300], r.get('timings'))"
