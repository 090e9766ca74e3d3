"""A kernel file through GPU MODE's own runner (the contest's eval.py), as a contestant checks a submission before
sending it: `test` mode (the task's tests, each checked), then `benchmark` mode (the task's benchmarks, every timed
call re-checked), each timed from the start of its process, which for an `evolve export` file includes its first
import (the one torch extension it builds, in a fresh TORCH_EXTENSIONS_DIR unless --warm).

    python bench/gpumode_eval.py --problem DIR --submission FILE [--modes test benchmark] [--warm] [--out DIR]
                                 [--benchmarks I [I ...]]

DIR is the contest's problem directory as its repository has it (gpu-mode/reference-kernels, for QR
problems/linalg/qr_v2: eval.py, reference.py, task.py, task.yml; task.yml's `files` list names the rest, such as
utils.py from ../../pmpp_v2). The directory is copied with FILE as submission.py; the tests and benchmarks are
task.yml's, written in eval.py's own format. One JSON line a mode, then a Markdown table of the benchmarks and
their geometric mean; exit 0 only if every mode says `check: pass`. --benchmarks keeps only those of task.yml's
benchmarks, by position from 0 (eval.py's benchmark mode on all 14 of qr_v2 takes about four minutes on an H200,
every timed call re-checked).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TIMEOUT_KEYS = {"test": "test_timeout", "benchmark": "benchmark_timeout", "leaderboard": "ranked_timeout"}


def yaml_list(text: str, key: str) -> list[dict[str, Any]]:
    """The entries of a top-level list in task.yml whose items are one-line JSON objects (`  - {...}`), as the
    contest writes `files`, `tests` and `benchmarks` (read without a YAML library)."""
    items: list[dict[str, Any]] = []
    inside = False
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            inside = line.split(":", 1)[0].strip() == key
            continue
        item = line.strip()
        if inside and item.startswith("- {"):
            items.append(json.loads(item[2:]))
    return items


def spec_line(spec: dict[str, Any]) -> str:
    """One test as eval.py's test file has it: `batch: 20; n: 32; cond: 1; seed: 53124`."""
    return "; ".join(f"{k}: {v}" for k, v in spec.items())


def stage(problem: Path, submission: Path, where: Path, picked: list[int] | None = None) -> dict[str, Any]:
    """The problem's files as its task.yml lists them (eval.py, reference.py, task.py, utils.py from its source),
    the submission as submission.py, and a test file per list (of the benchmarks, those `picked` by position where
    it says); returns task.yml's other settings read."""
    task = (problem / "task.yml").read_text()
    for entry in yaml_list(task, "files"):
        source = submission if entry["source"] == "@SUBMISSION@" else problem / entry["source"]
        shutil.copyfile(source, where / entry["name"])
    for key in ("tests", "benchmarks"):
        specs = yaml_list(task, key)
        if key == "benchmarks" and picked is not None:
            missing = [i for i in picked if not 0 <= i < len(specs)]
            if missing:
                raise ValueError(f"no benchmark {missing[0]} (it lists {len(specs)}, from 0)")
            specs = [specs[i] for i in picked]
        (where / f"{key}.txt").write_text("\n".join(spec_line(s) for s in specs) + "\n")
    timeouts = {}
    for line in task.splitlines():
        name, _, value = line.partition(":")
        if name in TIMEOUT_KEYS.values() and value.strip().isdigit():
            timeouts[name] = int(value)
    return timeouts


def run_mode(where: Path, mode: str, timeout: float, env: dict[str, str], log: Path) -> dict[str, Any]:
    """eval.py in `mode`: its POPCORN_FD lines as a dict, its exit code and the seconds it took; past `timeout`
    (task.yml's for the mode) its process group is killed, rc -9."""
    tests = where / ("tests.txt" if mode == "test" else "benchmarks.txt")
    read, write = os.pipe()
    began = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "eval.py", mode, str(tests)], cwd=where, pass_fds=(write,),
                                env={**env, "POPCORN_FD": str(write)}, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    os.close(write)
    chunks = []
    while (left := began + timeout - time.monotonic()) > 0:
        if select.select([read], [], [], left)[0]:
            chunk = os.read(read, 65536)
            if not chunk:  # eval.py closed it, or is gone
                break
            chunks.append(chunk)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
    os.close(read)
    try:
        rc = proc.wait(timeout=max(1.0, began + timeout - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        rc = proc.wait()
    text = b"".join(chunks).decode(errors="replace")
    fields = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    return {"mode": mode, "rc": rc, "wall_s": round(time.monotonic() - began, 1), "fields": fields}


def benchmarks(fields: dict[str, str]) -> list[dict[str, Any]]:
    """Each benchmark's spec, mean and error (eval.py reports nanoseconds a call), or its error."""
    rows = []
    for i in range(int(fields.get("benchmark-count", 0))):
        row: dict[str, Any] = {"spec": fields.get(f"benchmark.{i}.spec", "?")}
        if f"benchmark.{i}.mean" in fields:
            row.update(mean_ms=float(fields[f"benchmark.{i}.mean"]) / 1e6,
                       err_ms=float(fields[f"benchmark.{i}.err"]) / 1e6, runs=int(fields[f"benchmark.{i}.runs"]))
        else:
            row["error"] = fields.get(f"benchmark.{i}.error", "no result")
        rows.append(row)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| benchmark | mean | error | runs |", "|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['spec']} | {r['mean_ms']:.3f} ms | {r['err_ms']:.4f} | {r['runs']} |" if "mean_ms" in r
                     else f"| {r['spec']} | failed: {r['error'][:80]} | | |")
    means = [r["mean_ms"] for r in rows if "mean_ms" in r]
    if means and len(means) == len(rows):
        lines.append(f"| geomean | **{math.exp(sum(map(math.log, means)) / len(means)):.3f} ms** | | |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--problem", type=Path, required=True, help="the contest's problem directory (task.yml)")
    parser.add_argument("--submission", type=Path, required=True, help="the file to send (evolve export's)")
    parser.add_argument("--modes", nargs="+", default=["test", "benchmark"], choices=sorted(TIMEOUT_KEYS))
    parser.add_argument("--warm", action="store_true", help="keep torch's usual extension cache (a built file)")
    parser.add_argument("--out", type=Path, default=Path("bench/out"))
    parser.add_argument("--benchmarks", type=int, nargs="+", metavar="I", help="only these of task.yml's benchmarks")
    args = parser.parse_args()
    for path in (args.problem / "task.yml", args.problem / "eval.py", args.submission):
        if not path.is_file():
            print(f"gpumode_eval: {path}: no such file", file=sys.stderr)
            return 2
    args.out.mkdir(parents=True, exist_ok=True)
    ok = True
    with tempfile.TemporaryDirectory(prefix="gpumode-") as tmp:
        where = Path(tmp)
        try:
            timeouts = stage(args.problem.resolve(), args.submission.resolve(), where, args.benchmarks)
        except (OSError, KeyError, ValueError) as exc:  # a file task.yml lists is missing, a malformed entry
            print(f"gpumode_eval: {args.problem / 'task.yml'}: cannot stage the problem: {exc}", file=sys.stderr)
            return 2
        env = dict(os.environ)
        if not args.warm:
            env["TORCH_EXTENSIONS_DIR"] = str(where / "torch_extensions")
        for mode in args.modes:
            result = run_mode(where, mode, timeouts.get(TIMEOUT_KEYS[mode], 900), env, args.out / f"eval_{mode}.log")
            passed = result["fields"].get("check") == "pass" and result["rc"] == 0
            ok &= passed
            summary = {k: v for k, v in result.items() if k != "fields"}
            if mode == "test":
                statuses = [v for k, v in result["fields"].items() if k.endswith(".status")]
                summary["tests"] = f"{statuses.count('pass')} of {result['fields'].get('test-count', '?')} passed"
            else:
                summary["benchmarks"] = benchmarks(result["fields"])
            print(json.dumps({**summary, "check": result["fields"].get("check", "none")}), flush=True)
            if mode != "test":
                print(table(summary["benchmarks"]), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
