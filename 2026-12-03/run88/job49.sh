#!/bin/bash
# Session 45 (#33): narrow_cluster with its second pass's loads batched (job48: 38 us a launch on 2x4096), A/B by
# NARROW_BELOW on the small-batch shapes, its timeline on 2x4096.
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
p() { echo "== $*"; timeout 150 python3 bench/small_probe.py "$@" 2>&1 | grep -v "loop\|host"; }
p 2 4096 --vary NARROW_BELOW=0,64 --calls 15 --loop 3
p 8 2048 --vary NARROW_BELOW=0,64 --calls 15 --loop 3
p 40 352 --vary NARROW_BELOW=0,64 --calls 60 --loop 10
(cd bench && timeout 100 python3 timeline.py 2 4096 NARROW_BELOW=64 --steps 4 --list 12 2>&1 | grep -v "^  stream 1[0-9][0-9]:\|^  stream 2[0-9][0-9]:" | tail -20)
(cd bench && timeout 100 python3 timeline.py 40 352 NARROW_BELOW=64 --steps 4 --list 12 2>&1 | grep -v "^  stream 1[0-9][0-9]:\|^  stream 2[0-9][0-9]:" | tail -20)
