"""The judge's clock against honest kernels: how much of each timed call the judge cannot explain
(`unexplained_us`: its fastest call less the fastest calibration call, qrjudge/timed.py `clocks_agree`), per shape,
over every result a set of runs recorded, and what the slack (`WALL_SLACK`) made of the largest: passed, a crash
(the runner and the judge waited for a CPU as long a call as the excess: judged again) or a rejection (an honest
kernel called a cheat: must never happen).

    python bench/clock_slack.py PATH...

PATH: a run's repository or bundle (every note of refs/notes/evolve, confirmations too) or a results.jsonl of the
GPU pass scripts. Results on a GPU only (the CPU self-test's slack is another). The figures behind
docs/QR_CONTRACT.md's "Times" come from the notebook's runs through this.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evolver.records.candidates import parse_note  # noqa: E402
from evolver.records.store import Store  # noqa: E402
from qrjudge.timed import WALL_SLACK, clocks_agree  # noqa: E402
from qrjudge.verdict import Verdict  # noqa: E402


def notes(repo: Path) -> Iterator[dict[str, Any]]:
    """Every record of every note of refs/notes/evolve (a result, then its confirmations)."""
    store = Store(repo)
    for raw in store.cat_blobs(store.note_listing().values()).values():
        yield from parse_note(raw.decode("utf-8", "replace"))[0]


def results(path: Path) -> Iterator[dict[str, Any]]:
    """Every result's details under PATH (a results.jsonl, a repository, or a bundle cloned for the reading)."""
    if path.suffix == ".jsonl":
        for row, _ in [parse_note(line) for line in path.read_text().splitlines()]:
            result = (row[0] if row else {}).get("result") or {}
            yield result.get("details", result)
    elif path.suffix == ".bundle":
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["git", "clone", "-q", "--mirror", str(path), tmp + "/r"], check=True, capture_output=True)
            for note in notes(Path(tmp) / "r"):
                yield note.get("details") or {}
    else:
        for note in notes(path):
            yield note.get("details") or {}


def verdict(shape: dict[str, Any]) -> str:
    """What the judge's own `clocks_agree` makes of this shape's recorded figures on a GPU (its median call, median
    wall, unexplained time and the host's waits over its calls)."""
    runs = max(int(shape.get("runs") or 1), 1)
    try:
        clocks_agree(shape.get("shape", "?"), [shape.get("median_us") or 0.0] * runs,
                     [shape.get("wall_median_us") or 0.0] * runs, shape["unexplained_us"], WALL_SLACK["cuda"],
                     shape.get("host") or {})
    except Verdict as found:
        return "crash" if found.status == "crash" else "REJECTED"
    return "passed"


def main(paths: list[str]) -> None:
    by_shape: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in paths:
        for details in results(Path(path)):
            if not isinstance(details.get("gpu"), dict) or details.get("baseline"):
                continue  # the CPU self-test's, or torch.geqrf's
            for shape in details.get("shapes") or []:
                if isinstance(shape.get("unexplained_us"), (int, float)):
                    by_shape[str(shape.get("shape", "?")).split(" ")[0]].append(shape)
    print(f"slack on a GPU: max({WALL_SLACK['cuda'][0]:.0f} us, {100 * WALL_SLACK['cuda'][1]:.0f}% of the median call)")
    print(f"{'shape':<10} {'results':>7} {'median call':>12} {'p50':>8} {'p99':>8} {'max':>8}  largest: waited a call, "
          "verdict")
    for name, shapes in sorted(by_shape.items(), key=lambda kv: min(s.get("median_us") or 0 for s in kv[1])):
        shapes.sort(key=lambda s: s["unexplained_us"])
        calls = sorted(s.get("median_us") or 0 for s in shapes)
        p = [shapes[int(q * (len(shapes) - 1))]["unexplained_us"] for q in (0.5, 0.99, 1.0)]
        top = shapes[-1]
        waited = (top.get("host") or {}).get("waited_ms")
        per_call = f"{waited * 1000 / max(top.get('runs') or 1, 1):.0f} us" if isinstance(waited, (int, float)) else "?"
        counts: dict[str, int] = defaultdict(int)
        for s in shapes:
            counts[verdict(s)] += 1
        print(f"{name:<10} {len(shapes):>7} {calls[len(calls) // 2]:>10.1f}us {p[0]:>8.1f} {p[1]:>8.1f} {p[2]:>8.1f}  "
              f"{per_call}, {verdict(top)}; " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    main(sys.argv[1:])
