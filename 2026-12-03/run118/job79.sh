#!/bin/bash
# For the next session (after session 54: WG_FROM = 48, C -= V W of 640x512's and 60x1024's wide updates by
# wgmma.cu's wg_update, measured on H100s only). Any Hopper, an H200 first (the README's H200 figure is for the seed
# before two steps). Carry .whl and .devrun.
# 1. .devrun/wg_ab.py: wg_update with V's values loaded together (b4b21c4, reverted on main until measured:
#    .devrun/v_ahead is `git archive b4b21c4 seed_kernels/tsqr_wy`) against the seed's wg_update; then
#    bench/seed_pass.sh on the seed as it ships (geqrf, blocked_wy, the seed in `full`, five repeats, `final`) and the
#    seed before wg_update (WG_FROM=0) in the same run: issue #33 point 1's table for this seed; the judge's `full` on
#    .devrun/v_ahead and the seed, alternating (if v_ahead wins: `git cherry-pick b4b21c4`); then bench/timeline.py
#    on 640x512 and 60x1024 (which stream is the critical path now that C -= V W is wgmma's): ~6 min.
# 2. the contest's view of this seed (#33 point 3: export --check, GPU MODE's eval.py test and benchmark modes, a fresh
#    extension directory; wgmma.cu now compiles at import on a Hopper): ~7 min (run108's job68.sh).
# 3. .devrun/ncu_source.sh: wg_update's warp stalls instruction by instruction (what holds a tile's chain): ~2 min.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [[ ${1:-1} == 3 ]]; then
  bash .devrun/ncu_source.sh
elif [[ ${1:-1} == 1 ]]; then
  timeout 120 python3 .devrun/wg_ab.py 2>&1 | tee $OUT/wg_ab.txt | grep -v Warning
  s=$(date +%s)
  SKIP_PROFILE=1 VARIANTS="WG_FROM=0" OUT=$OUT/seed timeout 300 bash bench/seed_pass.sh > $OUT/seed_stdout.txt 2>&1
  echo "seed pass rc $? $(( $(date +%s) - s )) s"; tail -16 $OUT/seed/pass.log | cut -c1-160
  i=0
  for k in .devrun/v_ahead/seed_kernels/tsqr_wy seed_kernels/tsqr_wy .devrun/v_ahead/seed_kernels/tsqr_wy; do
    i=$((i+1))
    timeout 100 python3 -m qrjudge --kernel-dir $k --mode full --seed 7 > $OUT/ab_$i.json 2> $OUT/ab_$i.err
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r['status'], r.get('score'), ' '.join(f\"{s['shape'][:8]}:{s['mean_us']:.0f}\" for s in r.get('shapes',[]) if s['shape'][:3] in ('640', '60x')))" $OUT/ab_$i.json $k
  done
  for shape in "640 512" "60 1024"; do
    timeout 90 python3 bench/timeline.py $shape > "$OUT/timeline_${shape/ /x}.txt" 2>&1
    grep -E 'kernels,|busy|panels:' "$OUT/timeline_${shape/ /x}.txt"
  done
else
  export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
  s=$(date +%s)
  OUT=$OUT/contest PROBLEM=.devrun/QR_V2/linalg/qr_v2 timeout 540 bash bench/contest_pass.sh > $OUT/contest.out 2>&1
  echo "contest rc $? $(( $(date +%s) - s )) s"; cut -c1-200 $OUT/contest/pass.log
  tar -czf $OUT/contest.tgz -C $OUT contest contest.out && rm -rf $OUT/contest
fi
