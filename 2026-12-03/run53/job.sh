#!/bin/bash
# background job (session 30): the lock with writers first (this tree) against 0ef9822 (head.tar): the README's
# command, before per_gpu 2, after per_gpu 2 and 4, each from a fresh copy, bounded at 200 s; the three cheats run51
# missed, on the shared path; share_noise with three neighbours. /tmp/resp
R=/tmp/resp; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
export PYTHONPATH=$PWD:$PYTHONPATH
nvidia-smi > $R/smi.txt 2>&1; nproc >> $R/smi.txt
python3 -c "import torch, cupy; torch.ones(1, device='cuda'); print('warm')" > $R/warm.txt 2>&1
s=$(date +%s); OUT=$R/pipe BEFORE=.devrun/head.tar RUN_S=200 AFTER_S=200 SEEDS=0 PER_GPU="4" bash bench/pipeline_pass.sh > $R/pipeline.out 2>&1
echo "pipeline rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done1
locks=$(mktemp -d)
s=$(date +%s); OUT=$R/cheats EVOLVE_GPU_LOCKS=$locks CHEATS_S=200 CHEATS_K="flush_overlap or misreporting" SEEDS=0 bash bench/judge_pass.sh > $R/cheats.out 2>&1
echo "cheats rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done2
s=$(date +%s); OUT=$R/noise NEIGHBOURS=3 ROUNDS=3 bash bench/share_noise.sh > $R/noise.out 2>&1
echo "noise rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done3
