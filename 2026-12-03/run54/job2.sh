# the second pair, in the same machine after job.sh (the call's command, as run): note that pipeline_pass.sh did not
# empty the compile cache before `before` then, so this `before` found the 22 entries `after` of job.sh had filled
R=/tmp/resq; cd "$1"
export PYTHONPATH=/tmp/site; export PYTHONPATH=$PWD:$PYTHONPATH
s=$(date +%s); OUT=$R/pipe2 BEFORE=.devrun/head30.tar RUN_S=200 AFTER_S=200 SEEDS=0 bash bench/pipeline_pass.sh > $R/pipeline2.out 2>&1
echo "pipeline2 rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done4
