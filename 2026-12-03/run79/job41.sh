#!/bin/bash
# Session 44: on an H200, #35 pt 1 (job25); elsewhere the MPS probe (job40: does a judge stream waiting on the GPU
# perturb the runner's `joined` workload when both processes share one MPS server context?)
cd "$(dirname "$0")/.."
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); echo "$gpu"; date -u +%FT%TZ
if [[ $gpu == *H200* ]]; then bash .devrun/job25.sh; else bash .devrun/job40.sh; ls /dev/shm | head; fi
