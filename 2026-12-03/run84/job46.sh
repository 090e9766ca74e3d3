#!/bin/bash
# Session 44: the verdict's gpu.mps and flag, without and with an MPS server (blocked_wy, quick)
cd "$(dirname "$0")/.."
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
show() { python3 -c "
import json,sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(sys.argv[2], r.get('status'), r.get('score'), 'gpu.mps', (r.get('gpu') or {}).get('mps'), 'flags', r.get('flags'), (r.get('error') or '')[:200])
" "$@"; }
timeout 90 python3 -m qrjudge --kernel-dir seed_kernels/blocked_wy --mode quick --seed 5 2>/dev/null | tail -1 > $OUT/plain.json; show $OUT/plain.json "no MPS"
command -v nvidia-cuda-mps-control >/dev/null || { echo "no MPS here"; exit 0; }
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps/log; mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
timeout 90 python3 -m qrjudge --kernel-dir seed_kernels/blocked_wy --mode quick --seed 5 2>/dev/null | tail -1 > $OUT/mps.json; show $OUT/mps.json "under MPS"
echo quit | nvidia-cuda-mps-control
