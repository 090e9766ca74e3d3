"""Judged candidates over time, a line a run, as an SVG: where a run's rate goes (the seed judged cold, then the
climb), against the line of 1,000 an hour from the run's start.

    python bench/rate_plot.py NAME=REPO [NAME=REPO ...] [-o rate.svg] [--title TEXT]

Each REPO is a run's repository (bench/pipeline_pass.sh's run_NAME.bundle: `git clone --mirror` it), its latest run
drawn: x, seconds since the run's record was made; y, results written (confirmations are ticks on the x axis,
since they are not candidates). Each line's legend says what run_stages.py says of the whole run: N in S s, N an
hour, and how many modules its judges compiled. Reads git only; no dependency beyond evolve's own.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from html import escape
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evolver.records.refs import RUN_REF  # noqa: E402
from evolver.records.store import Store  # noqa: E402

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 720, 420, 56, 16, 36, 92
GOAL_PER_HOUR = 1000


@dataclass
class Series:
    name: str
    results: list[float]  # seconds since the run was made, each first result's
    confirms: list[float]
    # modules compiled for the run's evaluations (their judges' compile cache: `nvrtc_cache.compiled`): which moves
    # a run judged, and how many of them recompiled, sets its rate as much as a change does (run62: 6 against 22)
    compiles: int = 0

    def legend(self) -> str:
        if not self.results:
            return f"{self.name}: no results"
        span = self.results[-1]
        return (f"{self.name}: {len(self.results)} in {span:.0f} s, {len(self.results) * 3600 / span:.0f} an hour, "
                f"{self.compiles} NVRTC compiles")


def read(name: str, repo: Path) -> Series:
    store = Store(repo.resolve())
    runs = store.runs()
    if not runs:
        raise SystemExit(f"{repo}: no run")
    run = runs[-1]
    created = float((store.get_meta(RUN_REF.format(run=run)) or {}).get("created") or 0.0)
    snap = store.snapshot(run)
    results = [r for c in snap.candidates.values() for r in c.results]
    written = sorted((r.t, bool(r.confirm)) for r in results if r.t)
    first = created or (written[0][0] if written else 0.0)
    caches = [r.details.get("nvrtc_cache") for r in results]
    return Series(name, [t - first for t, confirm in written if not confirm],
                  [t - first for t, confirm in written if confirm],
                  sum(int(c.get("compiled", 0)) for c in caches if isinstance(c, dict)))


def step(span: float, marks: int) -> float:
    """A round step that cuts `span` into at most `marks` parts."""
    for unit in (1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600):
        if span / unit <= marks:
            return unit
    return span / marks


def svg(series: list[Series], title: str) -> str:
    t_max = max([s.results[-1] for s in series if s.results] + [1.0]) * 1.05
    n_max = max([len(s.results) for s in series] + [1]) * 1.1
    w, h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(t: float) -> float:
        return LEFT + w * t / t_max

    def y(n: float) -> float:
        return TOP + h * (1 - n / n_max)

    height = HEIGHT + 14 * max(0, len(series) - 2)  # a legend's row a run, below the goal's
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" '
           f'font-size="12"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="{LEFT}" y="20" font-size="14">{escape(title)}</text>']
    dt, dn = step(t_max, 8), step(n_max, 6)
    for i in range(int(t_max // dt) + 1):
        out.append(f'<line x1="{x(i * dt):.1f}" y1="{TOP}" x2="{x(i * dt):.1f}" y2="{TOP + h}" stroke="#eee"/>'
                   f'<text x="{x(i * dt):.1f}" y="{TOP + h + 16}" text-anchor="middle">{i * dt:g}</text>')
    for i in range(int(n_max // dn) + 1):
        out.append(f'<line x1="{LEFT}" y1="{y(i * dn):.1f}" x2="{LEFT + w}" y2="{y(i * dn):.1f}" stroke="#eee"/>'
                   f'<text x="{LEFT - 6}" y="{y(i * dn) + 4:.1f}" text-anchor="end">{i * dn:g}</text>')
    out.append(f'<text x="{LEFT + w / 2}" y="{TOP + h + 34}" text-anchor="middle">seconds since the run was made'
               f'</text><text x="14" y="{TOP + h / 2}" transform="rotate(-90 14 {TOP + h / 2})" '
               f'text-anchor="middle">results</text>')
    goal_t = min(t_max, n_max * 3600 / GOAL_PER_HOUR)
    out.append(f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(goal_t):.1f}" y2="{y(goal_t * GOAL_PER_HOUR / 3600):.1f}" '
               f'stroke="#888" stroke-dasharray="6 4"/>')
    legend = [(f"{GOAL_PER_HOUR:,} an hour from the start (ticks on the axis: confirmations)", "#888", True)]
    for s, colour in zip(series, COLOURS * 4):
        points = [(0.0, 0)]  # a step a result: the count rises when one is written, not before
        for i, t in enumerate(s.results):
            points += [(t, i), (t, i + 1)]
        path = " ".join(f"{x(t):.1f},{y(n):.1f}" for t, n in points)
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.6" points="{path}"/>')
        out.extend(f'<line x1="{x(t):.1f}" y1="{TOP + h}" x2="{x(t):.1f}" y2="{TOP + h - 8}" stroke="{colour}" '
                   f'stroke-width="2"/>' for t in s.confirms)
        legend.append((s.legend(), colour, False))
    for i, (text, colour, dashed) in enumerate(legend):
        ly, lx = TOP + h + 52 + 14 * i, LEFT  # a row each: the goal's line, then the runs
        out.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 22}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"'
                   + (' stroke-dasharray="6 4"' if dashed else "") + f'/><text x="{lx + 28}" y="{ly}">'
                   f'{escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", metavar="NAME=REPO")
    p.add_argument("-o", "--out", type=Path, default=Path("rate.svg"))
    p.add_argument("--title", default="judged candidates over time")
    args = p.parse_args(argv)
    series = []
    for spec in args.runs:
        name, _, repo = spec.rpartition("=")
        series.append(read(name or Path(repo).name, Path(repo)))
    args.out.write_text(svg(series, args.title))
    for s in series:
        print(s.legend())
    return 0


if __name__ == "__main__":
    sys.exit(main())
