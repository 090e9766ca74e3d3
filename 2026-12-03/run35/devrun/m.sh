#!/bin/bash
# background job: lane_qr's GPU tests, the climb (bench/climb_pass.sh), then the new seed's pass; /tmp/resm
R=/tmp/resm; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
nvidia-smi > $R/smi.txt 2>&1
PYTHONPATH=$PWD:$PYTHONPATH timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_harness_gpu.py -k "LANE_QR" > $R/gputest.txt 2>&1; echo "gputest rc $?" >> $R/status
OUT=$R/climb STEPS=bench/climb/steps.txt timeout 260 bash bench/climb_pass.sh > $R/climb.out 2>&1; echo "climb rc $?" >> $R/status
win=1; grep -q "step 2: faster than best" $R/climb/pass.log && win=2
echo "new seed: LANE_QR=$win" >> $R/status
new=$(PYTHONPATH=$PWD python3 bench/variant.py seed_kernels/tsqr_wy LANE_QR=$win)
OUT=$R/seed SEED=$new VARIANTS=LANE_QR=0 SKIP_PROFILE=1 timeout 360 bash bench/seed_pass.sh > $R/seed.out 2>&1; echo "seed rc $?" >> $R/status
touch $R/done
