#!/bin/bash
# Session 58: tile_panel and tile_cluster (RP_TILE: a thread's rows of 8 columns, 7 + 8 shuffles a column where
# reg_panel takes 31 + 32; emulator-checked, never run on a GPU). 1. the GPU tests -k RP_TILE; 2. panels alone,
# reg_panel vs tile_panel vs col_panel (8 and 16 warps), reg_cluster vs tile_cluster (8x2048, 2x4096); 3. ncu on
# tile_panel8 at 640x512; 4. the judge's `full` alternating twice, RP_TILE=1 against the seed (while time is left).
# ~8 min; carry .whl and .devrun. Keep RP_TILE only if the probe AND both alternations say so (session 57's lesson:
# one outlier in a `full` pair decided RP_BCAST).
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $OUT/r
s=$(date +%s)
timeout 180 python3 -m pytest -v -m gpu -p no:cacheprovider tests/test_harness_gpu.py -k "RP_TILE" > $OUT/r/gpu_tests.txt 2>&1
echo "pytest rc $? $(( $(date +%s) - s )) s"; grep -E "PASSED|FAILED|SKIPPED|ERROR" $OUT/r/gpu_tests.txt | cut -c1-150
timeout 120 python3 bench/panel_probe.py --single --warps 8 16 -- 640 512 640 256 640 128 60 1024 60 512 2>&1 | grep -v Warn | tee $OUT/r/panels.txt
timeout 60 python3 bench/panel_probe.py 8 2048 2 4096 2>&1 | grep -v Warn | grep -E "reg_|tile_" | tee -a $OUT/r/panels.txt
timeout 60 ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section SchedulerStats --section InstructionStats -k regex:tile_panel8 --launch-skip 1 --launch-count 1 \
  python3 bench/panel_probe.py --single 640 512 > $OUT/r/ncu_tile.txt 2>&1; echo "ncu rc $?"
grep -E "Registers Per|Achieved Occupancy|Theoretical Occupancy|Duration|Issued Warp|No Eligible|Warp Cycles Per Issued|Executed Ipc|Block Limit Reg" $OUT/r/ncu_tile.txt | head -16
tile=$(python3 bench/variant.py seed_kernels/tsqr_wy RP_TILE=1)
i=0
for k in $tile seed_kernels/tsqr_wy $tile seed_kernels/tsqr_wy; do
  i=$((i+1))
  (( $(date +%s) - s > 470 )) && { echo "no time left for judge run $i"; break; }  # the call's limit is 600 s
  timeout 80 python3 -m qrjudge --kernel-dir $k --mode full --seed 7 > $OUT/r/ab_$i.json 2> $OUT/r/ab_$i.err
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2][-20:], r['status'], r.get('score'), r.get('error','')[:200], ' '.join(f\"{s['shape'][:8]}:{s['mean_us']:.0f}\" for s in r.get('shapes',[])))" $OUT/r/ab_$i.json $k
done
# the verdict: RP_TILE kept (for the calls after this one) only if tile_panel8 beat reg_panel2 at 640x512 in the probe
# by 3% or more AND RP_TILE=1 scored lower than the seed in both alternations
python3 - $OUT/r <<'PY' | tee $OUT/r/verdict.txt
import json, re, sys
d = sys.argv[1]
text = open(f"{d}/panels.txt").read()
def us(name):
    found = re.search(rf"640x512 {name} +([0-9.]+) us a panel", text)
    return float(found.group(1)) if found else None
reg, tile = us("reg_panel2"), us("tile_panel8")
def score(i):
    try:
        return json.load(open(f"{d}/ab_{i}.json")).get("score")
    except (OSError, ValueError):
        return None
s = [score(i) for i in (1, 2, 3, 4)]
probe = reg is not None and tile is not None and tile < 0.97 * reg
judge = None not in s and s[0] < s[1] and s[2] < s[3]
print(f"640x512 panel: reg_panel2 {reg} us, tile_panel8 {tile} us; full: RP_TILE=1 {s[0]}, {s[2]} against {s[1]}, {s[3]}")
print("RP_TILE: keep" if probe and judge else "RP_TILE: drop (or measure more)")
PY
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r
