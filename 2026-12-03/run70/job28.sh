#!/bin/bash
# The smallest GPU check of the disarmed runner (about 200 s): the extension cheats, two honest planted candidates and
# a library call the dispatcher refuses, then the seed once in `quick` by this judge. Results under $OUT/res41.
R=$OUT/res41; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >> $R/status 2>&1
export PYTHONPATH=$PWD:/tmp/site
echo "gpu $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) $(date -u +%FT%TZ)" >> $R/status
echo "tools: $(command -v c++ ninja | tr '\n' ' ')" >> $R/status
s=$(date +%s); EVOLVE_GPU_LOCKS=$(mktemp -d) timeout 120 python3 -m pytest -q -rs -m gpu -n 2 -p no:cacheprovider \
  -k "planted_cheat and (extension or honest or geqrf_direct or cublas_batched)" tests/test_harness_gpu.py > $R/gputests.out 2>&1
echo "gpu tests rc $? $(( $(date +%s) - s )) s" >> $R/status; grep -E "passed|failed|FAILED|ERROR|SKIP" $R/gputests.out | tail -12 >> $R/status
timeout 50 python3 -m qrjudge --kernel-dir seed_kernels/tsqr_wy --mode quick --seed 7 > $R/seed_quick.json 2>> $R/harness.log
python3 - $R/seed_quick.json >> $R/status <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1]); t = r.get("timings", {})
print("seed quick", r.get("status"), r.get("score"), "judge", r.get("judge"), r.get("runner_isolation"),
      {k: v for k, v in t.items() if "setup" in k}, (r.get("error") or "")[:200])
PY
cat $R/status
