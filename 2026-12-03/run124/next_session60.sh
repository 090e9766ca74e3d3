#!/bin/bash
# For the next session (after session 59: RP_TILE = 1 measured on an H100 and made the seed's default, run123).
# An H200 first (issue #33 points 1 and 3 want one; nvidia-h100-x1 if none comes). Carry .whl and .devrun
# (job86.sh, job87.sh, next.sh; .devrun/QR_V2 for 3).
# 1. `1`: job87 (the GPU tests whose parameters changed with RP_TILE = 1, ~2 min), then `2 seed`: seed_pass with
#    VARIANTS="RP_TILE=0": point 1's table on the H200 (~4 min).
# 2. `5`: job86: the product's own tune sweep around the new seed (`evolve start --max-hours 0.1`, ~7 min); bring its
#    bundle back and read which moves gained.
# 3. `3`: the contest's view (export --check, eval.py), point 3 on the H200 (~4 min).
# `2` alone: the climb again from START (default RP_TILE=0); `4`: the climb and the seed table in one call.
cd "$(dirname "$0")/.."
if [[ ${1:-1} == 1 ]]; then
  bash .devrun/job87.sh; exec bash "$0" 2 seed
fi
if [[ $1 == 5 ]]; then
  exec bash .devrun/job86.sh
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s=$(date +%s)
if [[ $1 == 4 ]]; then  # the climb, then the seed table, in one call
  bash "$0" 2 && exec bash "$0" 2 seed
fi
if [[ $1 == 2 ]]; then
  [[ ${2:-} == seed ]] || {
  OUT=$OUT/climb START="${START:-RP_TILE=0}" STEPS=bench/climb/steps.txt timeout 250 bash bench/climb_pass.sh > $OUT/climb.out 2>&1
  echo "climb rc $? $(( $(date +%s) - s )) s"; tail -14 $OUT/climb/pass.log | cut -c1-220
  tar -czf $OUT/climb.tgz -C $OUT climb climb.out && rm -rf $OUT/climb; exit 0; }
  SKIP_PROFILE=1 VARIANTS="RP_TILE=0" OUT=$OUT/seed timeout 300 bash bench/seed_pass.sh > $OUT/seed_stdout.txt 2>&1
  echo "seed pass rc $? $(( $(date +%s) - s )) s"; tail -16 $OUT/seed/pass.log | cut -c1-160
  tar -czf $OUT/seed.tgz -C $OUT seed && rm -rf $OUT/seed
else
  OUT=$OUT/contest PROBLEM=.devrun/QR_V2/linalg/qr_v2 timeout 540 bash bench/contest_pass.sh > $OUT/contest.out 2>&1
  echo "contest rc $? $(( $(date +%s) - s )) s"; cut -c1-200 $OUT/contest/pass.log
  tar -czf $OUT/contest.tgz -C $OUT contest contest.out && rm -rf $OUT/contest
fi
