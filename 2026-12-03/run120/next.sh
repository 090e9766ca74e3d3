#!/bin/bash
# For the next session (after session 55: WG_APPLY = 1, the whole trailing update of 640x512 and 60x1024 by wgmma.cu's
# wg_apply, measured in the judge's `full` only, on an H100: run119). Any Hopper, an H200 first. Carry .whl and .devrun.
# 1. .devrun/job82.sh: apply_probe and the GPU tests with WG_SPLIT (wg_apply_split, built since run119); the judge's
#    `full` alternating twice, WG_APPLY=2 / WG_SPLIT=1 / the seed / WG_APPLY=0; `final` on the seed: ~7 min.
# 2. the climb from START="WG_APPLY=0" (bench/climb/steps.txt's last line), then seed_pass on the seed as it ships
#    with VARIANTS="WG_APPLY=0 WG_APPLY=1": issue #33 points 2 and 1 for this seed: ~7 min.
# 3. the contest's view (export --check, eval.py; .devrun/QR_V2 assembled as run30/run108 say): ~7 min.
cd "$(dirname "$0")/.."
if [[ ${1:-1} == 1 ]]; then
  exec bash .devrun/job82.sh
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s=$(date +%s)
if [[ $1 == 2 ]]; then
  [[ ${2:-} == seed ]] || {
  OUT=$OUT/climb START="WG_APPLY=0" STEPS=bench/climb/steps.txt timeout 420 bash bench/climb_pass.sh > $OUT/climb.out 2>&1
  echo "climb rc $? $(( $(date +%s) - s )) s"; tail -14 $OUT/climb/pass.log | cut -c1-220
  tar -czf $OUT/climb.tgz -C $OUT climb climb.out && rm -rf $OUT/climb; exit 0; }
  SKIP_PROFILE=1 VARIANTS="WG_APPLY=0 WG_APPLY=1" OUT=$OUT/seed timeout 300 bash bench/seed_pass.sh > $OUT/seed_stdout.txt 2>&1
  echo "seed pass rc $? $(( $(date +%s) - s )) s"; tail -16 $OUT/seed/pass.log | cut -c1-160
  tar -czf $OUT/seed.tgz -C $OUT seed && rm -rf $OUT/seed
else
  OUT=$OUT/contest PROBLEM=.devrun/QR_V2/linalg/qr_v2 timeout 540 bash bench/contest_pass.sh > $OUT/contest.out 2>&1
  echo "contest rc $? $(( $(date +%s) - s )) s"; cut -c1-200 $OUT/contest/pass.log
  tar -czf $OUT/contest.tgz -C $OUT contest contest.out && rm -rf $OUT/contest
fi
