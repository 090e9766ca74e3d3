#!/bin/bash
# Session 42's first device call: on an H200, #35 pt 1 (job25); on an H100, the disarmed runner's GPU check (job26).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu; kernel $(uname -r)"
cd "$(dirname "$0")/.."
if [[ $gpu == *H200* ]]; then bash .devrun/job25.sh; else R=$OUT/res41 ROUNDS="1 2" timeout 560 bash .devrun/job30.sh; cat $OUT/res41/status; fi
