#!/usr/bin/env bash
# The lab notebook (raw results of every benchmark pass) checked out into .git/notebook, a worktree of the branch
# `notebook`. A clone of main has the notebook's commits even without the branch: main merges it with
# `git merge -s ours notebook`, so the branch is made here from that merge's second parent when it is missing.
# To add a pass: write its directory (and README.md) in .git/notebook, commit there, then on main
# `git merge -s ours notebook -m "notebook: ..."`.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
if ! git rev-parse -q --verify refs/heads/notebook > /dev/null; then
  tip=$(git log --merges --grep '^notebook' --format=%P -1 | awk '{print $2}')
  [[ -n $tip ]] || { echo "no notebook in this clone's history" >&2; exit 1; }
  git branch notebook "$tip"
fi
where="$(git rev-parse --git-common-dir)/notebook"
[[ -d $where ]] || git worktree add -q "$where" notebook
echo "$where"
