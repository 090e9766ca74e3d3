#!/bin/bash
# Session 45 (#33): EXCLUSIVE (a clustered panel's blocks and the split-TF32 update's never share an SM), A/B on
# 2x4096 and 8x2048, the timeline of 2x4096 with it.
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
p() { echo "== $*"; timeout 150 python3 bench/small_probe.py "$@" 2>&1 | grep -v "loop\|host"; }
p 2 4096 --vary EXCLUSIVE=0,1 --calls 15 --loop 3
p 8 2048 --vary EXCLUSIVE=0,1 --calls 15 --loop 3
(cd bench && timeout 100 python3 timeline.py 2 4096 EXCLUSIVE=1 --steps 3 --list 14 2>&1 | grep -v "^  stream 1[0-9][0-9]:\|^  stream 2[0-9][0-9]:" | tail -22)
(cd bench && timeout 100 python3 timeline.py 8 2048 EXCLUSIVE=1 --steps 3 2>&1 | grep -v "^  stream 1[0-9][0-9]:\|^  stream 2[0-9][0-9]:" | tail -6)
