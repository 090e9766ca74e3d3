#!/bin/bash
# background job: small_probe's two ways on the seed and on run39's exported file; /tmp/resb
R=/tmp/resb; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
export PYTHONPATH=$PWD:$PYTHONPATH
timeout 200 python3 bench/small_probe.py --calls 100 > $R/seed.txt 2>&1; echo "seed rc $?" >> $R/status
timeout 200 python3 bench/small_probe.py --calls 100 --kernel .devrun/exported_r39.py > $R/exported.txt 2>&1; echo "exported rc $?" >> $R/status
touch $R/done1
(
OUT=$R/judge; source bench/lib.sh; compile_cache_on
ng=$(python3 bench/variant.py seed_kernels/tsqr_wy GRAPH_BYTES=0)
qr warm_seed --kernel-dir seed_kernels/tsqr_wy --mode full
qr warm_nograph --kernel-dir $ng --mode full
for i in 1 2; do
  qr seed_$i --kernel-dir seed_kernels/tsqr_wy --mode full
  qr nograph_$i --kernel-dir $ng --mode full
done
python3 - $OUT/results.jsonl > $R/judge.txt <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line); r = d["result"]; t = r.get("timings", {})
    print(d["name"], r.get("status"), r.get("score"), {k: round(v, 3) for k, v in t.items() if isinstance(v, (int, float))})
PY
)
touch $R/done2
