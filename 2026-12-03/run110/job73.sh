#!/bin/bash
# Session 52: after job71 says WG_FROM=$1 wins (the judge's `full`): the climb's step with the product
# (bench/climb_pass.sh from the seed as it ships, WG_FROM=0: evolve try, evolve add, lineage, the bundle), then
# the seed with WG_FROM=$1 as its default in bench/seed_pass.sh (geqrf, blocked_wy, the seed, five repeats, final)
# with the seed before it (WG_FROM=0) as the variant, profile skipped. About 9 minutes. Carry .whl and .devrun.
wg=${1:-48}
cd "$(dirname "$0")/.."
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
git config --global user.name bench; git config --global user.email bench@localhost
grep "^WG_FROM=48" bench/climb/steps.txt | sed "s/^WG_FROM=48/WG_FROM=$wg/" > /tmp/steps.txt
s=$(date +%s)
STEPS=/tmp/steps.txt OUT=$OUT/climb timeout 280 bash bench/climb_pass.sh > $OUT/climb_stdout.txt 2>&1
echo "climb rc $? $(( $(date +%s) - s )) s"; tail -25 $OUT/climb/pass.log
sed -i "s/^WG_FROM = 0  # @tune/WG_FROM = $wg  # @tune/" seed_kernels/tsqr_wy/kernel.py
grep -n "^WG_FROM" seed_kernels/tsqr_wy/kernel.py
s=$(date +%s)
SKIP_PROFILE=1 VARIANTS="WG_FROM=0" OUT=$OUT/seed timeout 400 bash bench/seed_pass.sh > $OUT/seed_stdout.txt 2>&1
echo "seed pass rc $? $(( $(date +%s) - s )) s"; tail -30 $OUT/seed/pass.log
