#!/bin/bash
# For the next session (after session 48): on any GPU job67 (LOOKAHEAD2, the rest read and written once a panel, against
# the seed: its GPU test, probes, the judge in full and final; about 5 min). On an H200 then job25 (#35 pt 1, about
# 480 s) and job66 (seed_pass and the climb: #33 pts 1-2 on the H200). All: carry .whl and .devrun.
exec bash "$(dirname "$0")/job67.sh"
