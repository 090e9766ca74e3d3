#!/usr/bin/env bash
# A first look at the judge on a GPU after a change to its isolation (issue "Judge v3"): what the runner's
# confinement masks and whether CUDA, CUDA IPC and NVRTC work inside it; the seed in quick mode; the planted
# cheats named in $CHEATS (default: the routes Judge v3 closes) through the GPU test. About 3 minutes on an H200.
# Results: ${OUT:-bench/out}/pass.log, results.jsonl.
source "$(dirname "$0")/lib.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/pass.log"
$py - <<'PY' 2>&1 | tee -a "$OUT/pass.log"
import torch, cupy
from qrjudge import guard, isolation
print("torch", torch.__version__, "cuda", torch.version.cuda, "cupy", cupy.__version__)
print("solver libraries masked in the runner:", isolation.solver_libraries())
print("factorisation operators refused at the dispatcher:", len(guard.factorisation_ops()))
PY
qr seed_quick --kernel-dir seed_kernels/tsqr_wy --mode quick
cheats=${CHEATS:-"rewrite_judge read_the_seed geqrf_reduce cholesky_ops qr_c_linalg honest_names cupy_solver cublas_batched extension_solver forge_verdict clock_wrapper"}
k=$(echo "$cheats" | sed 's/ / or /g')
log "pytest -m gpu -k planted_cheat and ($k)"
$py -m pytest -q -m gpu -p no:cacheprovider tests/test_harness_gpu.py -k "planted_cheat and ($k)" 2>&1 | tail -25 | tee -a "$OUT/pass.log"
