"""Evaluator of the CPU example: checks a candidate's `sort_list`, times it, prints one JSON line.

    python check.py --kernel-dir DIR [--mode quick|full|final] [--seed S] [--repeats N] [--wait-for-go]

Status: ok (score = mean microseconds per list, lower is better), incorrect, rejected (forbidden calls),
compile_error (the module does not import), crash. Progress goes to stderr; the JSON line is last on stdout.

The candidate never runs in this process: a child (`check.py --runner`) imports it and sorts what it is sent
over a pipe, and this process checks every answer and times each batch with its own clock, from sending the
lists to receiving them sorted, less what the same lists cost to move there and back (measured before the
candidate is imported, while the child still runs only this file). Whatever the candidate prints or does in its process, it cannot write this
process's result line (this process is non-dumpable, so the child cannot reach its pipes through /proc).
"""

import argparse
import ast
import ctypes
import importlib.util
import json
import os
import random
import statistics
import subprocess
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
    yield [[rng.randint(0, 9), i] for i in range(500)]  # stability is visible through the pairs


def reference(values):
    want = list(values)
    want.sort(key=lambda v: v[0] if isinstance(v, list) else v)  # stable, by key, as the contract says
    return want


# --- the runner: the child that imports the candidate ------------------------------------------------------

def runner(kernel_dir):
    """Answer request lines: `echo` (lists back as they came, before the candidate is imported: the judge
    measures what the pipe costs), `load` (import sort.py), `sort` (sorted copies; with `inputs`, also each
    input as it is after the call, to see whether it was modified)."""
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the candidate's prints go to stderr, never into the replies
    sort_list = None
    for line in sys.stdin:
        request = json.loads(line)
        lists = request.get("lists", [])
        if request["op"] == "echo":
            reply = {"out": lists}
        elif request["op"] == "load":
            spec = importlib.util.spec_from_file_location("candidate_sort", os.path.join(kernel_dir, "sort.py"))
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
                sort_list = module.sort_list
                reply = {"ready": True}
            except Exception as exc:
                reply = {"error": "compile_error", "message": f"sort.py: {type(exc).__name__}: {exc}"}
        else:
            try:
                out = [sort_list(values) for values in lists]
                reply = {"out": out, "inputs": lists} if request.get("inputs") else {"out": out}
            except Exception as exc:
                reply = {"error": "crash", "message": f"sort_list raised {type(exc).__name__}: {exc}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return 0


class Candidate:
    """The runner process, seen from the judge."""

    def __init__(self, kernel_dir):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--runner", "--kernel-dir", kernel_dir],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, op, lists=(), **options):
        """The reply to one request, or a failure dict if the runner died or answered nonsense."""
        try:
            self.proc.stdin.write(json.dumps({"op": op, "lists": list(lists), **options}) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
            reply = json.loads(line) if line else None
        except (OSError, ValueError):
            reply = None
        if not isinstance(reply, dict) or not isinstance(reply.get("out", []), list):
            return {"error": "crash", "message": "the candidate's process died or sent a malformed reply"}
        return reply

    def timed(self, lists):
        """(reply, seconds from sending the lists to having them back)."""
        start = time.perf_counter()
        reply = self.ask("sort", lists)
        return reply, time.perf_counter() - start

    def pipe_cost(self, lists):
        """What moving `lists` there and back costs, measured before the candidate is imported."""
        costs = []
        for _ in range(7):
            start = time.perf_counter()
            self.ask("echo", lists)
            costs.append(time.perf_counter() - start)
        return min(costs)  # a fixed cost: the least noisy estimate is the fastest trip

    def close(self):
        self.proc.kill()
        self.proc.wait()


def judge(args):
    path = os.path.join(args.kernel_dir, "sort.py")
    try:
        with open(path, encoding="utf-8") as f:
            bad = forbidden_names(f.read())
    except (OSError, SyntaxError, ValueError) as exc:
        return emit(status="compile_error", error=f"sort.py: {type(exc).__name__}: {exc}")
    if bad:
        return emit(status="rejected", error=f"sort.py uses forbidden names: {', '.join(sorted(bad))}")
    candidate = Candidate(args.kernel_dir)
    try:
        return evaluate(args, candidate)
    finally:
        candidate.close()


def evaluate(args, candidate):
    rng = random.Random(args.seed if args.seed is not None else int.from_bytes(os.urandom(8), "little"))
    pipe_s = candidate.pipe_cost([[rng.randint(0, 10**6) for _ in range(SIZE)] for _ in range(LISTS)])
    ready = candidate.ask("load")
    if "error" in ready:
        return emit(status=ready["error"], error=ready.get("message", ""))
    repeats = args.repeats or {"quick": 2, "full": REPEATS, "final": 10}[args.mode]
    tests = list(cases(rng))
    reply = candidate.ask("sort", tests, inputs=True)
    if "error" in reply:
        return emit(status=reply["error"], error=reply.get("message", ""))
    if len(reply["out"]) != len(tests):
        return emit(status="incorrect", error="sort_list answered a different number of lists")
    for values, got, after in zip(tests, reply["out"], reply["inputs"]):
        if after != values:
            return emit(status="incorrect", error="sort_list modified its input", n=len(values))
        if got != reference(values):
            return emit(status="incorrect", error=f"wrong result for a list of {len(values)} items", n=len(values))
    times = []
    for _ in range(repeats):
        inputs = [[rng.randint(0, 10**6) for _ in range(SIZE)] for _ in range(LISTS)]
        reply, seconds = candidate.timed(inputs)
        times.append(max(seconds - pipe_s, 1e-6) / LISTS * 1e6)
        if "error" in reply:
            return emit(status=reply["error"], error=reply.get("message", ""))
        if reply["out"] != [reference(values) for values in inputs]:
            return emit(status="incorrect", error="a timed call returned a wrong result")
    print(f"mean {statistics.mean(times):.1f} us per list of {SIZE}", file=sys.stderr)
    return emit(status="ok", score=round(statistics.mean(times), 2), unit="us",
                per_repeat_us=[round(t, 1) for t in times], size=SIZE, prestarted=args.wait_for_go,
                pipe_us_per_list=round(pipe_s / LISTS * 1e6, 1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernel-dir", required=True)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None, help="timed repetitions (more: steadier, slower)")
    parser.add_argument("--mode", choices=("quick", "full", "final"), default="full",
                        help="quick: 2 timed repetitions, full: 3, final: 10 (unless --repeats says)")
    parser.add_argument("--wait-for-go", action="store_true",
                        help="evaluation.prestart: start now, read the kernel once a line arrives on stdin")
    parser.add_argument("--runner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.runner:
        return runner(args.kernel_dir)
    try:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: the runner cannot open our /proc entries
    except (OSError, AttributeError):
        pass
    if args.wait_for_go and not sys.stdin.readline():
        return emit(status="crash", error="prestarted, but no go line came on stdin")
    return judge(args)


if __name__ == "__main__":
    sys.exit(main())
