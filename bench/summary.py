"""Markdown table of QR harness results from one run: baseline first, then candidates, per shape and
geomean, with the speedup over the baseline; a result that is not `ok` shows its status and error in its column
(and the exit status is 1).
Usage: python bench/summary.py baseline.json name=result.json ..."""

import json
import sys
from typing import Any


def load(path: str) -> dict[str, Any]:
    """A harness result, or what stands for one that was never written whole."""
    try:
        with open(path) as f:
            result = json.loads(f.read().strip().splitlines()[-1])
        return result if isinstance(result, dict) else {"status": "crash", "error": f"{path}: not a result"}
    except (OSError, ValueError, IndexError):
        return {"status": "crash", "error": f"{path}: no result (the harness's log says why)"}


def ms(us: float | None, base: float | None) -> str:
    if not us:
        return "-"
    return f"{us / 1000:.3f} ms" + (f" ({base / us:.1f}x)" if base else "")


def main(argv: list[str]) -> int:
    runs = [("torch.geqrf", load(argv[0]))] + [(a.split("=", 1)[0], load(a.split("=", 1)[1])) for a in argv[1:]]
    base = runs[0][1]
    print("| shape | " + " | ".join(name for name, _ in runs) + " |")
    print("|---|" + "---:|" * len(runs))
    per_shape = [{s["shape"]: s["mean_us"] for s in r.get("shapes", [])} for _, r in runs]
    shapes = next((list(s) for s in per_shape if s), [])
    for shape in shapes:
        base_us = per_shape[0].get(shape)
        cells = [ms(base_us, None)] + [ms(mine.get(shape), base_us) for mine in per_shape[1:]]
        print(f"| {shape} | " + " | ".join(cells) + " |")
    cells = []
    for i, (_, r) in enumerate(runs):
        cells.append(f"**{ms(r['score'], base.get('score') if i else None)}**" if r.get("score") else
                     f"{r.get('status')}: {str(r.get('error', ''))[:80]}")
    print("| geomean | " + " | ".join(cells) + " |")
    return 0 if all(r.get("status") == "ok" for _, r in runs) else 1  # (the table is written either way)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
