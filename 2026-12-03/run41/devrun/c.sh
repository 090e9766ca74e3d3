#!/bin/bash
# background job (session 27): the one-launch host path: launch_cost, small_probe before/after, the judge on the
# seed (and LANE_QR=0), the new seed exported, eval.py test mode and the three small benchmarks; /tmp/resc
R=/tmp/resc; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
export PYTHONPATH=$PWD:$PYTHONPATH
cp seed_kernels/tsqr_wy/*.cu .devrun/before/
timeout 120 python3 bench/launch_cost.py > $R/launch_cost.txt 2>&1; echo "launch_cost rc $?" >> $R/status
for r in 1 2; do
  timeout 120 python3 bench/small_probe.py --calls 100 > $R/probe_after_$r.txt 2>&1; echo "after rc $?" >> $R/status
  timeout 120 python3 bench/small_probe.py --calls 100 --kernel .devrun/before/kernel.py > $R/probe_before_$r.txt 2>&1; echo "before rc $?" >> $R/status
done
touch $R/done0
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
(
OUT=$R/judge; source bench/lib.sh; compile_cache_on
qr seed_full --kernel-dir seed_kernels/tsqr_wy --mode full
qr col_qr_full --kernel-dir $(python3 bench/variant.py seed_kernels/tsqr_wy LANE_QR=0) --mode full
)
touch $R/done1
(
OUT=$R/export; source bench/lib.sh; compile_cache_on
demo=$(mktemp -d); cp -r seed_kernels qrjudge "$demo/"
sed -e 's/^confirm_mode = .*/confirm_mode = ""/' -e "s/^operators = .*/operators = { tune = 1.0 }/" \
    -e 's|^seeds = .*|seeds = ["seed_kernels/tsqr_wy"]|' evolve.toml > "$demo/evolve.toml"
committed "$demo" qr
log "the seed judged by a run"
$py -m evolver start --repo "$demo" --max-candidates 1 >> "$OUT/evolve.log" 2>&1; echo "start rc $?" >> $R/status
log "export --check"
s=$(date +%s); $py -m evolver export --repo "$demo" best --format gpumode --check -o "$OUT/submission.py" > "$OUT/export.log" 2>&1
echo "export rc $? $(( $(date +%s) - s )) s" | tee -a "$OUT/pass.log" >> $R/status
log "eval.py test mode (all 22), then benchmark mode on the three small shapes"
s=$(date +%s); timeout 150 $py bench/gpumode_eval.py --problem .devrun/QR_V2/linalg/qr_v2 --submission "$OUT/submission.py" --modes test --out "$OUT/eval_test" > "$OUT/gpumode_test.out" 2>&1
echo "eval test rc $? $(( $(date +%s) - s )) s" | tee -a "$OUT/pass.log" >> $R/status
s=$(date +%s); timeout 150 $py bench/gpumode_eval.py --problem .devrun/QR_SMALL/linalg/qr_v2 --submission "$OUT/submission.py" --modes benchmark --warm --out "$OUT/eval_bench" > "$OUT/gpumode_bench.out" 2>&1
echo "eval bench rc $? $(( $(date +%s) - s )) s" | tee -a "$OUT/pass.log" >> $R/status
timeout 120 $py bench/small_probe.py --calls 100 --kernel "$OUT/submission.py" > $R/probe_exported.txt 2>&1; echo "exported probe rc $?" >> $R/status
)
touch $R/done2
