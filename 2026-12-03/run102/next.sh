#!/bin/bash
# For the next session (after session 47): on any GPU first job65 (CLUSTER_MBAR, reg_cluster without a cluster
# barrier a column, against the seed: probes, traces, the judge in full and final; about 4 min). On an H200 then
# job25 (#35 pt 1, about 480 s) and job56 (#33 pts 1-2 on the H200, about 5 min). All: carry .whl and .devrun.
exec bash "$(dirname "$0")/job65.sh"
