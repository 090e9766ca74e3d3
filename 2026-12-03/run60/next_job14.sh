#!/bin/bash
# session 37's second device job: this tree again to its end with per_gpu = 2 and right after with 3 (a second pair
# from another stretch of the machine's time: whole runs land 17-23% apart), results in /tmp/res33/pipe2
R=/tmp/res33; mkdir -p $R; rm -f $R/done3
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD:/tmp/site
s=$(date +%s); OUT=$R/pipe2 BEFORE= AFTER_S=230 PER_GPU=3 SEEDS=0 bash bench/pipeline_pass.sh > $R/pipeline2.out 2>&1
echo "pipeline2 rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done3
