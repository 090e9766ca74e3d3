#!/bin/bash
# Session 42: session 41's job (job26) on the sealed runner (anti-cheat 11), with the seal's and disarm's unit tests first
# 1 the planted cheats' GPU tests with two workers (extension_cublas and extension_lapack among them)      -> done1
# 2 the seed in `full` (seed 7) by the judge before (09566aa) and this one, alternating, twice each: the score and
#   the runner's set-up (its `guard` lap now includes the disarming)                                  -> done2
R=${R:-/tmp/res41}; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
here=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >> $R/status 2>&1
export PYTHONPATH=$here:/tmp/site
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); echo "gpu $gpu $(date -u +%FT%TZ)" >> $R/status
echo "tools: $(command -v c++ ninja nvcc | tr '\n' ' ')" >> $R/status
echo "kernel $(uname -r)" >> $R/status
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_seal.py tests/test_disarm.py > $R/seal_tests.out 2>&1; echo "seal tests rc $?: $(tail -1 $R/seal_tests.out)" >> $R/status
s=$(date +%s); EVOLVE_GPU_LOCKS=$(mktemp -d) timeout 220 python3 -m pytest -q -rs -m "gpu and not alone" -k planted_cheat -n 2 -p no:cacheprovider tests/test_harness_gpu.py > $R/gputests.out 2>&1
echo "gpu tests rc $? $(( $(date +%s) - s )) s" >> $R/status; grep -E "passed|failed|FAILED|ERROR" $R/gputests.out | tail -8 >> $R/status; touch $R/done1
mkdir -p /tmp/before && tar -xf .devrun/before_disarm.tar -C /tmp/before
for i in ${ROUNDS:-1}; do
  for tree in before now; do
    root=$here; [[ $tree == before ]] && root=/tmp/before
    (cd $root && PYTHONPATH=$root:/tmp/site timeout 120 python3 -m qrjudge --kernel-dir $here/seed_kernels/tsqr_wy --mode full --seed 7 > $R/${tree}_$i.json 2>> $R/harness.log)
    python3 - $R/${tree}_$i.json >> $R/status <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); t = r.get("timings", {})
print(sys.argv[1].split("/")[-1], r.get("status"), r.get("score"), "judge", r.get("judge"), "setup", t.get("runner_setup_s"),
      {k: v for k, v in t.items() if "setup" in k}, str(r.get("runner_isolation"))[-170:], (r.get("error") or "")[:200])
PY
  done
done
touch $R/done2
