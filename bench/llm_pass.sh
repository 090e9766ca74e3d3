#!/usr/bin/env bash
# The LLM engine on the flagship (issue "The LLM climbs the flagship", must-show 2): a run from the QR seed with
# `mutate` only, fed by the replies of tests/data/qr_replies.json replayed over HTTP (tests/fake_llm.py), in a
# fresh clone with the shipped evolve.toml (its [llm] pointed at the replay server; sandbox and final-mode
# confirmation on, as shipped): the funnel as `evolve status` prints it, the profile of the seed as the prompt
# shows it (`evolve prompt 1`), and what the profile cost its evaluation. Needs the wheels of
# shared/tools/offline-wheels.sh in .whl (carried). About 6 minutes on an H200. Results under ${OUT:-bench/out}.
source "$(dirname "$0")/lib.sh"
root=$PWD
demo=$(mktemp -d)
cp -r seed_kernels evolve.toml "$demo/"  # the problem as a fresh clone has it (evolve and its judge: on PYTHONPATH)
$py -m tests.fake_llm --replay tests/data/qr_replies.json --port 8089 > "$OUT/replay.log" 2>&1 &
replay=$!
proposals=$($py -c 'import json; print(len(json.load(open("tests/data/qr_replies.json"))["proposals"]))')
cd "$demo" || exit 1
sed -i -e 's|^# base_url = .*|base_url = "http://127.0.0.1:8089/v1"|' -e 's|^# model = .*|model = "replayed-strong"|' \
    -e 's|^api_key_env = .*|api_key_env = ""|' -e 's|^operators = .*|operators = { mutate = 1.0 }|' evolve.toml
committed . "the QR problem, the replay server as its LLM"
sleep 1
log "evolve start: the seed and $proposals replayed proposals"
started=$(date +%s)
timeout -s INT "${RUN_S:-330}" $py -m evolver start --max-candidates $((proposals + 1)) > "$OUT/evolve.log" 2>&1
log "evolve start: rc $?, $(( $(date +%s) - started )) s"
tail -4 "$OUT/evolve.log" | tee -a "$OUT/pass.log"
$py -m evolver status | tee "$OUT/status.txt" | tee -a "$OUT/pass.log"
$py -m evolver status --json > "$OUT/status.json"
$py -m evolver prompt 1 > "$OUT/prompt_seed.txt" 2>&1
grep -A14 "^Where the time goes" "$OUT/prompt_seed.txt" | tee -a "$OUT/pass.log"
tail -2 "$OUT/prompt_seed.txt" | tee -a "$OUT/pass.log"
$py "$root/bench/run_stages.py" . | tee -a "$OUT/pass.log"  # each stage, the confirmations' profile_s too
kill $replay
