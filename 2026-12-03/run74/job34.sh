#!/bin/bash
# Session 43: the judge-clock probe's enqueued design (cuStreamWaitValue32 on a flag the runner writes), honest with
# --side, and --early; then the planted cheats with two workers; then honest_names's start-up looked into.
cd "$(dirname "$0")/.."
here=$PWD
export PYTHONPATH=$PWD:/tmp/site
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r; date -u +%FT%TZ
for opt in "--side" "--early"; do echo "== enqueued $opt"
  timeout 120 python3 bench/judge_clock_probe.py --calls 200 $opt --out $OUT/clock_enq${opt//-/_}.json 2>&1 | grep -v CudaIPCTypes | tail -9; done
echo "== round-trip --side"; timeout 100 python3 bench/judge_clock_probe.py --design round-trip --calls 100 --side 2>&1 | grep -v CudaIPCTypes | tail -9
echo "== honest_names"
d=/tmp/hn; rm -rf $d; mkdir -p $d/honest_names; cp -r qrjudge $d/; cp seed_kernels/blocked_wy/kernel.py $d/honest_names/base.py
cp seed_kernels/blocked_wy/qr.cu $d/honest_names/; cp tests/cheats/honest_names.py $d/honest_names/kernel.py
timeout 90 python3 -c "import time; t=time.time(); import torch; a=time.time(); import torch._dynamo; print('import torch', round(a-t, 2), 's, then torch._dynamo', round(time.time()-a, 2), 's')"
s=$(date +%s); (cd $d && PYTHONPATH=$d:/tmp/site timeout 200 python3 -m qrjudge --kernel-dir $d/honest_names --mode quick --stall 150 > $OUT/hn.json 2>$OUT/hn.log)
echo "judge rc $? $(( $(date +%s) - s )) s"; python3 -c "
import json; r=json.loads(open('$OUT/hn.json').read().strip().splitlines()[-1]); print(r.get('status'), r.get('score'), (r.get('error') or '')[:300], r.get('timings'))"
echo "== cheats"
s=$(date +%s); EVOLVE_GPU_LOCKS=$(mktemp -d) timeout 260 python3 -m pytest -q -rs -m "gpu and not alone" -k planted_cheat -n 2 -p no:cacheprovider tests/test_harness_gpu.py > $OUT/gputests.out 2>&1
echo "gpu tests rc $? $(( $(date +%s) - s )) s"; grep -E "passed|failed|FAILED|ERROR" $OUT/gputests.out | tail -12
