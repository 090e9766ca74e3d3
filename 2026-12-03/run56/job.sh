#!/bin/bash
# session 33's device job, in the background (collect with .devrun/collect.sh SECONDS doneN):
# 1 the judge alone, cold (one empty compile cache a tree): the seed and its NB=16 child, before (b973866) and after
#   (compiles ahead: qrjudge/ahead.py, the seed's modules made at import)
# 2 the README's command before/after (bench/pipeline_pass.sh, 200 s each)
# 3 the GPU workflow's job as a runner runs it: a fresh clone, offline install, GPU tests, summary (bench/ci_gpu.sh)
# 4 share_noise (5 rounds: the seed alone and shared, torch.geqrf in the same run)
# 5 a second pair of 2
R=/tmp/res33; rm -rf $R /tmp/seeds; mkdir -p $R
cd "$(dirname "$0")/.."
here=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >> $R/status 2>&1
export PYTHONPATH=/tmp/site
nvidia-smi > $R/smi.txt 2>&1
python3 -c "import torch, cupy; torch.ones(1, device='cuda'); print('warm', torch.__version__, cupy.__version__)" > $R/warm.txt 2>&1
git log --oneline -1 >> $R/status
mkdir -p /tmp/seeds/before && tar -xf .devrun/before.tar -C /tmp/seeds/before
for t in before after; do
  root=$here; [[ $t == before ]] && root=/tmp/seeds/before
  cp -r $root/seed_kernels/tsqr_wy /tmp/seeds/${t}_seed
  cp -r $root/seed_kernels/tsqr_wy /tmp/seeds/${t}_nb16 && sed -i 's/^NB = 32  # @tune/NB = 16  # @tune/' /tmp/seeds/${t}_nb16/kernel.py
  c=$(mktemp -d)
  for k in seed nb16; do
    (cd $root && PYTHONPATH=$root:/tmp/site EVOLVE_NVRTC_CACHE=$c timeout 300 python3 -m qrjudge --kernel-dir /tmp/seeds/${t}_$k --mode full 2>>$R/harness.log | tail -1 > $R/cold_${t}_$k.json)
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); t=r.get('timings',{}); print(sys.argv[1], r.get('status'), r.get('score'), 'cuda', t.get('cuda_start_s'), 'import', t.get('import_kernel_s'), 'tests', t.get('tests_s'), 'wall', t.get('wall_s'), r.get('nvrtc_cache'), (r.get('error') or '')[:300])" $R/cold_${t}_$k.json >> $R/status 2>&1
  done
done
touch $R/done1
export PYTHONPATH=$here:/tmp/site
s=$(date +%s); OUT=$R/pipe BEFORE=.devrun/before.tar RUN_S=200 AFTER_S=200 SEEDS=0 bash bench/pipeline_pass.sh > $R/pipeline.out 2>&1
echo "pipeline rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done2
rm -rf /tmp/runner && git clone -q "$here" /tmp/runner && cp -r .whl /tmp/runner/.whl
s=$(date +%s)
(cd /tmp/runner && env -u PYTHONPATH OUT=$R/ci GITHUB_STEP_SUMMARY=$R/ci/step_summary.md VENV_ARGS=--system-site-packages \
   GPU_EXTRA=gpu-cuda13 PIP_NO_INDEX=1 PIP_FIND_LINKS=/tmp/runner/.whl bash bench/ci_gpu.sh > $R/ci_gpu.out 2>&1)
echo "ci_gpu rc $? $(( $(date +%s) - s )) s (clone at $(git -C /tmp/runner log --oneline -1))" >> $R/status; touch $R/done3
s=$(date +%s); OUT=$R/noise ROUNDS=5 bash bench/share_noise.sh > $R/noise.out 2>&1
echo "noise rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done4
s=$(date +%s); OUT=$R/pipe2 BEFORE=.devrun/before.tar RUN_S=200 AFTER_S=200 SEEDS=0 bash bench/pipeline_pass.sh > $R/pipeline2.out 2>&1
echo "pipeline2 rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done5
