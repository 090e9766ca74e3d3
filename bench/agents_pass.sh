#!/usr/bin/env bash
# One GPU pass for issue "agents in the loop": on the QR problem, a short run to have a `best`, then
# `evolve try` on the seed against it (each output line time-stamped: time to the first line and to the
# verdict) and `evolve add` of a hand-changed seed, judged as a candidate. About 3 minutes on an H200.
# Results: ${OUT:-bench/out}/try.txt, add.txt, status.txt, lineage.txt.
source "$(dirname "$0")/lib.sh"
stamp() {  # prefix every line with the seconds since $1
  $py -u -c 'import sys, time
for line in sys.stdin: print(f"{time.time() - float(sys.argv[1]):7.2f} s  {line}", end="")' "$1"
}
demo=$(mktemp -d)
qr_demo "$demo" || exit 1
log "evolve start: the seed and ${DEMO_CANDIDATES:-2} tune children, full mode"
$py -m evolver start --repo "$demo" --max-candidates ${DEMO_CANDIDATES:-2} >>"$OUT/evolve.log" 2>&1
log "evolve try seed_kernels/blocked_wy (against best)"
t0=$(date +%s.%N)
(cd "$demo" && $py -m evolver try seed_kernels/blocked_wy 2>&1; echo "exit code $?") | stamp "$t0" | tee "$OUT/try.txt"
log "evolve add of a hand-changed seed"
mkdir -p "$demo/hand" && cp "$demo"/seed_kernels/blocked_wy/* "$demo/hand/"
sed -i -e 's/^\(MIN_WIDTH *= *\)[0-9]*/\116/' "$demo/hand/kernel.py"
git -C "$demo" diff --no-index --stat seed_kernels/blocked_wy hand > "$OUT/hand.diff" 2>&1
t0=$(date +%s.%N)
(cd "$demo" && $py -m evolver add hand -m "by hand: MIN_WIDTH 16" 2>&1; echo "exit code $?") | stamp "$t0" | tee "$OUT/add.txt"
(cd "$demo" && $py -m evolver status 2>&1) > "$OUT/status.txt"
(cd "$demo" && $py -m evolver lineage best 2>&1) > "$OUT/lineage.txt"
git -C "$demo" status --short > "$OUT/worktree_after.txt"
git -C "$demo" worktree list >> "$OUT/worktree_after.txt"
