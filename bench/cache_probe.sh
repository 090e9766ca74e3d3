#!/usr/bin/env bash
# The compile cache through the engine (sandbox on, prestarted judges): `evolve start --max-candidates N` in a fresh
# copy of this tree, then what the cache served each evaluation (details.nvrtc_cache: hits, compiled, and why a
# compile was not served) with its import and test stages. About 2 minutes on an H200.
source "$(dirname "$0")/lib.sh"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
clone=$(mktemp -d)
this_tree "$clone" && cd "$clone" || exit 1
log "evolve start --max-candidates ${CANDIDATES:-4}"
PYTHONPATH=$clone${PYTHONPATH:+:$PYTHONPATH} timeout -s INT "${RUN_S:-100}" $py -m evolver start \
  --max-candidates "${CANDIDATES:-4}" > "$OUT/evolve_probe.log" 2>&1
log "rc $?; cache: $(find "$nvrtc_dir" -name '*.bin' | wc -l) entries"
PYTHONPATH=$clone${PYTHONPATH:+:$PYTHONPATH} $py - <<'PY' | tee -a "$OUT/pass.log"
from pathlib import Path
from evolver.records.store import Store
store = Store(Path.cwd())
snap = store.snapshot(store.runs()[-1])
for c in sorted(snap.candidates.values(), key=lambda c: c.id):
    for r in c.results:
        t = r.details.get("timings") or {}
        print(c.id, "confirm" if r.confirm else "", r.status, r.score, r.details.get("nvrtc_cache"),
              {k: t.get(k) for k in ("cuda_start_s", "import_kernel_s", "tests_s", "wall_s")}, (r.error or "")[:200])
PY
cp "$nvrtc_dir/.server.log" "$OUT/server.log" 2>/dev/null
tail -n 20 "$OUT/server.log" 2>/dev/null | tee -a "$OUT/pass.log"
