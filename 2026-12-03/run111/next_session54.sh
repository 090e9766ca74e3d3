#!/bin/bash
# For the next session (after session 53: wgmma.cu measured on an H100 and slower in the seed; lane_qr's dot product
# off the chain made the seed's, measured on an H100 only). Any Hopper, an H200 first (the README's figures are an
# H200's). Carry .whl and .devrun.
# 1. bench/seed_pass.sh on the seed as it ships (geqrf, blocked_wy, the seed in `full`, five repeats, `final`), the
#    variant WG_FROM=48, then the seed before session 53 (.devrun/prev_seed: `git archive e2f9c23
#    seed_kernels/tsqr_wy`, LANE_QR 1 there was the old lane_qr) in `full`, seed 7: ~7 min.
# 2. the rest of bench/wgmma_probe.py (its edge case mended: the one-chain build, wg_vtc's chunks): ~2 min.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
if [[ ${1:-1} == 1 ]]; then
  s=$(date +%s)
  SKIP_PROFILE=1 VARIANTS="WG_FROM=48" OUT=$OUT/seed timeout 420 bash bench/seed_pass.sh > $OUT/seed_stdout.txt 2>&1
  echo "seed pass rc $? $(( $(date +%s) - s )) s"; tail -30 $OUT/seed/pass.log
  timeout 100 python3 -m qrjudge --kernel-dir .devrun/prev_seed/seed_kernels/tsqr_wy --mode full --seed 7 \
    > $OUT/prev_seed.json 2> $OUT/prev_seed.err
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('previous seed', r['status'], r.get('score'))" $OUT/prev_seed.json
else
  timeout 200 python3 bench/wgmma_probe.py 2>&1 | tee $OUT/wgmma_probe.txt | tail -30
fi
