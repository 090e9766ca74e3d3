#!/bin/bash
# For the next session, after next.sh: where wg_update's warps stall, instruction by instruction (ncu's source page,
# SASS with its warp-stall samples), at 640x(512x448) w = 64: which loads, stores or HGMMA hold the tile's chain
# (session 54's ncu: long_scoreboard 30.7 k of ~64 k samples, lg_throttle 11.4 k). ~2 min. Carry .whl and .devrun.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
cat > /tmp/one_update.py <<'P'
import sys
sys.path.insert(0, "bench")
import torch
from apply_probe import load
from wgmma_probe import case, route
k = load()
route(k)
V, Wn, C = case(640, 512, 448, 64, 64)
for _ in range(3):
    k._wg_update(V, Wn, C, 1.0)
torch.cuda.synchronize()
P
timeout 200 ncu --set full --import-source yes -k regex:wg_update --launch-skip 2 --launch-count 1 -o $OUT/wgsrc \
  python3 /tmp/one_update.py > $OUT/ncu_run.txt 2>&1; echo "ncu rc $?"; tail -3 $OUT/ncu_run.txt
for how in "--print-source sass" "--print-source=sass" ""; do
  ncu -i $OUT/wgsrc.ncu-rep --page source --csv $how > $OUT/source.csv 2> $OUT/source.err && [[ -s $OUT/source.csv ]] && break
done
head -c 600 $OUT/source.csv; echo; wc -l $OUT/source.csv
python3 - $OUT/source.csv <<'P' | tee $OUT/stalls_by_instruction.txt
# the 40 instructions with the most warp-stall samples, with their SASS
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next((i for i, r in enumerate(rows) if any("Source" in c for c in r)), 0)
cols, body = rows[head], rows[head + 1:]
def col(*names):
    return next((i for i, c in enumerate(cols) if any(n.lower() in c.lower() for n in names)), None)
src, samp = col("Source"), col("Warp Stall Sampling (All", "stall_sampling", "Sampling (All")
print(cols)
if src is not None and samp is not None:
    def n(x):
        try: return float(x.replace(",", ""))
        except ValueError: return 0.0
    ranked = sorted(body, key=lambda r: -n(r[samp]) if len(r) > samp else 0)
    total = sum(n(r[samp]) for r in body if len(r) > samp)
    print(f"total samples {total:.0f}")
    for r in ranked[:40]:
        print(f"{n(r[samp]):8.0f}  {r[src][:110]}")
P
