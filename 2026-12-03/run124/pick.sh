#!/bin/bash
# An H200: point 1's table (seed_pass); any other GPU: the product's tune sweep around the new seed, shorter.
cd "$(dirname "$0")/.."
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  exec bash .devrun/next.sh 2 seed
fi
HOURS=${HOURS:-0.045} SWEEP_S=${SWEEP_S:-220} exec bash .devrun/job86.sh
