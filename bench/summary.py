"""Markdown table of QR harness results from one run: baseline first, then candidates, per shape and
geomean, with the speedup over the baseline. Usage: python bench/summary.py baseline.json name=result.json ..."""

import json
import sys


def main(argv: list[str]) -> int:
    baseline = json.load(open(argv[0]))
    runs = [(arg.split("=", 1)[0], json.load(open(arg.split("=", 1)[1]))) for arg in argv[1:]]
    names = ["torch.geqrf"] + [name for name, _ in runs]
    print("| shape | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    base_shapes = {s["shape"]: s["mean_us"] for s in baseline.get("shapes", [])}
    for shape, base_us in base_shapes.items():
        cells = [f"{base_us / 1000:.3f} ms"]
        for _, result in runs:
            mine = {s["shape"]: s["mean_us"] for s in result.get("shapes", [])}.get(shape)
            cells.append(f"{mine / 1000:.3f} ms ({base_us / mine:.1f}x)" if mine else "-")
        print(f"| {shape} | " + " | ".join(cells) + " |")
    cells = [f"**{baseline['score'] / 1000:.3f} ms**"]
    for _, result in runs:
        score = result.get("score")
        cells.append(f"**{score / 1000:.3f} ms ({baseline['score'] / score:.1f}x)**" if score else
                     f"{result.get('status')}: {str(result.get('error', ''))[:60]}")
    print("| geomean | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
