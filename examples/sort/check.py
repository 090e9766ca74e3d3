"""Evaluator of the CPU example: checks a candidate's `sort_list`, times it, prints one JSON line.

    python check.py --kernel-dir DIR [--mode quick|full|final] [--seed S] [--repeats N] [--wait-for-go]

Status: ok (score = mean microseconds per list, lower is better), incorrect, rejected (forbidden calls),
compile_error (the module does not import), crash. Progress goes to stderr; the JSON line is last on stdout.
"""

import argparse
import ast
import importlib.util
import json
import os
import random
import statistics
import sys
import time

FORBIDDEN = {"sorted", "sort", "heapq", "nsmallest", "nlargest", "bisect", "insort"}
SIZE = 1500  # elements per timed list
LISTS = 6  # distinct inputs per repetition (fresh data, so nothing can be cached)
REPEATS = 3


def emit(**result):
    print(json.dumps(result), flush=True)
    return 0


def forbidden_names(source):
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id in FORBIDDEN:
            found.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN:
            found.add(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + ([node.module] if getattr(node, "module", None) else [])
            found.update(n for n in names if n.split(".")[0] in FORBIDDEN)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in FORBIDDEN:
            found.add(node.value)  # getattr(list, "sort") and friends
    return found


def cases(rng):
    yield []
    yield [1]
    yield [2, 1]
    yield [5] * 50
    yield list(range(300))
    yield list(range(300, 0, -1))
    yield [rng.randint(-5, 5) for _ in range(777)]
    yield [rng.random() for _ in range(1001)]
    yield [(rng.randint(0, 9), i) for i in range(500)]  # stability is visible through the pairs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernel-dir", required=True)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None, help="timed repetitions (more: steadier, slower)")
    parser.add_argument("--mode", choices=("quick", "full", "final"), default="full",
                        help="quick: 2 timed repetitions, full: 3, final: 10 (unless --repeats says)")
    parser.add_argument("--wait-for-go", action="store_true",
                        help="evaluation.prestart: start now, read the kernel once a line arrives on stdin")
    args = parser.parse_args()
    if args.wait_for_go and not sys.stdin.readline():
        return emit(status="crash", error="prestarted, but no go line came on stdin")
    path = os.path.join(args.kernel_dir, "sort.py")
    try:
        source = open(path, encoding="utf-8").read()
        bad = forbidden_names(source)
    except (OSError, SyntaxError, ValueError) as exc:
        return emit(status="compile_error", error=f"sort.py: {type(exc).__name__}: {exc}")
    if bad:
        return emit(status="rejected", error=f"sort.py uses forbidden names: {', '.join(sorted(bad))}")
    spec = importlib.util.spec_from_file_location("candidate_sort", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        sort_list = module.sort_list
    except Exception as exc:  # the candidate's import failed: its problem, not ours
        return emit(status="compile_error", error=f"sort.py: {type(exc).__name__}: {exc}")
    repeats = args.repeats or {"quick": 2, "full": REPEATS, "final": 10}[args.mode]
    rng = random.Random(args.seed if args.seed is not None else int.from_bytes(os.urandom(8), "little"))
    for case in cases(rng):
        original = list(case)
        try:
            got = sort_list(case)
        except Exception as exc:
            return emit(status="crash", error=f"sort_list raised {type(exc).__name__}: {exc}", n=len(case))
        if case != original:
            return emit(status="incorrect", error="sort_list modified its input", n=len(case))
        want = list(original)
        want.sort(key=lambda v: v[0] if isinstance(v, tuple) else v)  # stable, by key, as the contract says
        if got != want:
            return emit(status="incorrect", error=f"wrong result for a list of {len(case)} items", n=len(case))
    times = []
    for _ in range(repeats):
        inputs = [[rng.randint(0, 10**6) for _ in range(SIZE)] for _ in range(LISTS)]
        start = time.perf_counter()
        outputs = [sort_list(data) for data in inputs]
        times.append((time.perf_counter() - start) / LISTS * 1e6)
        for data, out in zip(inputs, outputs):  # recheck the timed outputs too
            if out != sorted(data):
                return emit(status="incorrect", error="a timed call returned a wrong result")
    print(f"mean {statistics.mean(times):.1f} us per list of {SIZE}", file=sys.stderr)
    return emit(status="ok", score=round(statistics.mean(times), 2), unit="us",
                per_repeat_us=[round(t, 1) for t in times], size=SIZE, prestarted=args.wait_for_go)


if __name__ == "__main__":
    sys.exit(main())
