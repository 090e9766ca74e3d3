# Shared by the GPU pass scripts (sourced): results under $OUT, the repository on PYTHONPATH, a log helper,
# one harness evaluation into results.jsonl (`qr`).
set -uo pipefail
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$OUT/pass.log"; }
qr() {  # name, then harness args: the verdict as {"name", "result"} in $OUT/results.jsonl, its start in pass.log
  local name=$1; shift
  log "harness $name $*"
  local line
  line=$($py -m harness.qr "$@" 2>>"$OUT/harness.log" | tail -1)
  echo "{\"name\": \"$name\", \"result\": $line}" >> "$OUT/results.jsonl"
  echo "$name: $(echo "$line" | cut -c1-160)" | tee -a "$OUT/pass.log"
}
