#!/bin/bash
# Session 47: hr_cluster with its 32 x 32 steps in registers, against the seed (HR_PANEL 0), small_probe on 8x2048
# and 2x4096; then each step's time (HR_TRACE: block 0's clock, first panels of 2x4096). About 2 minutes.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$gpu"
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
R=$OUT/r; mkdir -p $R
for shape in "8 2048" "2 4096"; do
  s=$(date +%s); name=probe_${shape// /x}
  timeout 120 python3 bench/small_probe.py $shape --calls 15 --loop 2 --vary "HR_PANEL=0;HR_PANEL=1" > $R/$name.txt 2>&1
  echo "$name rc $? $(( $(date +%s) - s )) s"; grep -E "single|against|rror" $R/$name.txt | head -8
done
t=$(python3 bench/variant.py seed_kernels/tsqr_wy HR_PANEL=1 GRAPH_BYTES=0 LOOKAHEAD_BELOW=0)
sed -i 's|"#define HR_MODULE\\n"|"#define HR_MODULE\\n#define HR_TRACE\\n"|' $t/kernel.py; grep -c HR_TRACE $t/kernel.py
timeout 120 python3 - "$t" > $R/trace.txt 2>&1 <<'PY'
import sys, torch, importlib.util
spec = importlib.util.spec_from_file_location("k", sys.argv[1] + "/kernel.py"); k = importlib.util.module_from_spec(spec); spec.loader.exec_module(k)
for n in (4096, 2048):
    A = torch.randn(2 if n == 4096 else 8, n, n, device="cuda")
    for _ in range(2): k.custom_kernel(A)
    torch.cuda.synchronize(); print("done", n, flush=True)
PY
echo "trace rc $?"; grep -c hr_trace $R/trace.txt; grep hr_trace $R/trace.txt | head -3; grep hr_trace $R/trace.txt | sed -n '60,62p;120,122p'
tar -czf $OUT/r.tgz -C $OUT r && rm -rf $R
