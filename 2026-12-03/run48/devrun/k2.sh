#!/bin/bash
# background job (session 28): GPU tests of the paths without colk_qr, then the contest pass; /tmp/resk
R=/tmp/resk; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
export PYTHONPATH=$PWD:$PYTHONPATH
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
s=$(date +%s); timeout 200 python3 -m pytest -q -m gpu tests/test_harness_gpu.py -k "paths_pass_quick and COLK_N" > $R/gputest.txt 2>&1
echo "gputest rc $? $(( $(date +%s) - s )) s" >> $R/status
s=$(date +%s); OUT=$R/contest PROBLEM=.devrun/QR_V2/linalg/qr_v2 timeout 500 bash bench/contest_pass.sh > $R/contest.out 2>&1
echo "contest rc $? $(( $(date +%s) - s )) s" >> $R/status
touch $R/done1
