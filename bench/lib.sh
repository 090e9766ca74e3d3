# Shared by the GPU pass scripts (sourced): results under $OUT, the repository on PYTHONPATH, a log helper,
# one harness evaluation into results.jsonl (`qr`, `prestarted`, `record`), the GPU's clock during each
# evaluation (`sampling`, `sampled`: every 200 ms into $OUT/gpu.csv, its range in pass.log).
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
sampler=
gpu_fields=
gpu_processes() {  # how many CUDA processes are on the GPU now
  nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -c .
}
smi_start() {  # variable, file, fields, ms: nvidia-smi's samples of those fields appended to the file every ms from
  # now on, by a process in the background whose PID goes into the variable
  nvidia-smi --query-gpu="$3" --format=csv,noheader,nounits -lms "$4" >> "$2" 2>/dev/null &
  printf -v "$1" %s $!
}
smi_stop() {  # variable: the sampler whose PID it holds stopped (false where none was started)
  [[ -n ${!1} ]] || return 1
  kill "${!1}" 2>/dev/null
  wait "${!1}" 2>/dev/null
  printf -v "$1" %s ""
}
busy_sampler=
busy_sampling() {  # name: how busy the GPU is (nvidia-smi's utilization.gpu: the share of each 250 ms sample in which
  # a kernel ran), with nvidia-smi's timestamps, from now on into $OUT/busy_NAME.csv (bench/run_stages.py --busy)
  command -v nvidia-smi > /dev/null || return 0
  smi_start busy_sampler "$OUT/busy_$1.csv" timestamp,utilization.gpu 250
}
busy_mean=
busy_sampled() {  # name: its sampler stopped (here, not in a subshell: `wait` needs its parent); the mean of its
  # samples in $busy_mean
  busy_mean=
  smi_stop busy_sampler || return 0
  busy_mean=$(awk -F', *' '$2 ~ /^[0-9]+$/ {n++; s += $2} END {if (n) printf "the GPU busy %.0f%% of %d samples", s / n, n}' \
    "$OUT/busy_$1.csv")
}
sampling() {  # name: the GPU's SM clock, temperature, power and throttle reasons from now on, under a mark
  command -v nvidia-smi > /dev/null || return 0
  if [[ -z $gpu_fields ]]; then  # the throttle reasons where this driver still knows the field by that name
    gpu_fields=clocks.sm,temperature.gpu,power.draw,clocks_throttle_reasons.active
    nvidia-smi --query-gpu="$gpu_fields" --format=csv,noheader > /dev/null 2>&1 ||
      gpu_fields=clocks.sm,temperature.gpu,power.draw
  fi
  local others  # a process still holding the GPU would time-slice with the evaluation's kernels
  others=$(gpu_processes)
  if (( others > 0 )); then echo "   $others CUDA process(es) on the GPU as $1 starts" | tee -a "$OUT/pass.log"; fi
  echo "# $1" >> "$OUT/gpu.csv"
  smi_start sampler "$OUT/gpu.csv" "$gpu_fields" 200
}
sampled() {  # the sampler stopped; the range of SM clocks since the last mark (the slowest first) in pass.log
  smi_stop sampler || return 0
  awk -F', *' '/^#/ {n = 0; lo = 1e9; hi = 0; warm = 0; next}
               $1 ~ /^[0-9]+$/ {n++; if ($1 < lo) lo = $1; if ($1 > hi) hi = $1; if ($2 > warm) warm = $2}
               END {if (n) printf "   SM clock %d-%d MHz, up to %d C (%d samples)\n", lo, hi, warm, n}' \
    "$OUT/gpu.csv" | tee -a "$OUT/pass.log"
}
nvrtc_dir=${XDG_CACHE_HOME:-$HOME/.cache}/evolve/nvrtc  # the compile cache evolve keeps (evolver/evaluation/command.py)
compile_cache_on() {  # the judge as evolve runs it: with the compile cache (EVOLVE_NVRTC_CACHE=off: without)
  if [[ ${EVOLVE_NVRTC_CACHE:-} == off ]]; then
    unset EVOLVE_NVRTC_CACHE
  else
    export EVOLVE_NVRTC_CACHE=${EVOLVE_NVRTC_CACHE:-$nvrtc_dir}
    mkdir -p "$EVOLVE_NVRTC_CACHE"
  fi
}
committed() {  # directory, message: it becomes a git repository of one commit (what evolve starts from)
  git -C "$1" init -q && git -C "$1" add -A && git -C "$1" -c user.name=bench -c user.email=bench@localhost commit -qm "$2"
}
qr_demo() {  # directory [seed ...]: a repository of the QR problem there, committed: this tree's seed_kernels/ and
  # qrjudge/ (and any seed outside them, at its path), evolve.toml with those seeds (the shipped ones if none), tune
  # only and no confirmation, and a git identity for evolve's own commits
  local dir=$1 list="" seed
  shift
  mkdir -p "$dir" && cp -r seed_kernels qrjudge "$dir/" || return 1
  for seed in "$@"; do
    [[ -e $dir/$seed ]] || { mkdir -p "$dir/$(dirname "$seed")" && cp -r "$seed" "$dir/$seed"; } || return 1
    list+="\"$seed\", "
  done
  sed -e 's/^confirm_mode = .*/confirm_mode = ""/' -e 's/^operators = .*/operators = { tune = 1.0 }/' \
      ${list:+-e "s|^seeds = .*|seeds = [${list%, }]|"} evolve.toml > "$dir/evolve.toml"
  committed "$dir" qr && git -C "$dir" config user.name bench && git -C "$dir" config user.email bench@localhost
}
this_tree() {  # directory: this working tree's files (tracked, and untracked but not ignored) copied there, committed;
  # the device's copy of .git is the session's first, so a pass runs the tree as it is, not a commit of it
  mkdir -p "$1" && git ls-files -co --exclude-standard | tar -cT - | tar -x -C "$1" && committed "$1" "this tree"
}
quiet_gpu() {  # name: wait (up to QUIET_S, 10 s) until no CUDA process is left on the GPU, a neighbour's on its way out
  # say: an evaluation without the GPU's lock has nothing else to keep it from one (two `alone` evaluations of
  # share_noise.sh, each started beside one, ran 3.6% and 13% slow: notebook 2026-12-03/run12, run18)
  command -v nvidia-smi > /dev/null || return 0
  local waited=0
  while (( $(gpu_processes) > 0 )); do
    (( waited >= ${QUIET_S:-10} )) && break
    sleep 1
    waited=$((waited + 1))
  done
  if (( waited > 0 )); then echo "   waited $waited s for the GPU's other CUDA processes to end before $1" | tee -a "$OUT/pass.log"; fi
}
qr() {  # name, then harness args: one evaluation, recorded (alone, on a quiet GPU: without EVOLVE_GPU_LOCKS)
  local name=$1; shift
  log "harness $name $*"
  [[ -n ${EVOLVE_GPU_LOCKS:-} ]] || quiet_gpu "$name"
  sampling "$name"
  record "$name" "$($py -m qrjudge "$@" 2>>"$OUT/harness.log" | tail -1)"
  sampled
}
prestarted() {  # name, then harness args: the process starts, the go line comes 8 s later (torch imported)
  local name=$1; shift
  log "harness (prestarted) $name $*"
  sampling "$name"
  record "$name" "$( (sleep 8; echo go) | $py -m qrjudge --prestart "$@" 2>>"$OUT/harness.log" | tail -1)"
  sampled
}
harness_copy() {  # directory, source: a copy of qrjudge/ from a commit, a `git archive` tar, a directory that holds one,
  # or "" (this working tree's) in the directory; run the harness from there (PYTHONPATH=directory) to judge with it
  mkdir -p "$1"
  if [[ -z $2 ]]; then cp -r qrjudge "$1/"
  elif [[ -d $2/qrjudge ]]; then cp -r "$2/qrjudge" "$1/"
  elif [[ -f $2 ]]; then tar -xf "$2" -C "$1" qrjudge || { echo "no qrjudge/ in $2" >&2; return 1; }
  else git archive "$2" qrjudge | tar -x -C "$1" || { echo "no qrjudge/ at $2" >&2; return 1; }
  fi
}
