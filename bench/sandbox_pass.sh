#!/usr/bin/env bash
# One GPU pass for the sandbox (issue "candidates are hostile code"): the QR harness inside and outside it,
# alternating on the blocked_wy seed; then `evolve start` with the sandbox on for ${DEMO_CANDIDATES:-20}
# candidates (tune only, full mode), and every candidate it judged `ok` judged again outside the sandbox.
# About 7 minutes on an H200. Results: ${OUT:-bench/out}/sandbox_cost.jsonl (the alternation),
# evolve_in.jsonl (the run's own results), evolve_out.jsonl (the same kernels outside); logs beside them.
source "$(dirname "$0")/lib.sh"
log "the harness inside and outside the sandbox, alternating"
$py bench/sandbox_cost.py --repeats ${SANDBOX_REPEATS:-2} 2>&1 | tee "$OUT/sandbox_cost.jsonl" | tail -1 | tee -a "$OUT/pass.log"
log "evolve start on the QR problem, sandbox on (tune only, full mode, ${DEMO_CANDIDATES:-20} candidates)"
demo=$(mktemp -d)
cp -r seed_kernels harness "$demo/"
sed -e 's/^mode = .*/mode = "full"/' -e 's/^confirm_mode = .*/confirm_mode = ""/' -e 's/^sandbox = .*/sandbox = "on"/' \
    -e "s/^operators = .*/operators = { tune = 1.0 }/" evolve.toml > "$demo/evolve.toml"
git -C "$demo" init -q && git -C "$demo" add -A && git -C "$demo" -c user.name=ci -c user.email=ci@x commit -qm qr
$py -m evolver start --repo "$demo" --max-candidates ${DEMO_CANDIDATES:-20} >>"$OUT/evolve.log" 2>&1
$py -m evolver status --repo "$demo" --json > "$OUT/status_in.json"
kernels=$(mktemp -d)
$py - "$demo" "$kernels" > "$OUT/evolve_in.jsonl" <<'PY'
import json, subprocess, sys
from pathlib import Path
from evolver.store import Store
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
log "the same kernels outside the sandbox"
$py bench/sandbox_cost.py "$kernels"/* --repeats 1 --sides out > "$OUT/evolve_out.jsonl" 2>>"$OUT/harness.log"
$py - "$OUT" <<'PY' | tee -a "$OUT/pass.log"
import json, statistics, sys
from pathlib import Path
out = Path(sys.argv[1])
inside = {r["id"]: r for r in map(json.loads, (out / "evolve_in.jsonl").read_text().splitlines())}
ratios, extra = [], []
for r in map(json.loads, (out / "evolve_out.jsonl").read_text().splitlines()):
    if "kernel" not in r or r["status"] != "ok":
        continue
    ratios.append(inside[r["kernel"]]["score"] / r["score"])
    print(f'{r["kernel"]}: in {inside[r["kernel"]]["score"]:.1f} us, out {r["score"]:.1f} us, ratio {ratios[-1]:.4f}')
if ratios:
    print(f"{len(ratios)} kernels: in/out median {statistics.median(ratios):.4f}, range {min(ratios):.4f}-{max(ratios):.4f}")
PY
