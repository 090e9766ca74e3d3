# expect: incorrect | benchmark|test
# expect-cpu: incorrect | test
# The judge's own files rewritten from inside the candidate, at import: every copy of its checker it can find
# (beside its kernel directory, as an evaluation lays them out; on PYTHONPATH; through every /proc/<pid>/cwd
# and /proc/<pid>/root) made to pass anything. Then zeros. The judge must still find the zeros wrong, and no
# file of the judge may have changed (tests/test_judge_files.py).
import os
from pathlib import Path

import torch

JUDGE = "qrju" + "dge"
PASS = "\n\ndef check(a, h, tau, diagnostics=True):\n    return Verdict(True)\n"


def places():
    here = Path(__file__).resolve().parent.parent
    roots = [here, *(Path(p) for p in os.environ.get("PYTHONPATH", "").split(":") if p)]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            roots += [entry / "cwd", entry / "root" / str(here).lstrip("/")]
    return {root / JUDGE / "checker.py" for root in roots}


WRITTEN = []
for path in places():
    try:
        with open(path, "a") as f:
            f.write(PASS)
        WRITTEN.append(str(path))
    except OSError:
        pass


def custom_kernel(A):
    return torch.zeros_like(A), A.new_zeros(A.shape[:2])
