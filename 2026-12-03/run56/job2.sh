#!/bin/bash
# steps 3-5 of job.sh, the clone made current: the device's .git is the session's first copy (b973866), so the
# working tree as it is is committed on top of the fresh clone (what a runner checks out: this tree)
R=/tmp/res33
pkill -f "bash .devrun/job.sh"; sleep 1
cd "$(dirname "$0")/.."
here=$PWD
export PYTHONPATH=$here:/tmp/site
rm -rf /tmp/runner && git clone -q "$here" /tmp/runner && cp -r .whl /tmp/runner/.whl
git ls-files -co --exclude-standard | tar -cT - | tar -x -C /tmp/runner
git -C /tmp/runner add -A && git -C /tmp/runner -c user.name=runner -c user.email=runner@localhost commit -qm "the tree under test"
s=$(date +%s)
(cd /tmp/runner && env -u PYTHONPATH OUT=$R/ci GITHUB_STEP_SUMMARY=$R/ci/step_summary.md VENV_ARGS=--system-site-packages \
   GPU_EXTRA=gpu-cuda13 PIP_NO_INDEX=1 PIP_FIND_LINKS=/tmp/runner/.whl bash bench/ci_gpu.sh > $R/ci_gpu.out 2>&1)
echo "ci_gpu rc $? $(( $(date +%s) - s )) s (clone at $(git -C /tmp/runner log --oneline -1))" >> $R/status; touch $R/done3
s=$(date +%s); OUT=$R/noise ROUNDS=5 bash bench/share_noise.sh > $R/noise.out 2>&1
echo "noise rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done4
s=$(date +%s); OUT=$R/pipe2 BEFORE=.devrun/before.tar RUN_S=200 AFTER_S=200 SEEDS=0 bash bench/pipeline_pass.sh > $R/pipeline2.out 2>&1
echo "pipeline2 rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done5
