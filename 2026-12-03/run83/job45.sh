#!/bin/bash
# For the next session (main, any GPU, about 3 min): one MPS server per evaluation as evolve would share a GPU (the
# GPU's lock across both, EVOLVE_GPU_LOCKS): the seed in `full` under server A while, under server B, illegal_address
# faults and blocked_wy is judged after it. Does A's score stay that of the seed without MPS (run in the same call,
# before), does B's next evaluation run, and does A see anything of B's fault (it cannot run during A's timed region)?
cd "$(dirname "$0")/.."
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
summary() { python3 -c "
import json,sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(sys.argv[2], r.get('status'), r.get('score'), (r.get('error') or '')[:240])
" "$@"; }
judge() { timeout 150 python3 -m qrjudge "$@" 2>/dev/null | tail -1; }
judge --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7 > $OUT/seed_plain.json; summary $OUT/seed_plain.json "seed, no MPS"
command -v nvidia-cuda-mps-control >/dev/null || { echo "no MPS here"; exit 0; }
for s in a b; do mkdir -p /tmp/mps-$s/pipe /tmp/mps-$s/log
  CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-$s/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-$s/log nvidia-cuda-mps-control -d; done
export EVOLVE_GPU_LOCKS=$(mktemp -d)
d=/tmp/cheat; rm -rf $d; mkdir -p $d; cp seed_kernels/blocked_wy/kernel.py $d/base.py; cp seed_kernels/blocked_wy/qr.cu $d/
cp tests/cheats/illegal_address.py $d/kernel.py
(CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-a/pipe judge --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7 > $OUT/seed_a.json) &
sleep 6
CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-b/pipe judge --kernel-dir $d --mode quick --seed 5 > $OUT/wild_b.json
CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-b/pipe judge --kernel-dir seed_kernels/blocked_wy --mode quick --seed 5 > $OUT/next_b.json
wait
summary $OUT/seed_a.json "seed under A"; summary $OUT/wild_b.json "illegal_address under B"; summary $OUT/next_b.json "blocked_wy under B after it"
CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-a/pipe judge --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7 > $OUT/seed_a2.json; summary $OUT/seed_a2.json "seed under A, alone"
for s in a b; do echo quit | CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-$s/pipe nvidia-cuda-mps-control; grep -v "NEW UI\|Cmd:" /tmp/mps-$s/log/*.log | tail -4; done
