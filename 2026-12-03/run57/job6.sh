#!/bin/bash
# session 34's device job, in the background (collect with .devrun/collect.sh SECONDS doneN):
# 1 the README's command: before the issue's work (0c70fdb) for 100 s, then this tree to its 50 candidates (at most
#   260 s), each in a fresh copy with the compile cache emptied; then torch.geqrf, blocked_wy and tsqr_wy x5 in full
#   (bench/pipeline_pass.sh SEEDS=1)
# 2 the GPU workflow's job as a self-hosted runner runs it (fresh clone with this tree committed on top, offline
#   install from the extras, GPU tests, step summary)
R=/tmp/res33; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
here=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >> $R/status 2>&1
nvidia-smi > $R/smi.txt 2>&1
git log --oneline -1 >> $R/status
export PYTHONPATH=$here:/tmp/site
s=$(date +%s); OUT=$R/pipe BEFORE=.devrun/issue_before.tar RUN_S=100 AFTER_S=260 SEEDS=1 bash bench/pipeline_pass.sh > $R/pipeline.out 2>&1
echo "pipeline rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done1
unset PYTHONPATH
rm -rf /tmp/runner && git clone -q "$here" /tmp/runner && cp -r .whl /tmp/runner/.whl
git ls-files -co --exclude-standard | tar -cT - | tar -x -C /tmp/runner
git -C /tmp/runner add -A && git -C /tmp/runner -c user.name=runner -c user.email=runner@localhost commit -qm "the tree under test"
s=$(date +%s)
(cd /tmp/runner && env -u PYTHONPATH OUT=$R/ci GITHUB_STEP_SUMMARY=$R/ci/step_summary.md VENV_ARGS=--system-site-packages \
   GPU_EXTRA=gpu-cuda13 PIP_NO_INDEX=1 PIP_FIND_LINKS=/tmp/runner/.whl bash bench/ci_gpu.sh > $R/ci_gpu.out 2>&1)
echo "ci_gpu rc $? $(( $(date +%s) - s )) s (clone at $(git -C /tmp/runner log --oneline -1))" >> $R/status; touch $R/done2
