#!/bin/bash
# background job (session 28): colk_qr with the interleaved updates, probed per shape against the path before it; /tmp/resf
R=/tmp/resf; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
export PYTHONPATH=$PWD:$PYTHONPATH
for shape in "40 176" "12 64" "2 100"; do
  timeout 120 python3 bench/small_probe.py $shape --vary COLK_N=0,192 --calls 40 --loop 10 > "$R/probe_${shape// /x}.txt" 2>&1
  echo "probe $shape rc $?" >> $R/status
done
touch $R/done1
