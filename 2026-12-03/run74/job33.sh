#!/bin/bash
# For the next session: the judge-owned clock probe (bench/judge_clock_probe.py), honest and --early (under 2 min),
# then the seed in `full` by this judge (68ba843+: the runner's wall over its events calibrated) three times.
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD:/tmp/site
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r
timeout 150 python3 bench/judge_clock_probe.py --calls 300 --out $OUT/clock.json 2>&1 | tail -9
timeout 100 python3 bench/judge_clock_probe.py --calls 100 --early 2>&1 | tail -9
for i in 1 2 3; do timeout 90 python3 -m qrjudge --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7 2>/dev/null | tail -1 > $OUT/seed_$i.json
  python3 -c "import json; r=json.loads(open('$OUT/seed_$i.json').read()); print('seed', r.get('status'), r.get('score'), (r.get('error') or '')[:200])"; done
