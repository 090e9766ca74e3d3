#!/bin/bash
# Session 45 (#33): chunk_tw (the chunks' sum, T^T and the negation in one launch), A/B by
# CHUNK_TW_BELOW on 2x4096, 8x2048, 60x1024, the timeline of 2x4096 with it, then the judge in `full`: the seed
# (CHUNK_TW_BELOW = 0) and CHUNK_TW_BELOW = 64, same call.
cd "$(dirname "$0")/.."
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
p() { echo "== $*"; timeout 150 python3 bench/small_probe.py "$@" 2>&1 | grep -v "loop\|host"; }
p 2 4096 --vary CHUNK_TW_BELOW=0,64 --calls 15 --loop 3
p 8 2048 --vary CHUNK_TW_BELOW=0,64 --calls 15 --loop 3
p 60 1024 --vary CHUNK_TW_BELOW=0,64 --calls 10 --loop 3
(cd bench && timeout 100 python3 timeline.py 2 4096 CHUNK_TW_BELOW=64 --steps 3 --list 14 2>&1 | grep -v "^  stream 1[0-9][0-9]:\|^  stream 2[0-9][0-9]:" | tail -22)
rm -rf /tmp/f64 && cp -r seed_kernels/tsqr_wy /tmp/f64 && sed -i "s/^CHUNK_TW_BELOW = 0 /CHUNK_TW_BELOW = 64 /" /tmp/f64/kernel.py
grep -n "^CHUNK_TW_BELOW" /tmp/f64/kernel.py
for dir in seed_kernels/tsqr_wy /tmp/f64; do
  timeout 120 python3 -m qrjudge --kernel-dir $dir --mode full --seed 7 2>$OUT/judge_$(basename $dir).err | tail -1 > $OUT/judge_$(basename $dir).json
  python3 -c "
import json,sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(sys.argv[2], r.get('status'), r.get('score'), (r.get('error') or '')[:300])
for s in r.get('shapes') or []: print('  ', s.get('shape'), s.get('mean_us'))
" $OUT/judge_$(basename $dir).json $dir
done
