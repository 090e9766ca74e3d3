#!/bin/bash
# Session 44, on branch judge-clock: job38 (the judge's own clock against the seed and the cheats) with both
# processes clients of one MPS server (job41 measured the judge's clock there: 13.6 us over the runner's events,
# std 0.3 us, against 285-296 us and 1-100 us in two contexts)
cd "$(dirname "$0")/.."
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "mps started"
sed -i 's/timeout 220 python3 -m pytest/timeout 200 python3 -m pytest/' .devrun/job38.sh
bash .devrun/job38.sh 2>&1 | tail -60
echo get_server_list | nvidia-cuda-mps-control
echo quit | nvidia-cuda-mps-control; grep -i -E "error|fail" $CUDA_MPS_LOG_DIRECTORY/*.log | tail -5
