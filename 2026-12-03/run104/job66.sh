#!/bin/bash
# Session 48 (#33 pts 1-2), any GPU: the seed with CLUSTER_MBAR=1 (now its default) against torch.geqrf and the seed
# before it (CLUSTER_MBAR=0, a variant): seed_pass (five repeats, final), then the climb's step from CLUSTER_MBAR=0,
# then the seed's GPU tests (quick, the paths by cluster, full's checks) in the time left. Carry .whl and .devrun.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
t0=$(date +%s)
s=$(date +%s)
OUT=$OUT/seed VARIANTS="CLUSTER_MBAR=0" SKIP_PROFILE=1 timeout 300 bash bench/seed_pass.sh > $OUT/seed_pass.out 2>&1
echo "seed_pass rc $? $(( $(date +%s) - s )) s"; tail -12 $OUT/seed/pass.log | cut -c1-160
s=$(date +%s)
OUT=$OUT/climb START="CLUSTER_MBAR=0" STEPS=bench/climb/steps.txt timeout 200 bash bench/climb_pass.sh > $OUT/climb.out 2>&1
echo "climb rc $? $(( $(date +%s) - s )) s"; tail -12 $OUT/climb/pass.log
left=$(( 560 - ($(date +%s) - t0) ))
echo "gpu tests with $left s"
timeout $left python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_harness_gpu.py \
  -k "seed_passes_quick and tsqr or CLUSTER or full_mode_checks" > $OUT/gpu_tests.txt 2>&1
echo "gpu tests rc $?"; tail -8 $OUT/gpu_tests.txt
tar -czf $OUT/r.tgz -C $OUT seed climb gpu_tests.txt seed_pass.out climb.out && rm -rf $OUT/seed $OUT/climb
