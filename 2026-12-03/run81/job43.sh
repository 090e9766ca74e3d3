#!/bin/bash
# Session 44, #35 pt 2 on whatever GPU comes: the seed (tsqr_wy, full) five times under the judge before the issue
# (0c70fdb) and five under this tree's, interleaved, torch.geqrf in the same call. About 7 min.
cd "$(dirname "$0")/.."
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ; git log --oneline -1
export OUT=$OUT/ab
source bench/lib.sh
qr geqrf --baseline --mode full --seed 7
OLD=.devrun/issue_before.tar KERNEL=seed_kernels/tsqr_wy REPEATS=5 MODE=full bash bench/ab_judge.sh > $OUT/ab.out 2>&1
echo "ab rc $?"; tail -40 $OUT/pass.log
python3 - $OUT/results.jsonl <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
base = next((r["result"].get("score") for r in rows if r["name"] == "geqrf"), None)
for side in ("old", "new"):
    s = [r["result"].get("score") for r in rows if r["name"].startswith(side) and r["name"][3:].isdigit()]
    st = [r["result"].get("status") for r in rows if r["name"].startswith(side) and r["name"][3:].isdigit()]
    ok = [x for x in s if x]
    if len(ok) > 1:
        m = statistics.fmean(ok)
        print(side, st, s, f"mean {m:.1f} CV {100*statistics.stdev(ok)/m:.2f}% geqrf {base} -> {base/m if base else 0:.1f}x")
    else:
        print(side, st, s)
PY
