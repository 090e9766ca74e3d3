#!/bin/bash
# Session 45 (#33): narrow_cluster (the look-ahead's update of the next panel in one FP32 cluster launch), A/B by
# NARROW_BELOW on the small-batch shapes, its timeline on 2x4096 (seed default), then the judge in `full`: the seed (NARROW_BELOW
# = 0) and NARROW_BELOW = 64, same call.
cd "$(dirname "$0")/.."
[ -d /tmp/site/git ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +%FT%TZ
p() { echo "== $*"; timeout 150 python3 bench/small_probe.py "$@" 2>&1 | grep -v "loop\|host"; }
p 2 4096 --vary "NARROW_BELOW=0;NARROW_BELOW=64;NARROW_BELOW=64,LOOKAHEAD_NB=64" --calls 15 --loop 3
p 8 2048 --vary "NARROW_BELOW=0;NARROW_BELOW=64;NARROW_BELOW=64,LOOKAHEAD_NB=64" --calls 15 --loop 3
p 40 352 --vary NARROW_BELOW=0,64 --calls 60 --loop 10
p 60 1024 --vary "NARROW_BELOW=0;NARROW_BELOW=64;GRAPH_BYTES=268435456,LOOKAHEAD_BELOW=64,NARROW_BELOW=64" --calls 10 --loop 3
(cd bench && timeout 100 python3 timeline.py 2 4096 NARROW_BELOW=64 --steps 4 --list 16 2>&1 | grep -v "^  stream 1[0-9][0-9]:\|^  stream 2[0-9][0-9]:" | tail -24)
rm -rf /tmp/nar0 && cp -r seed_kernels/tsqr_wy /tmp/nar0 && sed -i "s/^NARROW_BELOW = 0 /NARROW_BELOW = 64 /" /tmp/nar0/kernel.py
grep -n "^NARROW_BELOW" /tmp/nar0/kernel.py
for dir in seed_kernels/tsqr_wy /tmp/nar0; do
  timeout 120 python3 -m qrjudge --kernel-dir $dir --mode full --seed 7 2>$OUT/judge_$(basename $dir).err | tail -1 > $OUT/judge_$(basename $dir).json
  python3 -c "
import json,sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(sys.argv[2], r.get('status'), r.get('score'), (r.get('error') or '')[:300])
for s in r.get('shapes') or []: print('  ', s.get('shape'), s.get('mean_us'))
" $OUT/judge_$(basename $dir).json $dir
done
