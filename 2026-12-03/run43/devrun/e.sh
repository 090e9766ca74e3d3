#!/bin/bash
# background job (session 28): colk_qr probed per shape against the path before it, screened, and the seed in full
# against COLK_N=0 twice, alternating; /tmp/rese
R=/tmp/rese; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
export PYTHONPATH=$PWD:$PYTHONPATH
nvidia-smi > $R/smi.txt 2>&1
for shape in "40 176" "12 64" "32 160" "2 100" "32 96"; do
  timeout 120 python3 bench/small_probe.py $shape --vary COLK_N=0,192 --calls 40 --loop 10 > "$R/probe_${shape// /x}.txt" 2>&1
  echo "probe $shape rc $?" >> $R/status
done
touch $R/done0
(
OUT=$R/seed; source bench/lib.sh; compile_cache_on
qr screen --kernel-dir seed_kernels/tsqr_wy --mode quick --stall 30
old=$($py bench/variant.py seed_kernels/tsqr_wy COLK_N=0)
for i in 1 2; do
  qr "seed$i" --kernel-dir seed_kernels/tsqr_wy --mode full --seed 7
  qr "colk0_$i" --kernel-dir "$old" --mode full --seed 7
done
)
touch $R/done1
