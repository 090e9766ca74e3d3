"""Where one call of tsqr_wy's look-ahead spends its time on the GPU, kernel by kernel (CUPTI through torch.profiler,
kernels inside CUDA graphs included): the critical path of a blocked factorisation is its panels, each waiting for
the update of its own columns, so this prints, per panel, how long it ran and how long it waited after the kernel
it depends on had finished, and over the call how much of the time each stream had a kernel running.

    python bench/timeline.py BATCH N [NAME=VALUE ...] [--steps 8]    (a GPU; NAME=VALUE overrides kernel.py)

A panel is a kernel whose name starts with one of PANELS; its wait is its start less the end of the last kernel that
ended before it on another stream. In the look-ahead's graph that is the update of the rest (on a stream of its own),
after which the update of the panel's own columns runs on the panel's stream: the wait is that update, on the chain.
"""

import argparse
import json
import statistics
import tempfile
from pathlib import Path

import torch
from apply_probe import KERNEL, load  # (bench/ is the script's directory, first on sys.path)
from torch.profiler import ProfilerActivity, profile

PANELS = ("tile_cluster", "reg_cluster", "mb_cluster", "mb_panel", "tile_panel", "reg_panel", "col_panel",
          "col_cluster", "panel_qr")


def kernels(fn):
    """(name, stream, start us, end us) of every kernel fn() ran, in order of start."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace.json"
        prof.export_chrome_trace(str(trace))
        events = json.loads(trace.read_text())["traceEvents"]
    found = [(e["name"], e.get("args", {}).get("stream"), e["ts"], e["ts"] + e["dur"]) for e in events
             if e.get("cat") == "kernel"]
    return sorted(found, key=lambda k: k[2])


def busy(spans):
    """Microseconds covered by the union of (start, end) spans."""
    total, reach = 0.0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total, reach = total + end - start, end
        elif end > reach:
            total, reach = total + end - reach, end
    return total


def report(found, steps=8, listed=0):
    """Lines that say where a call's kernels (name, stream, start us, end us; in order of start) spent its time:
    each stream's busy time, the first `listed` kernels, the first `steps` panels one by one and all of them summed."""
    t0, t1 = found[0][2], max(e for *_, e in found)
    lines = [f"{len(found)} kernels, {t1 - t0:.1f} us from the first kernel's start to the last one's end"]
    for stream in sorted({s for _, s, *_ in found}, key=str):
        spans = [(s, e) for _, st, s, e in found if st == stream]
        lines.append(f"  stream {stream}: {len(spans)} kernels, busy {busy(spans):.1f} us")
    lines.append(f"  any stream busy {busy([(s, e) for *_, s, e in found]):.1f} us")
    lines += [f"    {start - t0:9.1f} +{end - start:7.1f} us  stream {stream}  {name[:70]}"
              for name, stream, start, end in found[:listed]]
    panels = [(i, f) for i, f in enumerate(found) if f[0].startswith(PANELS)]
    runs, waits = [], []
    for number, (i, (name, stream, start, end)) in enumerate(panels):
        before = [f for f in found[:i] if f[1] != stream and f[3] <= start]
        wait = start - max(f[3] for f in before) if before else 0.0
        runs.append(end - start)
        waits.append(wait)
        if number < steps:
            last = max(before, key=lambda f: f[3])[0][:40] if before else "-"
            lines.append(f"  panel {number:3}: {name[:24]:24} ran {end - start:7.1f} us, waited {wait:6.1f} us after "
                         f"{last}")
    if panels:
        gaps = [b[1][2] - a[1][2] for a, b in zip(panels, panels[1:])]
        lines.append(f"  {len(panels)} panels: ran {sum(runs):.1f} us (median {statistics.median(runs):.1f}), waited "
                     f"{sum(waits):.1f} us (median {statistics.median(waits):.1f}); between panels' starts, median "
                     f"{statistics.median(gaps) if gaps else 0:.1f} us")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("batch", type=int)
    p.add_argument("n", type=int)
    p.add_argument("overrides", nargs="*")
    p.add_argument("--steps", type=int, default=8, help="panels printed one by one")
    p.add_argument("--list", type=int, default=0, help="kernels printed one by one from the call's start")
    args = p.parse_args()
    k = load(KERNEL)
    for override in args.overrides:
        name, value = override.split("=")
        setattr(k, name, int(value))
    A = torch.randn(args.batch, args.n, args.n, device="cuda")
    for _ in range(2):  # compiled, captured, warm
        k.custom_kernel(A)
    torch.cuda.synchronize()
    found = kernels(lambda: k.custom_kernel(A))
    print(torch.cuda.get_device_name(), f"{args.batch}x{args.n}", " ".join(args.overrides))
    print("\n".join(report(found, args.steps, args.list)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
