#!/bin/bash
# For the next session (after session 49): on any GPU first the exported file's GPU test (the stand-in's NVRTC flag,
# 0d608ed, not yet run on a GPU; about 60 s); then on an H200 job25 (#35 pt 1, about 480 s), and in later calls
# job66 (seed_pass and the climb: #33 pts 1-2) and job68 (the contest's eval.py on the exported seed: #33 pt 3; needs
# .devrun/QR_V2, the contest's qr_v2 files). Carry .whl and .devrun.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_export.py 2>&1 | tee $OUT/export_gpu_test.txt | tail -4
if [[ $gpu == *H200* ]]; then AFTER_RUNS=1 LIMIT=440 bash .devrun/job25.sh; fi  # one after run: the call's 600 s
