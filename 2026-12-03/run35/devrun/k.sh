#!/bin/bash
# background job: the TF32 GEMM probe, then this tree's run start twice (compile cache cold, then warm); /tmp/resk
R=/tmp/resk; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
nvidia-smi > $R/smi.txt 2>&1
timeout 300 python3 bench/tf32_gemm_probe.py > $R/probe.txt 2>&1; echo "probe rc $?" >> $R/status
OUT=$R/runs; source bench/lib.sh; root=$PWD
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
run() {
  local clone=/tmp/k-$1; rm -rf $clone; this_tree $clone
  log "$1: evolve start, stopped at $2 s"
  (cd $clone && PYTHONPATH=$clone:$PYTHONPATH timeout -s INT $2 $py -m evolver start --max-candidates 50 > $OUT/evolve_$1.log 2>&1)
  (cd $clone && PYTHONPATH=$clone:$PYTHONPATH $py $root/bench/run_stages.py .) > $OUT/stages_$1.txt 2>&1
}
rm -rf $nvrtc_dir; run cold ${RUN_S:-75}; run warm ${RUN_S:-75}
echo "runs done" >> $R/status; touch $R/done
