#!/bin/bash
# Session 57: RP_BCAST (reg_panel's w sent to a warp's lanes through shared memory, not 32 shuffles). 1. panels
# alone: RP_BCAST 0/1, 16 warps; 2. ncu on reg_panel2 at 640x512 both ways; 3. the judge's `full` alternating twice,
# RP_BCAST=1 against the seed; 4. the GPU tests (WG_APPLY, wgmma, the exported file). ~7 min; carry .whl, .devrun.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/r
timeout 90 python3 bench/panel_probe.py --single --with RP_BCAST=0 RP_BCAST=1 RP_WARPS=16 RP_WARPS=16,RP_BCAST=1 \
  -- 640 512 640 256 60 1024 2>&1 | grep -v Warn | tee $OUT/r/panels.txt
timeout 90 python3 bench/panel_probe.py 8 2048 2 4096 2>&1 | grep -v Warn | grep reg_ | tee -a $OUT/r/panels.txt
for b in 0 1; do
  timeout 70 ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SchedulerStats --section InstructionStats -k regex:reg_panel2 --launch-skip 1 --launch-count 1 \
    python3 bench/panel_probe.py --single --with RP_BCAST=$b -- 640 512 > $OUT/r/ncu_panel$b.txt 2>&1; echo "ncu $b rc $?"
  grep -E "Registers Per|Achieved Occupancy|Theoretical Occupancy|Duration|Issued Warp|No Eligible|Warp Cycles Per Issued|Stall|Compute \(SM\) Throughput|Issue Slots|Executed Ipc" $OUT/r/ncu_panel$b.txt | head -24
done
bc=$(python3 bench/variant.py seed_kernels/tsqr_wy RP_BCAST=1)
i=0
for k in $bc seed_kernels/tsqr_wy $bc seed_kernels/tsqr_wy; do
  i=$((i+1))
  timeout 100 python3 -m qrjudge --kernel-dir $k --mode full --seed 7 > $OUT/r/ab_$i.json 2> $OUT/r/ab_$i.err
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2][-20:], r['status'], r.get('score'), r.get('error','')[:200], ' '.join(f\"{s['shape'][:8]}:{s['mean_us']:.0f}\" for s in r.get('shapes',[])))" $OUT/r/ab_$i.json $k
done
# RP_BCAST=1 kept (for `next.sh 2 seed` on this machine) if it is faster in both of the judge's alternations
python3 - $OUT/r > /tmp/rp_bcast <<'PY'
import json, sys
score = lambda i: json.load(open(f"{sys.argv[1]}/ab_{i}.json")).get("score") or 1e9
print(int(score(1) < 0.997 * score(2) and score(3) < 0.997 * score(4)))
PY
echo "RP_BCAST kept: $(cat /tmp/rp_bcast)"
s=$(date +%s)
timeout 200 python3 -m pytest -v -m gpu -p no:cacheprovider tests/test_harness_gpu.py tests/test_export.py -k "WG_APPLY or wgmma or exported_file_passes" > $OUT/r/gpu_tests.txt 2>&1
echo "pytest rc $? $(( $(date +%s) - s )) s"; grep -E "PASSED|FAILED|SKIPPED|ERROR" $OUT/r/gpu_tests.txt | cut -c1-150
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
