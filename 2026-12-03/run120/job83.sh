#!/bin/bash
# After session 56 (not run: its device time ran out): where 640x512's panels spend their time, then the GPU tests of
# the WG_APPLY variants (WG_APPLY=1 now one). ~3 min; carry .whl and .devrun.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# where 640x512's panels (reg_panel2, 16 of 172 us median in run120's timeline) spend their time: alone, with 8 and
# 16 warps, against col_panel; then ncu's occupancy and warp states on the first panel
timeout 60 python3 bench/panel_probe.py --single --warps 8 16 -- 640 512 640 256 640 128 2>&1 | grep -v Warn | tee $OUT/panels.txt
timeout 70 ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section SchedulerStats -k regex:reg_panel2 --launch-skip 1 --launch-count 1 \
  python3 bench/panel_probe.py --single 640 512 > $OUT/ncu_panel.txt 2>&1; echo "ncu rc $?"
grep -E "Registers|Achieved Occupancy|Theoretical Occupancy|Block Limit|Waves Per SM|Duration|Issued Warp|No Eligible|Warp Cycles Per Issued|Stall|Compute \(SM\) Throughput|Memory Throughput" $OUT/ncu_panel.txt | head -40
s=$(date +%s)
timeout 150 python3 -m pytest -v -m gpu -p no:cacheprovider tests/test_harness_gpu.py -k "WG_APPLY" > $OUT/gpu_tests.txt 2>&1
echo "pytest rc $? $(( $(date +%s) - s )) s"; grep -E "PASSED|FAILED|SKIPPED|ERROR" $OUT/gpu_tests.txt | cut -c1-150
