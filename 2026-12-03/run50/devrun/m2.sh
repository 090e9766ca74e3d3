#!/bin/bash
# background job (session 28): colk_qr without K = 5: the seed in full (its tests take n = 160 on colk_qr6 now),
# compile cache empty, then 32x160 probed; /tmp/resm2
R=/tmp/resm2; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
export PYTHONPATH=$PWD:$PYTHONPATH
s=$(date +%s); timeout 90 python3 -m qrjudge --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7 > $R/full.json 2> $R/full.err
echo "full rc $? $(( $(date +%s) - s )) s" >> $R/status
timeout 60 python3 bench/small_probe.py 32 160 --vary COLK_N=0,192 --calls 30 --loop 10 > $R/probe_32x160.txt 2>&1
echo "probe rc $?" >> $R/status
touch $R/done1
