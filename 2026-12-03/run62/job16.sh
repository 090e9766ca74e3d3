#!/bin/bash
# session 38's second device job (background; collect with .devrun/collect.sh SECONDS doneN):
# 1 the judging GPU tests as bench/ci_gpu.sh runs them (the lock shared, two workers): the planted cheats' statuses
# 2 flush_overlap and the seeds' quick tests with no lock set (tests take turns on their own lock, taking_turns)
# 3 a confirmation as the engine runs it (the seed in `final`, --profile, the GPU's lock set): the tree before this
#    session (af0bc1f, its profile imports torch's compiler) and this tree, alternating, twice each, cache warm
R=/tmp/res33; rm -rf $R; mkdir -p $R
cd "$(dirname "$0")/.."
here=$PWD
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >> $R/status 2>&1
export PYTHONPATH=$here:/tmp/site
nvidia-smi > $R/smi.txt 2>&1
export EVOLVE_NVRTC_CACHE=$HOME/.cache/evolve/nvrtc; mkdir -p $EVOLVE_NVRTC_CACHE
s=$(date +%s); EVOLVE_GPU_LOCKS=$(mktemp -d) timeout 400 python3 -m pytest -q -rs -m "gpu and not alone" -n 2 -p no:cacheprovider tests/test_harness_gpu.py > $R/gputests.out 2>&1
echo "gpu tests rc $? $(( $(date +%s) - s )) s" >> $R/status; tail -2 $R/gputests.out >> $R/status; touch $R/done1
s=$(date +%s); timeout 200 python3 -m pytest -q -rs -n 2 -p no:cacheprovider tests/test_harness_gpu.py -k "flush_overlap or seed_passes" > $R/turns.out 2>&1
echo "turns rc $? $(( $(date +%s) - s )) s" >> $R/status; tail -2 $R/turns.out >> $R/status; touch $R/done2
mkdir -p /tmp/prev && tar -xf .devrun/previous.tar -C /tmp/prev
locks=$(mktemp -d)
for round in 1 2; do
  for tree in previous this; do
    dir=$here; [[ $tree == previous ]] && dir=/tmp/prev
    s=$(date +%s)
    (cd $dir && EVOLVE_GPU_LOCKS=$locks PYTHONPATH=$dir:/tmp/site timeout 200 python3 -m qrjudge --kernel-dir $here/seed_kernels/tsqr_wy \
      --mode final --profile > $R/confirm_${tree}_$round.json 2> $R/confirm_${tree}_$round.err)
    echo "confirm $tree $round rc $? $(( $(date +%s) - s )) s" >> $R/status
  done
done
python3 - "$R" >> $R/status 2>&1 <<'PY'
import json, sys, glob
for f in sorted(glob.glob(sys.argv[1] + "/confirm_*.json")):
    try:
        r = json.loads(open(f).read().strip().splitlines()[-1])
    except Exception as e:
        print(f, "unreadable", e); continue
    t = r.get("timings", {}); held = (r.get("gpu_lock") or {}).get("held", [])
    spans = [f"{h[0]} {h[2]-h[1]:.2f}" for h in held]
    print(f.split("/")[-1], r.get("status"), r.get("score"), "wall", t.get("wall_s"), "compiler", t.get("timed_setup_compiler_s"),
          "profile", t.get("profile_s"), "tests", t.get("tests_s"), "bench", t.get("bench_s"), "holds", spans,
          "profile compiler", (r.get("profile") or {}).get("compiler_imported"))
PY
touch $R/done3
