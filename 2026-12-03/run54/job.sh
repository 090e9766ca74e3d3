#!/bin/bash
# background job (session 31): the compile server's foresight (34e3923+) against the session's start (head30.tar,
# 075032c): 1 cold compiles, the judge alone: the seed, then its NB=16 and GRAM_ROWS=256 variants, one empty cache
# each tree; 2 the README's command before/after, per_gpu 2, 200 s each; 3 cheats about files and caches on the
# shared path. Collect: bash .devrun/collectr.sh SECONDS doneN
R=/tmp/resq; rm -rf $R /tmp/seeds; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
nvidia-smi > $R/smi.txt 2>&1
python3 -c "import torch, cupy; torch.ones(1, device='cuda'); print('warm')" > $R/warm.txt 2>&1
mkdir -p /tmp/seeds/head && tar -xf .devrun/head30.tar -C /tmp/seeds/head
here=$PWD
for t in before after; do
  root=$here; [[ $t == before ]] && root=/tmp/seeds/head
  cp -r seed_kernels/tsqr_wy /tmp/seeds/${t}_seed
  cp -r seed_kernels/tsqr_wy /tmp/seeds/${t}_nb16 && sed -i 's/^NB = 32  # @tune/NB = 16  # @tune/' /tmp/seeds/${t}_nb16/kernel.py
  cp -r seed_kernels/tsqr_wy /tmp/seeds/${t}_gr256 && sed -i 's/^GRAM_ROWS = 128  # @tune/GRAM_ROWS = 256  # @tune/' /tmp/seeds/${t}_gr256/kernel.py
  c=$(mktemp -d)
  for k in seed nb16 gr256; do
    (cd $root && PYTHONPATH=$root:/tmp/site EVOLVE_NVRTC_CACHE=$c timeout 300 python3 -m qrjudge --kernel-dir /tmp/seeds/${t}_$k --mode full 2>>$R/harness.log | tail -1 > $R/cold_${t}_$k.json)
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); t=r.get('timings',{}); print(sys.argv[1], r.get('status'), r.get('score'), 'import', t.get('import_kernel_s'), 'tests', t.get('tests_s'), 'wall', t.get('wall_s'), r.get('nvrtc_cache'))" $R/cold_${t}_$k.json >> $R/status 2>&1
  done
  ls $c/.recipes >> $R/status 2>&1
done
touch $R/done1
export PYTHONPATH=$here:$PYTHONPATH
s=$(date +%s); OUT=$R/pipe BEFORE=.devrun/head30.tar RUN_S=200 AFTER_S=200 SEEDS=0 bash bench/pipeline_pass.sh > $R/pipeline.out 2>&1
echo "pipeline rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done2
locks=$(mktemp -d)
s=$(date +%s); OUT=$R/cheats EVOLVE_GPU_LOCKS=$locks CHEATS_S=300 CHEATS_K="content_cache or read_the_seed or rewrite_judge or forge_verdict or cache_by_shape or extension_solver" SEEDS=0 bash bench/judge_pass.sh > $R/cheats.out 2>&1
echo "cheats rc $? $(( $(date +%s) - s )) s" >> $R/status; touch $R/done3
