#!/bin/bash
# Session 50, judge 12 (the outputs copied at `done`, plain outputs, no mode left): the planted cheats it adds and the
# ones near it on a GPU, then the seed judged by judge 11 (c27d95c) and 12 alternating (scores and overhead), then
# the exported file's GPU test. On an H200, job25 (#35 pt 1) in the time left instead of the last two. Carry .whl, .devrun.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
t0=$(date +%s)
timeout 170 python3 -m pytest -q -m gpu -n 2 -p no:cacheprovider tests/test_harness_gpu.py \
  -k "after_done or lazy_ or mode_left or side_stream or flush_overlap or late_wrong or honest or frames_clock" 2>&1 \
  | tee $OUT/cheats_gpu.txt | tail -6
echo "cheats $(( $(date +%s) - t0 )) s"
if [[ $gpu == *H200* ]]; then AFTER_RUNS=1 RUN_S=90 AFTER_S=170 LIMIT=$(( 585 - ($(date +%s) - t0) )) bash .devrun/job25.sh; exit; fi
s=$(date +%s)
OUT=$OUT/ab OLD=.devrun/ab_old KERNEL=seed_kernels/tsqr_wy REPEATS=3 timeout 250 bash bench/ab_judge.sh > $OUT/ab.out 2>&1
echo "ab rc $? $(( $(date +%s) - s )) s"; tail -30 $OUT/ab/pass.log | cut -c1-180
left=$(( 585 - ($(date +%s) - t0) ))
timeout $left python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_export.py 2>&1 | tee $OUT/export_gpu_test.txt | tail -4
tar -czf $OUT/ab.tgz -C $OUT ab ab.out && rm -rf $OUT/ab
