#!/bin/bash
# Session 47's first call: on an H200, job25 (#35 pt 1); on anything else, job57 (the probes and the export half).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if [[ $gpu == *H200* ]]; then exec bash "$(dirname "$0")/job25.sh"; else exec bash "$(dirname "$0")/job57.sh"; fi
