#!/bin/bash
# session 31, the last call: HEAD's compile server (71c049d, after the review) on the GPU: the seed, NB=16, GRAM_ROWS=256 cold
R=$OUT; cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=$PWD:/tmp/site || exit
mkdir -p /tmp/seeds; c=$(mktemp -d)
cp -r seed_kernels/tsqr_wy /tmp/seeds/seed
cp -r seed_kernels/tsqr_wy /tmp/seeds/nb16 && sed -i 's/^NB = 32  # @tune/NB = 16  # @tune/' /tmp/seeds/nb16/kernel.py
cp -r seed_kernels/tsqr_wy /tmp/seeds/gr256 && sed -i 's/^GRAM_ROWS = 128  # @tune/GRAM_ROWS = 256  # @tune/' /tmp/seeds/gr256/kernel.py
for k in seed nb16 gr256; do
  EVOLVE_NVRTC_CACHE=$c timeout 100 python3 -m qrjudge --kernel-dir /tmp/seeds/$k --mode full 2>>$R/harness.log | tail -1 > $R/cold_$k.json
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); t=r.get('timings',{}); print(sys.argv[1], r.get('status'), r.get('score'), 'import', t.get('import_kernel_s'), 'tests', t.get('tests_s'), 'wall', t.get('wall_s'), r.get('nvrtc_cache'))" $R/cold_$k.json | tee -a $R/status
done
ls $c/.recipes | tee -a $R/status; tail -3 $c/.server.log
