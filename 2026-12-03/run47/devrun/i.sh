#!/bin/bash
# background job (session 28): the colk_qr seed: GPU tests of the paths, seed pass (COLK_N=0 the seed before),
# the climb (START COLK_N=0), the contest pass (export, eval.py test + benchmark, small_probe); /tmp/resi
R=/tmp/resi; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
export PYTHONPATH=$PWD:$PYTHONPATH
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
nvidia-smi > $R/smi.txt 2>&1
s=$(date +%s); timeout 200 python3 -m pytest -q -m gpu tests/test_harness_gpu.py -k "paths_pass_quick and (COLK_N or COL_N=0)" > $R/gputest.txt 2>&1
echo "gputest rc $? $(( $(date +%s) - s )) s" >> $R/status
s=$(date +%s); OUT=$R/seed VARIANTS="COLK_N=0" SKIP_PROFILE=1 timeout 420 bash bench/seed_pass.sh > $R/seed.out 2>&1
echo "seed_pass rc $? $(( $(date +%s) - s )) s" >> $R/status
touch $R/done1
s=$(date +%s); OUT=$R/climb STEPS=bench/climb/steps.txt START="COLK_N=0" timeout 300 bash bench/climb_pass.sh > $R/climb.out 2>&1
echo "climb rc $? $(( $(date +%s) - s )) s" >> $R/status
touch $R/done2
s=$(date +%s); OUT=$R/contest PROBLEM=.devrun/QR_V2/linalg/qr_v2 timeout 540 bash bench/contest_pass.sh > $R/contest.out 2>&1
echo "contest rc $? $(( $(date +%s) - s )) s" >> $R/status
touch $R/done3
