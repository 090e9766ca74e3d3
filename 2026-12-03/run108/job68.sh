#!/bin/bash
# Session 49 (#33 pt 3), on an H200: the seed as the contest sees it: a run of it, `evolve export best --format gpumode
# --check`, GPU MODE's eval.py (test and benchmark modes, all 14 benchmarks, a fresh extension directory: the first
# import's build is in its time) and small_probe on the file. The problem directory (.devrun/QR_V2) is the contest's
# qr_v2 files as its public repositories have them (eval.py without its leaderboard and profile modes, unused here).
# About 7 minutes. Carry .whl and .devrun.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
s=$(date +%s)
OUT=$OUT/contest PROBLEM=.devrun/QR_V2/linalg/qr_v2 timeout ${LIMIT:-540} bash bench/contest_pass.sh > $OUT/contest.out 2>&1
echo "contest rc $? $(( $(date +%s) - s )) s"; cat $OUT/contest/pass.log | cut -c1-200
tar -czf $OUT/contest.tgz -C $OUT contest contest.out && rm -rf $OUT/contest
