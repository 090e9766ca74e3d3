#!/usr/bin/env bash
# The wheels that evolve, its test extra and its build (hatchling, for `pip install -e`) need, read from
# pyproject.toml, for a GPU host without a package index whose Python already has torch and CuPy. Copy DIR there and
# run the GPU workflow's job as a runner would, offline:
#   VENV_ARGS=--system-site-packages GPU_EXTRA=gpu-cuda13 PIP_NO_INDEX=1 PIP_FIND_LINKS=$PWD/DIR bash bench/ci_gpu.sh
# Usage: bash bench/offline_wheels.sh DIR [PYTHON_VERSION]   (default 3.12; x86-64 Linux; about 25 MB)
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:?usage: offline_wheels.sh DIR [PYTHON_VERSION]}
version=${2:-3.12}
mapfile -t wanted < <(python3 - <<'PY'
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))
for requirement in (*project["project"]["dependencies"], *project["project"]["optional-dependencies"]["test"],
                    *project["build-system"]["requires"], "editables"):  # editables: hatchling's editable installs
    print(requirement)
PY
)
python3 -m pip download -q --only-binary=:all: --python-version "$version" --implementation cp \
  --abi "cp${version/./}" --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform any -d "$dest" "${wanted[@]}"
echo "$(ls "$dest" | wc -l) wheels in $dest ($(du -sh "$dest" | cut -f1)) for Python $version"
