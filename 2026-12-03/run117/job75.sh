#!/bin/bash
# Session 54: wg_update_piped took 1.59 ms where wg_update takes 0.74 (run113): where does a tile's time go? ncu's
# warp stall reasons for both, and WG_STAGES 3. ~3 min.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
timeout 100 python3 .devrun/ncu_wg.py 2>&1 | grep -v '^route' | tee $OUT/stages.txt
which ncu || ls /usr/local/cuda/bin | grep -i ncu
NCU=1 timeout 300 ncu --set full -k regex:wg_update --launch-skip 2 --launch-count 2 -o $OUT/wg python3 .devrun/ncu_wg.py > $OUT/ncu_run.txt 2>&1
echo "ncu rc $?"; tail -5 $OUT/ncu_run.txt
ncu -i $OUT/wg.ncu-rep --page details > $OUT/details.txt 2>&1
grep -E 'wg_update|Duration|Throughput|Stall|Warp Cycles|Issued|Eligible|Active Warps|Registers|Shared Memory Config|Achieved|Theoretical Occ|L1/TEX Hit|Mem Busy|Max Bandwidth|DRAM' $OUT/details.txt | head -120
ncu -i $OUT/wg.ncu-rep --page raw --csv --metrics 'regex:smsp__pcsamp_warps_issue_stalled_.*' > $OUT/stalls.csv 2>&1
python3 - $OUT/stalls.csv <<'P'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
if len(rows) > 2:
    head = rows[0]
    for r in rows[2:]:
        name = r[head.index("Kernel Name")] if "Kernel Name" in head else "?"
        pairs = [(h, v) for h, v in zip(head, r) if "pcsamp_warps_issue_stalled" in h and not h.endswith("not_issued")]
        vals = sorted(((float(v.replace(",", "")) if v.replace(",", "").replace(".", "").isdigit() else 0, h) for h, v in pairs), reverse=True)
        print(name, [(h.replace("smsp__pcsamp_warps_issue_stalled_", ""), v) for v, h in vals[:8]])
P
