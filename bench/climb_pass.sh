#!/usr/bin/env bash
# Issue "the seed at 60x", the climb as evolve's users climb: a run of its own in a fresh copy of this tree (the
# shipped evolve.toml; the run starts from the seed alone, judged and confirmed), then one step per line of $STEPS:
# the step's kernel directory made from `best`'s, judged with `evolve try` against `best`, and, where it beats it by
# the run's min_gain, recorded with `evolve add -m MESSAGE` (judged again with a fresh seed and confirmed before
# `best` moves). At the end `evolve lineage best`, `evolve status`, and the run pushed (`evolve push`) to a bare
# remote that comes back as one git bundle. About a minute a step on an H200.
#
# A line of $STEPS is `CHANGE -- MESSAGE`: CHANGE is `NAME=VALUE ...` (tunables best's kernel declares with @tune, set
# by `evolve try --ref best --set` and `evolve add --ref best --set`) or `dir:PATH` (a kernel directory of this tree
# whose files replace best's).
# Blank lines and lines starting with # are skipped.
#
#     STEPS=bench/climb/steps.txt [START="NAME=VALUE ..."] bash bench/climb_pass.sh
#
# START: the run's seed as it was before the climb (constants of its kernel.py, set and committed before the run
# starts), for a step the tree's seed has already taken as its default.
#
# Results: ${OUT:-bench/out}/pass.log, climb.log (every command's output), try_N.json, lineage.txt, status.txt,
# climb.bundle: the run as `evolve push` sends it (in a clone of evolve: `git remote add climb climb.bundle`, then
# `evolve pull climb`, and `evolve lineage best` tells the climb).
source "$(dirname "$0")/lib.sh"
root=$PWD
steps=$(cd "$(dirname "${STEPS:?a file of steps, one a line: CHANGE -- MESSAGE}")" && pwd)/$(basename "$STEPS")
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
repo=$(mktemp -d)/climb  # a fresh copy, committed (the device's .git is the session's first)
this_tree "$repo" || exit 1
work=$repo/${PROBLEM:-.}  # a problem directory of this tree (tests/climb_problem: the script's own test)
export VARIANT_FILE=${KERNEL_FILE:-kernel.py}
if [[ -n ${START:-} ]]; then  # the seed as it was before the climb: constants of its first seed set, committed
  seed_dir=$work/$($py -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["problem"]["seeds"][0])' \
    "$work/evolve.toml") || exit 1
  made=$($py "$root/bench/variant.py" "$seed_dir" $START) || { log "START=$START: no such constants"; exit 1; }
  rm -rf "$seed_dir" && mv "$made" "$seed_dir"
  git -C "$repo" add -A || exit 1
  if git -C "$repo" diff --cached --quiet; then  # (START names the seed as it ships: nothing to commit)
    log "the seed before the climb: $START, as it ships"
  else
    git -C "$repo" commit -qm "the seed before the climb: $START" || exit 1
    log "the seed before the climb: $START"
  fi
fi
evolve() { (cd "$work" && PYTHONPATH=$repo${PYTHONPATH:+:$PYTHONPATH} $py -m evolver "$@") 2>&1 | tee -a "$OUT/climb.log"; }
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/pass.log"
log "evolve start --max-candidates 1: the seed, judged and confirmed"
evolve start --max-candidates 1 > /dev/null
number=0
while IFS= read -r line <&3; do  # (the steps on fd 3: no command in the loop reads them)
  [[ -z ${line// } || $line == \#* ]] && continue
  number=$((number + 1))
  change=${line%% -- *} message=${line#* -- }
  if [[ $change == dir:* ]]; then  # best's kernel/ with the directory's files over it, as a directory of the tree
    step=$work/climb/step$number
    rm -rf "$step" && mkdir -p "$step"
    git -C "$repo" archive "best:$(git -C "$work" rev-parse --show-prefix)kernel" | tar -x -C "$step"
    cp -r "$root/${change#dir:}/." "$step/"
    kernel=("climb/step$number")
  else  # constants: best's kernel with its @tune lines set, by the product itself (no checkout, no directory)
    kernel=(--ref best)
    for setting in $change; do kernel+=(--set "$setting"); done
  fi
  log "step $number: evolve try ($change)"
  evolve try "${kernel[@]}" --json | tail -1 > "$OUT/try_$number.json"
  if ! $py -c 'import json, sys; json.load(open(sys.argv[1]))' "$OUT/try_$number.json" 2> /dev/null; then
    log "step $number: $(cat "$OUT/try_$number.json")"  # evolve's one-line error (a name no @tune line declares)
    continue
  fi
  verdict=$($py - "$OUT/try_$number.json" "$work/evolve.toml" <<'PY'
import json, sys, tomllib
try:
    r = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("tried no verdict"); raise SystemExit
best = (r.get("reference") or {}).get("score")  # best's in the try's mode (evolve try: in_mode)
min_gain = tomllib.load(open(sys.argv[2], "rb"))["evaluation"].get("min_gain", 0.0)
wins = r.get("status") == "ok" and bool(r.get("score")) and bool(best) and r["score"] < best * (1 - min_gain)
gain = f"{100 * (1 - r['score'] / best):+.2f}%" if r.get("score") and best else "not compared"
print("wins" if wins else "tried", r.get("status"), r.get("score"), "us; best", best, "us:", gain,
      str(r.get("error") or "")[:200])
PY
)
  log "step $number: ${verdict#* }"
  if [[ $verdict == wins* ]]; then
    log "step $number: faster than best by more than min_gain: evolve add"
    evolve add "${kernel[@]}" -m "$message" | tail -3 | tee -a "$OUT/pass.log"
  fi
done 3< "$steps"
evolve lineage best > "$OUT/lineage.txt"
evolve status > "$OUT/status.txt"
tee -a "$OUT/pass.log" < "$OUT/lineage.txt"
remote=$(mktemp -d)/record.git && git init -q --bare "$remote"
git -C "$repo" remote add record "$remote"
evolve push record | tail -2
git -C "$remote" bundle create "$OUT/climb.bundle" --all 2>&1 | tail -1
