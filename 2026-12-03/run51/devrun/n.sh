#!/bin/bash
# background job (session 29): the relaxed lock (82a8647+) against 606869f: the README's command to 50 candidates,
# each from a fresh copy, the GPU's busy share sampled; then every cheat on the shared path; then share_noise; /tmp/resn
R=/tmp/resn; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
export PYTHONPATH=$PWD:$PYTHONPATH
nvidia-smi > $R/smi.txt 2>&1
python3 -c "import torch, cupy; torch.ones(1, device='cuda'); print('warm')" > $R/warm.txt 2>&1  # the machine's first CUDA work and disk reads, before either run
s=$(date +%s); OUT=$R/pipe BEFORE=.devrun/before.tar RUN_S=250 AFTER_S=250 SEEDS=0 bash bench/pipeline_pass.sh > $R/pipeline.out 2>&1
echo "pipeline rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done1
locks=$(mktemp -d)
s=$(date +%s); OUT=$R/cheats EVOLVE_GPU_LOCKS=$locks CHEATS_S=580 SEEDS=0 bash bench/judge_pass.sh > $R/cheats.out 2>&1
echo "cheats rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done2
s=$(date +%s); OUT=$R/noise bash bench/share_noise.sh > $R/noise.out 2>&1
echo "noise rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done3
