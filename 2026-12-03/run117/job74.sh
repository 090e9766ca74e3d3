#!/bin/bash
# Session 54: wg_update_piped (C's next tiles in flight by cp.async, V's next fragments loaded during the wgmma).
# bench/wgmma_probe.py (errors of both kernels on edge shapes, times against cuBLAS), wgmma's GPU tests, then the
# judge's `full` on the seed and on WG_FROM=48 (now: C -= V W of >= 128 columns by wg_update_piped), alternating
# twice; and what this CuPy offers in place of the deprecated ExternalStream. ~6 min.
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
s=$(date +%s)
timeout 200 python3 bench/wgmma_probe.py > $OUT/wgmma_probe.txt 2>&1; echo "wgmma probe rc $? $(( $(date +%s) - s )) s"
grep -v '^ ' $OUT/wgmma_probe.txt | tail -30
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_harness_gpu.py -k "wgmma or WG_FROM" 2>&1 \
  | tee $OUT/wgmma_gpu_tests.txt | tail -4
v=$(python3 bench/variant.py seed_kernels/tsqr_wy WG_FROM=48)
i=0
for k in seed_kernels/tsqr_wy $v seed_kernels/tsqr_wy $v; do
  i=$((i+1)); s=$(date +%s)
  timeout 150 python3 -m qrjudge --kernel-dir $k --mode full --seed 7 2>$OUT/full_$i.err > $OUT/full_$i.json
  echo "run $i ($k) rc $? $(( $(date +%s) - s )) s"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['status'], r.get('score'), (r.get('error') or '')[:300]); [print('  ', s['shape'], s['mean_us']) for s in r.get('shapes',[])]" $OUT/full_$i.json
done
python3 - > $OUT/cupy_stream.txt 2>&1 <<'P'
import cupy, torch, inspect
print(cupy.__version__, torch.__version__)
print([n for n in dir(cupy.cuda.Stream) if not n.startswith('__')])
print(inspect.getdoc(cupy.cuda.ExternalStream))
print(getattr(cupy.cuda.Stream, 'from_external', None), inspect.getdoc(getattr(cupy.cuda.Stream, 'from_external', None)))
print('torch stream has __cuda_stream__:', hasattr(torch.cuda.current_stream(), '__cuda_stream__'))
P
