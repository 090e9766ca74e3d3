#!/bin/bash
# background job (session 28): colk_qr6 and colk_qr4 under ncu (stall reasons, scheduler, source counters); /tmp/resg
R=/tmp/resg; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
export PYTHONPATH=$PWD:$PYTHONPATH
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu | head -1); echo "ncu: $NCU" >> $R/status
for k in "colk_qr6 40 176" "colk_qr4 12 64"; do
  set -- $k
  timeout 150 $NCU --kernel-name $1 --launch-count 1 --section WarpStateStats --section SchedulerStats \
    --section LaunchStats --section SourceCounters --section InstructionStats \
    python3 bench/small_probe.py $2 $3 --vary COLK_N=192 --calls 1 --loop 1 > "$R/ncu_$1.txt" 2>&1
  echo "ncu $1 rc $?" >> $R/status
done
touch $R/done1
