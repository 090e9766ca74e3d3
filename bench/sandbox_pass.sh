#!/usr/bin/env bash
# One GPU pass for the sandbox (issue "candidates are hostile code"): the QR harness inside and outside it,
# alternating on the blocked_wy seed; then `evolve start` with the sandbox on for ${DEMO_CANDIDATES:-20}
# candidates (tune only, full mode), and every candidate it judged `ok` judged again inside and outside the
# sandbox, alternating, PAIR_REPEATS (2) times each, compared by the best of each side; those evaluations are
# prestarted two ahead, as the engine pipelines its own (cold, 12 candidates took about 10 minutes on an H200;
# prestarted, 20 should take about 7: not yet measured). Results: ${OUT:-bench/out}/sandbox_cost.jsonl (the alternation),
# evolve_in.jsonl (the run's own results), pairs.jsonl (the same kernels both sides); logs beside them.
source "$(dirname "$0")/lib.sh"
log "the harness inside and outside the sandbox, alternating"
$py bench/sandbox_cost.py --repeats ${SANDBOX_REPEATS:-2} 2>&1 | tee "$OUT/sandbox_cost.jsonl" | tail -1 | tee -a "$OUT/pass.log"
log "evolve start on the QR problem, sandbox on (tune only, full mode, ${DEMO_CANDIDATES:-20} candidates)"
demo=$(mktemp -d)
cp -r seed_kernels qrjudge "$demo/"
sed -e 's/^mode = .*/mode = "full"/' -e 's/^confirm_mode = .*/confirm_mode = ""/' -e 's/^sandbox = .*/sandbox = "on"/' \
    -e "s/^operators = .*/operators = { tune = 1.0 }/" evolve.toml > "$demo/evolve.toml"
committed "$demo" qr
$py -m evolver start --repo "$demo" --max-candidates ${DEMO_CANDIDATES:-20} >>"$OUT/evolve.log" 2>&1
$py -m evolver status --repo "$demo" --json > "$OUT/status_in.json"
kernels=$(mktemp -d)
$py - "$demo" "$kernels" > "$OUT/evolve_in.jsonl" <<'PY'
import json, subprocess, sys
from pathlib import Path
from evolver.records.store import Store
repo, out = Path(sys.argv[1]), Path(sys.argv[2])
store = Store(repo)
for c in sorted(store.snapshot(store.runs()[-1]).candidates.values(), key=lambda c: c.id):
    r = c.result
    print(json.dumps({"id": c.id, "status": c.status, "score": c.score,
                      "duration_s": r.line.get("duration_s") if r else None, "tune": c.trailers.get("Tune")}))
    if c.status == "ok":  # the kernel exactly as the engine judged it
        (out / c.id).mkdir()
        archive = subprocess.run(["git", "-C", str(repo), "archive", c.commit, "kernel"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "--strip-components=1", "-C", str(out / c.id)], input=archive.stdout, check=True)
PY
log "the same kernels inside and outside the sandbox, alternating, ${PAIR_REPEATS:-2} times each"
$py bench/sandbox_cost.py "$kernels"/* --repeats ${PAIR_REPEATS:-2} --sides both --prestart > "$OUT/pairs.jsonl" \
  2>>"$OUT/harness.log"
$py - "$OUT" <<'PY' | tee -a "$OUT/pass.log"
# One evaluation of a kernel can land in the machine's slow mode (docs/benchmarks-history.md, third pass), so each side
# is compared by its best of the repeats, next to the engine's own single evaluation inside.
import json, statistics, sys
from pathlib import Path
out = Path(sys.argv[1])
engine = {r["id"]: r for r in map(json.loads, (out / "evolve_in.jsonl").read_text().splitlines())}
best, heavy = {}, {}  # heavy: the geomean of the shapes of 1 ms and more, which the host's speed does not move
for r in map(json.loads, (out / "pairs.jsonl").read_text().splitlines()):
    if "kernel" in r and r["status"] == "ok":
        side = best.setdefault(r["kernel"], {})
        side[r["sandbox"]] = min(side.get(r["sandbox"], float("inf")), r["score"])
        slow = [us for us in (r.get("shapes_us") or {}).values() if us and us >= 1000]
        if slow:
            mine = heavy.setdefault(r["kernel"], {})
            mine[r["sandbox"]] = min(mine.get(r["sandbox"], float("inf")), statistics.geometric_mean(slow))
pairs, singles = [], []
for kernel, side in sorted(best.items()):
    if True in side and False in side:
        pairs.append(side[True] / side[False])
        singles.append(engine[kernel]["score"] / side[False])
        print(f"{kernel}: best in {side[True]:.1f} us, best out {side[False]:.1f} us, ratio {pairs[-1]:.4f}; "
              f"the run's own evaluation / best out {singles[-1]:.4f}")
heavy_pairs = [side[True] / side[False] for side in heavy.values() if True in side and False in side]
for name, ratios in (("best in / best out", pairs), ("the run's evaluation / best out", singles),
                     ("shapes of 1 ms and more, best in / best out", heavy_pairs)):
    if ratios:
        within = sum(abs(x - 1) <= 0.02 for x in ratios)
        print(f"{len(ratios)} kernels, {name}: median {statistics.median(ratios):.4f}, range "
              f"{min(ratios):.4f}-{max(ratios):.4f}, {within} within 2%")
PY
