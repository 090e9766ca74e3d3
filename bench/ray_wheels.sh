#!/usr/bin/env bash
# Ray for the GPU machine (Python 3.12, no package index there), small enough to travel in one device call:
# ray's wheel without its Java jars (32 of its 79 MB; evolve never starts a Java worker) and the wheels it
# needs, in ${1:-.whl_ray}/ (keep it out of git: .git/info/exclude). There:
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl_ray/*.whl
#   PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH RAY=1 bash bench/throughput.sh
set -euo pipefail
dest=${1:-.whl_ray}
version=${RAY_VERSION:-2.60.0}
mkdir -p "$dest"
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  -d "$dest" "ray==$version"
python3 - "$dest" <<'PY'
import sys, zipfile
from pathlib import Path
wheel = next(Path(sys.argv[1]).glob("ray-*.whl"))
stripped = wheel.with_suffix(".tmp")
with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(stripped, "w", zipfile.ZIP_DEFLATED) as out:
    for item in src.infolist():
        if item.filename.startswith("ray/jars/"):
            continue
        data = src.read(item.filename)
        if item.filename.endswith(".dist-info/RECORD"):  # the record lists only what the wheel holds
            data = b"".join(line + b"\n" for line in data.splitlines() if not line.startswith(b"ray/jars/"))
        out.writestr(item, data)
stripped.replace(wheel)
print(f"{wheel.name}: {wheel.stat().st_size / 1e6:.1f} MB without ray/jars")
PY
du -sh "$dest"
