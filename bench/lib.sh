# Shared by the GPU pass scripts (sourced): results under $OUT, the repository on PYTHONPATH, a log helper,
# one harness evaluation into results.jsonl (`qr`, `prestarted`, `record`).
set -uo pipefail
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)  # absolute: a pass may run the harness from another directory (ab_judge.sh)
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$OUT/pass.log"; }
record() {  # name, a verdict line: kept as {"name", "result"} in $OUT/results.jsonl, its head in pass.log
  local result=${2:-'{"status": "crash", "error": "no result line (see harness.log)"}'}
  echo "{\"name\": \"$1\", \"result\": $result}" >> "$OUT/results.jsonl"
  echo "$1: $(echo "$result" | cut -c1-160)" | tee -a "$OUT/pass.log"
}
qr() {  # name, then harness args: one evaluation, recorded
  local name=$1; shift
  log "harness $name $*"
  record "$name" "$($py -m harness.qr "$@" 2>>"$OUT/harness.log" | tail -1)"
}
prestarted() {  # name, then harness args: the process starts, the go line comes 8 s later (torch imported)
  local name=$1; shift
  log "harness (prestarted) $name $*"
  record "$name" "$( (sleep 8; echo go) | $py -m harness.qr --prestart "$@" 2>>"$OUT/harness.log" | tail -1)"
}
