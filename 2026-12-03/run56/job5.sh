#!/bin/bash
# a fresh machine: 0 where a runner's start goes (imports, CUDA) with three processes at once, as an evaluation's
# judge and runners start; 1 the GPU workflow's job as a runner runs it (fresh clone with this tree committed on top,
# offline install from the extras over the host's torch/CuPy venv, GPU tests, summary); 2 share_noise, 5 rounds
R=/tmp/res33; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
here=$PWD
nvidia-smi > $R/smi.txt 2>&1
probe='import time; t=time.monotonic(); import torch; a=time.monotonic(); import cupy; b=time.monotonic(); import torch._dynamo; c=time.monotonic(); torch.cuda.init(); torch.ones(1, device="cuda"); d=time.monotonic(); print(f"torch {a-t:.2f} cupy {b-a:.2f} dynamo {c-b:.2f} cuda {d-c:.2f} total {d-t:.2f}")'
for round in 1 2; do
  for i in 1 2 3; do python3 -c "$probe" > $R/start_${round}_$i.txt 2>&1 & done; wait
done
python3 -X importtime -c "import torch; import cupy; import torch._dynamo" 2> $R/importtime.txt
cat $R/start_*.txt >> $R/status
rm -rf /tmp/runner && git clone -q "$here" /tmp/runner && cp -r .whl /tmp/runner/.whl
git ls-files -co --exclude-standard | tar -cT - | tar -x -C /tmp/runner
git -C /tmp/runner add -A && git -C /tmp/runner -c user.name=runner -c user.email=runner@localhost commit -qm "the tree under test"
s=$(date +%s)
(cd /tmp/runner && env -u PYTHONPATH OUT=$R/ci GITHUB_STEP_SUMMARY=$R/ci/step_summary.md VENV_ARGS=--system-site-packages \
   GPU_EXTRA=gpu-cuda13 PIP_NO_INDEX=1 PIP_FIND_LINKS=/tmp/runner/.whl bash bench/ci_gpu.sh > $R/ci_gpu.out 2>&1)
echo "ci_gpu rc $? $(( $(date +%s) - s )) s (clone at $(git -C /tmp/runner log --oneline -1))" >> $R/status; touch $R/done1
s=$(date +%s); OUT=$R/noise ROUNDS=5 bash bench/share_noise.sh > $R/noise.out 2>&1
echo "noise rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done2
