#!/bin/bash
# For the next session, on main (8f48c12+): does a judge stream waiting on the GPU during a call perturb the call?
# The probe's `none` design (nothing of the judge's waits) against `enqueued`, the `joined` workload the one to read
# (its stream waits on a side stream mid-call). About 90 s. Then, on branch judge-clock, job38.sh.
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD:/tmp/site
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
for design in none enqueued none enqueued; do echo "== $design"
  timeout 80 python3 bench/judge_clock_probe.py --design $design --calls 100 --out $OUT/probe_$design.json 2>&1 | grep -v CudaIPCTypes | \
    python3 -c "import json,sys
for line in sys.stdin:
    try: w = json.loads(line)
    except ValueError: print(line.rstrip()); continue
    print(w['kind'], 'runner', w['runner_us'].get('median'), w['runner_us'].get('std'), 'judge-runner', w['judge_less_runner_us'].get('median'), w['judge_less_runner_us'].get('std'))"
done
