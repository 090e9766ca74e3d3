# Shared by the GPU pass scripts (sourced): results under $OUT, the repository on PYTHONPATH, a log helper.
set -uo pipefail
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$OUT/pass.log"; }
