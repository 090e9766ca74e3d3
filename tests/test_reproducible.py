"""A run with a fixed seed, a scripted LLM and a deterministic evaluator is reproducible: the same
candidates, in the same order, with the same parents and the same code."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolver.store import Store
from tests.conftest import evolve, example_config, git, make_repo
from tests.fake_llm import FakeLLM

pytestmark = pytest.mark.slow

COUNTING_EVALUATOR = '''
import argparse, importlib.util, json, random, sys

class Counted:
    calls = 0
    def __init__(self, v): self.v = v
    def _c(self, other): Counted.calls += 1; return other.v if isinstance(other, Counted) else other
    def __lt__(self, o): return self.v < self._c(o)
    def __le__(self, o): return self.v <= self._c(o)
    def __gt__(self, o): return self.v > self._c(o)
    def __ge__(self, o): return self.v >= self._c(o)
    def __eq__(self, o): return self.v == self._c(o)

p = argparse.ArgumentParser(); p.add_argument("--kernel-dir"); a = p.parse_args()
spec = importlib.util.spec_from_file_location("k", a.kernel_dir + "/sort.py")
m = importlib.util.module_from_spec(spec)
try:
    spec.loader.exec_module(m)
except Exception as e:
    print(json.dumps({"status": "compile_error", "error": repr(e)})); sys.exit(0)
rng = random.Random(0)
data = [rng.randint(0, 999) for _ in range(400)]
out = m.sort_list([Counted(v) for v in data])
if [c.v for c in out] != sorted(data):
    print(json.dumps({"status": "incorrect", "error": "wrong order"})); sys.exit(0)
print(json.dumps({"status": "ok", "score": Counted.calls}))
'''


def run_once(tmp_path: Path, name: str) -> list[tuple[str, str, tuple[str, ...], str, str]]:
    with FakeLLM(["good", "break_build", "good", "malformed", "good", "noop", "noop", "noop", "good"] * 3) as llm:
        repo = make_repo(tmp_path / name, example_config(
            evaluation='command = "{python} count.py --kernel-dir {kernel_dir}"\nfiles = ["count.py"]\n'
                       "gpus = []\nslots = 1\ntimeout_s = 60",
            llm=f'base_url = "{llm.url}"\nmodel = "fake-coder"\napi_key_env = ""\nedit_retries = 1\n'
                "max_concurrent = 1\nmax_tokens = 500\ncontext_tokens = 6000",
            evolution="operators = { mutate = 1.0, tune = 1.0, fix = 0.5 }\nislands = 2\npopulation = 3\n"
                      "seed = 11\npipeline_depth = 1"))
        (repo / "examples/sort/count.py").write_text(COUNTING_EVALUATOR)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "deterministic evaluator")
        proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "16")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    snap = Store(repo).snapshot("r1")
    return [(c.id, c.op, c.parent_ids, c.kernel_tree, str((c.result or {}).get("score")))
            for c in sorted(snap.candidates.values(), key=lambda c: c.id)]


def test_same_seed_same_run(tmp_path: Path) -> None:
    first = run_once(tmp_path, "a")
    second = run_once(tmp_path, "b")
    assert len(first) == 16 and {op for _, op, *_ in first} >= {"seed", "tune", "mutate"}
    assert first == second
