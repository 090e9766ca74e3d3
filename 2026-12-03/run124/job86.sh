#!/bin/bash
# Session 59: the product's own `tune` sweep around the new seed (RP_TILE = 1): the README's command in a fresh copy of
# this tree (the shipped evolve.toml: tune only without an LLM, sandbox on, `final` confirmation), bounded by
# --max-hours; then `evolve status`, `evolve lineage best`, and the run as one bundle (its notes too) for the CPU side.
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
source bench/lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a $OUT/pass.log
repo=$(mktemp -d)/sweep
this_tree "$repo" || exit 1
s=$(date +%s)
(cd "$repo" && timeout -s INT ${SWEEP_S:-420} python3 -m evolver start --max-hours ${HOURS:-0.1} --max-candidates 400) > $OUT/start.log 2>&1
echo "start rc $? $(( $(date +%s) - s )) s" | tee -a $OUT/pass.log
tail -5 $OUT/start.log
(cd "$repo" && python3 -m evolver status && python3 -m evolver lineage best) > $OUT/status.txt 2>&1
head -30 $OUT/status.txt
git -C "$repo" bundle create $OUT/sweep.bundle --all 2>&1 | tail -1
