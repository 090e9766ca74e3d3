#!/bin/bash
# For the next session, on main (8f48c12+), after job39: the same comparison under MPS (one server context for both
# processes: no turns between contexts). Does a judge stream waiting on the GPU still perturb the runner's `joined`
# workload, and what does MPS do to the runner's own times (none under MPS against none without, job39)?
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD:/tmp/site
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
command -v nvidia-cuda-mps-control || { echo "no nvidia-cuda-mps-control here"; exit 0; }
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "mps started"
for design in none enqueued none enqueued; do echo "== mps $design"
  timeout 80 python3 bench/judge_clock_probe.py --design $design --calls 100 2>&1 | grep -v CudaIPCTypes | \
    python3 -c "import json,sys
for line in sys.stdin:
    try: w = json.loads(line)
    except ValueError: print(line.rstrip()); continue
    print(w['kind'], 'runner', w['runner_us'].get('median'), w['runner_us'].get('std'), 'judge-runner', w['judge_less_runner_us'].get('median'), w['judge_less_runner_us'].get('std'), 'after start', w['runner_after_start_us'].get('median'), 'side', w['side_before_start_us'].get('max'))"
done
echo quit | nvidia-cuda-mps-control; tail -5 $CUDA_MPS_LOG_DIRECTORY/control.log 2>/dev/null
