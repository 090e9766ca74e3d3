#!/bin/bash
# Session 45 (#33): the look-ahead by blocks of 64 (LOOKAHEAD_NB) on 2x4096, 8x2048, 40x352; 60x1024 in outer blocks
# or graphed with a look-ahead; then the judge in `full` on the seed and on LOOKAHEAD_NB = 64, same call.
cd "$(dirname "$0")/.."
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
p() { echo "== $*"; timeout 150 python3 bench/small_probe.py "$@" 2>&1 | grep -v "loop\|host"; }
p 2 4096 --vary LOOKAHEAD_NB=0,64 --calls 20 --loop 3
p 8 2048 --vary LOOKAHEAD_NB=0,64 --calls 20 --loop 3
p 40 352 --vary LOOKAHEAD_NB=0,64 --calls 60 --loop 10
p 60 1024 --vary "OUTER_FROM=256;OUTER_FROM=48;GRAPH_BYTES=268435456,LOOKAHEAD_BELOW=64;GRAPH_BYTES=268435456,LOOKAHEAD_BELOW=64,LOOKAHEAD_NB=64" --calls 10 --loop 3
rm -rf /tmp/la64 && cp -r seed_kernels/tsqr_wy /tmp/la64 && sed -i 's/^LOOKAHEAD_NB = 0 /LOOKAHEAD_NB = 64 /' /tmp/la64/kernel.py
grep -n "^LOOKAHEAD_NB" /tmp/la64/kernel.py
for dir in seed_kernels/tsqr_wy /tmp/la64; do
  timeout 120 python3 -m qrjudge --kernel-dir $dir --mode full --seed 7 2>$OUT/judge_$(basename $dir).err | tail -1 > $OUT/judge_$(basename $dir).json
  python3 -c "
import json,sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(sys.argv[2], r.get('status'), r.get('score'), (r.get('error') or '')[:300])
for s in r.get('shapes') or []: print('  ', s.get('shape'), s.get('mean_us'))
" $OUT/judge_$(basename $dir).json $dir
done
