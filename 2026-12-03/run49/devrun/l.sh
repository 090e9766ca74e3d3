#!/bin/bash
# background job (session 28): the exported stand-in's launch, three shims (before, leaner, driver API), 20x32
# both ways; then colk_qr variants (spin without sleep, a ring of 8) on 40x176; /tmp/resl
R=/tmp/resl; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
export PYTHONPATH=$PWD:$PYTHONPATH
for f in old new drv; do
  s=$(date +%s); timeout 100 python3 bench/small_probe.py --calls 100 --kernel .devrun/export_$f.py > $R/export_$f.txt 2>&1
  echo "export $f rc $? $(( $(date +%s) - s )) s" >> $R/status
done
touch $R/done1
for d in seed_kernels/tsqr_wy .devrun/colk_spin .devrun/colk_ring8; do
  s=$(date +%s); timeout 60 python3 bench/small_probe.py 40 176 --vary COLK_N=0,192 --calls 40 --loop 10 --kernel $d/kernel.py > $R/colk_$(basename $d).txt 2>&1
  echo "colk $d rc $? $(( $(date +%s) - s )) s" >> $R/status
done
touch $R/done2
for f in old new drv; do
  timeout 60 python3 bench/small_probe.py --calls 100 --kernel .devrun/export_$f.py > $R/export2_$f.txt 2>&1
  echo "export2 $f rc $?" >> $R/status
done
touch $R/done3
