#!/bin/bash
# For the next session, on branch judge-clock (rebased on main): job39 (the probe's none against enqueued) and job38
# (the judge's clock against the seed and the cheats) in one device call, about 7 min:
#   git checkout judge-clock; run: bash .devrun/next.sh (carry .whl, .devrun); git checkout main
cd "$(dirname "$0")/.."
bash .devrun/job39.sh 2>&1 | tail -40
bash .devrun/job38.sh 2>&1 | tail -60
