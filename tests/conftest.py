"""Shared fixtures: a sealed git environment and throwaway repositories holding the CPU example."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evolver.records.candidates import format_message
from evolver.records.store import Store

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "sort"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True)
def sealed_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user or system git config leaks in; commit dates are fixed so hashes are stable. Evaluations run in
    the sandbox wherever the machine can build one."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    from evolver.evaluation import sandbox

    if sandbox.unavailable() is not None:  # a machine without user namespaces: the tests that need the
        monkeypatch.setenv("EVOLVE_SANDBOX", "off")  # sandbox skip themselves, the rest run without it
    for var, value in {"GIT_AUTHOR_NAME": "Tester", "GIT_AUTHOR_EMAIL": "tester@example.com",
                       "GIT_COMMITTER_NAME": "Tester", "GIT_COMMITTER_EMAIL": "tester@example.com",
                       "GIT_AUTHOR_DATE": "2026-11-30T12:00:00Z", "GIT_COMMITTER_DATE": "2026-11-30T12:00:00Z"}.items():
        monkeypatch.setenv(var, value)


def git(repo: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, input=input).stdout


def make_repo(path: Path, config_text: str | None = None, seed: bool = True) -> Path:
    """A git repository with the CPU example under examples/sort, committed."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    target = path / "examples" / "sort"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("__pycache__", "kernel"))
    if config_text is not None:
        (target / "evolve.toml").write_text(config_text)
    (path / "README.md").write_text("user's project\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def evolve(cwd: Path, *args: str, timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess, as a user would."""
    return subprocess.run([sys.executable, "-m", "evolver", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def supervised(argv: list[str], cwd: Path, env: dict[str, str], timeout: float, attempts: int = 2) -> tuple[dict, str]:
    """`python -m qrjudge.supervisor ARGV`: its one result line and its stderr. A crash that asks to be judged once
    more (`retry`: the host too busy to check the judge's clock, as parallel test workers make it) is judged again,
    as the engine does (evolver/evaluation/health.py, `judge_again`), up to `attempts` times in all; the last stands."""
    import json
    import warnings

    from evolver.evaluation.health import judge_again

    for attempt in range(attempts):
        proc = subprocess.run([sys.executable, "-m", "qrjudge.supervisor", *argv], capture_output=True, text=True,
                              timeout=timeout, cwd=cwd, env={**os.environ, **env})
        lines = proc.stdout.strip().splitlines()
        assert len(lines) == 1, f"expected exactly one stdout line, got {proc.stdout!r} ({proc.stderr[-2000:]})"
        result = json.loads(lines[0])
        why = judge_again({"status": result.get("status"), "details": result})  # (the engine's result: details)
        if why is None:
            break
        if attempt + 1 < attempts:
            warnings.warn(f"{argv}: judged once more ({why}): {result.get('error')}", stacklevel=2)
    return result, proc.stderr


def example_config(**overrides: str) -> str:
    """The example's evolve.toml with whole sections replaced, e.g. llm='base_url = ...'."""
    text = (EXAMPLE / "evolve.toml").read_text()
    sections: dict[str, list[str]] = {}
    order: list[str] = []
    current = ""
    for line in text.splitlines():
        if line.startswith("["):
            current = line.strip("[] ")
            order.append(current)
            sections[current] = []
        elif current:
            sections[current].append(line)
    out = []
    for name in order + [n for n in overrides if n not in order]:
        out.append(f"[{name}]")
        out.append(overrides[name] if name in overrides else "\n".join(sections[name]))
    return "\n".join(out) + "\n"


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run on the GPU machine: bench/gpu_pass.sh)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


# A deterministic evaluator for tests whose verdict depends on which candidate is better: the score is the
# number of comparisons sort_list makes on a fixed list, not a time (timing a CPU sort on a shared 2-core
# machine varies by 20% between evaluations, enough to change what a search does).
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
COUNTING = ('command = "{python} count.py --kernel-dir {kernel_dir}"\nfiles = ["count.py"]\ngpus = []\n'
            "slots = 1\ntimeout_s = 60")


def fake_llm(url: str, **keys: object) -> str:
    """An [llm] section for the scripted server at `url` (tests/fake_llm.py), one model, no key, one request at
    a time and a small context unless `keys` say otherwise."""
    values = {"max_concurrent": 1, "max_tokens": 500, "context_tokens": 6000, **keys}
    return f'base_url = "{url}"\nmodel = "fake-coder"\napi_key_env = ""\n' + "".join(
        f"{k} = {v}\n" for k, v in values.items())


def counting_repo(path: Path, config_text: str) -> Path:
    """`make_repo` with the deterministic evaluator committed beside the example (use `COUNTING`)."""
    repo = make_repo(path, config_text)
    (repo / "examples" / "sort" / "count.py").write_text(COUNTING_EVALUATOR)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "deterministic evaluator")
    return repo


# --- a run written by hand ---------------------------------------------------------------------------------

CLOCK = 1764504000.0  # 2026-11-30 12:00:00 UTC: the commit dates the sealed environment fixes
KERNEL = "examples/sort/kernel"


class Scripted:
    """A run written through the store as the engine would, with results chosen by the test."""

    def __init__(self, repo: Path, run: str = "r1") -> None:
        self.store = Store(repo)
        self.run = run
        self.base = self.store.head_commit()
        self.commits: dict[str, str] = {}
        from evolver.records.candidates import now
        from evolver.records.runs import clone_id

        self.store.set_meta(f"refs/evolve/runs/{run}", {"run": run, "base": self.base, "kernel_dir": KERNEL,
                                                         "created": now(), "clone": clone_id(self.store)})

    def add(self, cid: str, op: str, parent: str | None, text: str, result: dict | None, **trailers: str) -> str:
        parent_commit = self.commits[parent] if parent else self.base
        full = {"Id": cid, "Run": self.run, "Op": op, "Island": "0", **trailers}
        if parent:
            full["Parent"] = parent
        commit = self.store.write_candidate([parent_commit], parent_commit, KERNEL, {"sort.py": text.encode()},
                                            format_message(f"evolve {self.run}/{cid}: {op}", "why not", full))
        self.store.create_branch(f"refs/heads/evolve/{self.run}/{cid}", commit)
        if result is not None:
            self.store.append_note(commit, {"t": CLOCK - 600 + int(cid) * 60, "harness": "h", "gpu": "g", **result})
        self.commits[cid] = commit
        return commit

    def best(self, cid: str) -> None:
        git(self.store.root, "update-ref", "refs/heads/best", self.commits[cid])


# --- the TUI under Textual's Pilot -------------------------------------------------------------------------

async def settle(pilot: Any, app: Any, refreshes: int = 1) -> None:
    """Let the TUI refresh from git `refreshes` times."""
    for _ in range(100):
        await pilot.pause(0.05)
        if app.refreshes >= refreshes and not app._refreshing:
            break
    await pilot.pause(0.1)


def shown(app: Any, selector: str | type) -> str:
    """The text a Static widget shows, whatever it was given (markup, Text or Syntax)."""
    from rich.syntax import Syntax
    from rich.text import Text

    content = app.query_one(selector).content  # type: ignore[attr-defined]
    if isinstance(content, Syntax):
        return content.code
    if isinstance(content, Text):
        return content.plain
    return Text.from_markup(str(content)).plain
