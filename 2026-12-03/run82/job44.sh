#!/bin/bash
# Session 44, last call: (a) main's judge on the GPU after the CPU self-test's change (timed.timed_us: on a GPU the
# runner's events as before): tsqr_wy full once; (b) MPS, one server per evaluation: two control daemons with their
# own pipe directories on one GPU; under A the seed judged in `full`, under B meanwhile a wild write (an illegal
# address). Does A's evaluation survive B's fault (and do two servers coexist at all)?
cd "$(dirname "$0")/.."
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; git log --oneline -1
summary() { python3 -c "
import json,sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(sys.argv[2], r.get('status'), r.get('score'), (r.get('error') or '')[:200])
for s in r.get('shapes') or []: print('  ', s['shape'], s['median_us'], s.get('reported_median_us'), s['unexplained_us'])
" "$@"; }
timeout 120 python3 -m qrjudge --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7 2>$OUT/seed.log | tail -1 > $OUT/seed.json
summary $OUT/seed.json "seed (no MPS)"
command -v nvidia-cuda-mps-control >/dev/null || { echo "no MPS here"; exit 0; }
for s in a b; do mkdir -p /tmp/mps-$s/pipe /tmp/mps-$s/log
  CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-$s/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-$s/log nvidia-cuda-mps-control -d && echo "daemon $s"; done
(export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-a/pipe; timeout 150 python3 -m qrjudge --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7 2>$OUT/seed_a.log | tail -1 > $OUT/seed_a.json) &
sleep 12
CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-b/pipe timeout 60 python3 - <<'PY' 2>&1 | tail -3
import cupy as cp, time
k = cp.RawKernel(r'extern "C" __global__ void wild(float* p) { p[threadIdx.x + (1ull << 40)] = 1.0f; }', "wild")
x = cp.zeros(32, dtype=cp.float32); t = time.time()
try:
    k((1,), (32,), (x,)); cp.cuda.runtime.deviceSynchronize(); print("B: no fault?")
except Exception as e:
    print("B faulted:", type(e).__name__, str(e)[:120], f"{time.time() - t:.2f} s")
PY
(export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-b/pipe; timeout 60 python3 -c "import cupy as cp; print('B again:', float(cp.arange(4).sum()))" 2>&1 | tail -1)
wait
summary $OUT/seed_a.json "seed under A, B faulting beside it"
for s in a b; do echo "== server $s"; echo get_server_list | CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-$s/pipe nvidia-cuda-mps-control
  echo quit | CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-$s/pipe nvidia-cuda-mps-control; grep -v "NEW UI\|Cmd:" /tmp/mps-$s/log/*.log | tail -6; done
