"""The score of tests/climb_problem: 100 / WIDTH from the kernel's kernel.py (lower is better), read as text,
never imported. One JSON line on stdout."""

import argparse
import json
import re
from pathlib import Path

p = argparse.ArgumentParser()
p.add_argument("--kernel-dir", required=True)
p.add_argument("--mode")
args = p.parse_args()
found = re.search(r"^WIDTH = (\d+)", (Path(args.kernel_dir) / "kernel.py").read_text(), re.M)
if found is None or int(found.group(1)) <= 0:
    print(json.dumps({"status": "incorrect", "error": "kernel.py has no positive WIDTH"}))
else:
    print(json.dumps({"status": "ok", "score": 100.0 / int(found.group(1))}))
