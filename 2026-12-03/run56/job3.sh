#!/bin/bash
# after share_noise (done4): job2 stopped before its second pipeline pair; the GPU workflow's job as a runner runs it
R=/tmp/res33
for _ in $(seq 1 400); do [[ -e $R/done4 ]] && break; sleep 1; done
pkill -f "bash .devrun/job2.sh"; pkill -f pipeline_pass.sh; sleep 1
cd "$(dirname "$0")/.."
here=$PWD
rm -rf /tmp/runner && git clone -q "$here" /tmp/runner && cp -r .whl /tmp/runner/.whl
git ls-files -co --exclude-standard | tar -cT - | tar -x -C /tmp/runner
git -C /tmp/runner add -A && git -C /tmp/runner -c user.name=runner -c user.email=runner@localhost commit -qm "the tree under test"
s=$(date +%s)
(cd /tmp/runner && env -u PYTHONPATH OUT=$R/ci GITHUB_STEP_SUMMARY=$R/ci/step_summary.md VENV_ARGS=--system-site-packages \
   GPU_EXTRA=gpu-cuda13 PIP_NO_INDEX=1 PIP_FIND_LINKS=/tmp/runner/.whl bash bench/ci_gpu.sh > $R/ci_gpu.out 2>&1)
echo "ci_gpu(2) rc $? $(( $(date +%s) - s )) s (clone at $(git -C /tmp/runner log --oneline -1))" >> $R/status; touch $R/done6
