#!/bin/bash
# background job: pipeline before/previous/after, then share_noise; results in /tmp/resj
R=/tmp/resj; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
nvidia-smi > $R/smi.txt 2>&1
OUT=$R/pipe BEFORE=${BEFORE_TAR:-.bench_before.tar} PREVIOUS=${PREVIOUS_TAR-.bench_prev.tar} RUN_S=${RUN_S:-110} AFTER_S=${AFTER_S:-260} SEEDS=0 bash bench/pipeline_pass.sh > $R/pipeline.out 2>&1
echo "pipeline rc $?" >> $R/status
touch $R/done1
[[ ${NOISE:-1} == 1 ]] && { OUT=$R/noise ROUNDS=5 bash bench/share_noise.sh > $R/noise.out 2>&1; echo "noise rc $?" >> $R/status; }
touch $R/done2
