#!/bin/bash
# background job (session 27): the 20x32 probe, the new seed exported and through eval.py, then share_noise; /tmp/resa
R=/tmp/resa; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
nvidia-smi > $R/smi.txt 2>&1
PYTHONPATH=$PWD:$PYTHONPATH timeout 150 python3 bench/small_probe.py > $R/small.txt 2>&1; echo "small rc $?" >> $R/status
PYTHONPATH=$PWD:$PYTHONPATH timeout 150 python3 bench/small_probe.py --calls 400 > $R/small2.txt 2>&1; echo "small2 rc $?" >> $R/status
touch $R/done0
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
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
log "GPU MODE eval.py test and benchmark"
s=$(date +%s); timeout 300 $py bench/gpumode_eval.py --problem .devrun/QR_V2/linalg/qr_v2 --submission "$OUT/submission.py" --out "$OUT/eval" > "$OUT/gpumode.out" 2>&1
echo "gpumode rc $? $(( $(date +%s) - s )) s" | tee -a "$OUT/pass.log" >> $R/status
)
touch $R/done1
OUT=$R/noise ROUNDS=5 timeout 420 bash bench/share_noise.sh > $R/noise.out 2>&1; echo "noise rc $?" >> $R/status
touch $R/done2
