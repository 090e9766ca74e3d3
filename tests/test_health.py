"""A GPU that fails every evaluation with a device error is taken out of rotation; the candidates it failed
are judged on the other GPU, so none is blamed. On the CPU: a fake `nvidia-smi` shows two GPUs, and the
evaluator fails the way a broken device does whenever it is given GPU 1."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evolver.evaluation.health import RETIRE_AFTER, Health, device_error
from evolver.records.store import Store
from tests.conftest import evolve, example_config, git, make_repo

BROKEN = '''import json, os, runpy, sys
if os.environ.get("CUDA_VISIBLE_DEVICES") == "1":
    print(json.dumps({"status": "crash", "error": "CUDA error: unspecified launch failure (the context is lost)"}))
    sys.exit(0)
sys.argv = ["check.py", *sys.argv[1:]]
runpy.run_path("check.py", run_name="__main__")
'''


def test_a_crash_elsewhere_too_is_the_kernels_and_the_strike_is_taken_back() -> None:
    health = Health(2)
    crash = {"status": "crash", "error": "CUDA error: an illegal memory access was encountered"}
    assert device_error(crash) and not device_error({"status": "crash", "error": "NameError: x"})
    assert health.judge_elsewhere(1, crash, None)  # first: another slot's opinion
    assert not health.judge_elsewhere(0, crash, 1) and health.strikes[1] == 0  # crashed there too: the kernel
    for _ in range(RETIRE_AFTER):
        assert health.judge_elsewhere(1, crash, None) and not health.judge_elsewhere(0, {"status": "ok"}, 1)
    assert health.retire(1, crash) and health.in_service == 1
    assert not health.judge_elsewhere(0, crash, None)  # the last slot in service: recorded as it is


BUSY = '''import hashlib, json, pathlib, runpy, sys
kernel = pathlib.Path(sys.argv[sys.argv.index("--kernel-dir") + 1])
tree = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(kernel.rglob("*.py")))).hexdigest()[:16]
tally = pathlib.Path(TALLY) / tree
times = int(tally.read_text()) + 1 if tally.exists() else 1
tally.write_text(str(times))
if times == 1 or (ALWAYS and tree != SEED):  # the host too busy to check the clock, as the QR judge says it
    print(json.dumps({"status": "crash", "error": "benchmark 1: the host was too busy to tell", "retry": "host busy"}))
    sys.exit(0)
sys.argv = ["check.py", *sys.argv[1:]]
runpy.run_path("check.py", run_name="__main__")
'''


@pytest.mark.slow
@pytest.mark.parametrize("always", [False, True])
def test_a_crash_that_asks_for_it_is_judged_once_more(tmp_path: Path, always: bool) -> None:
    """An evaluator's `"retry": "why"` on a crash (the QR judge's when the host was too busy to check its clock):
    the candidate is judged again, once; a second such crash is recorded as it is."""
    import hashlib

    from tests.conftest import EXAMPLE

    tally = tmp_path / "tally"
    tally.mkdir()
    seed = hashlib.sha256(b"".join(p.read_bytes() for p in sorted((EXAMPLE / "seeds" / "mergesort").rglob("*.py"))))
    script = f"TALLY, ALWAYS, SEED = {str(tally)!r}, {always}, {seed.hexdigest()[:16]!r}\n" + BUSY
    sort, env = on_fake_gpus(tmp_path, 1, "busy.py", script, '"check.py", "busy.py"')
    started = evolve(sort, "start", "--max-candidates", "4", env=env)
    assert started.returncode == 0, started.stdout + started.stderr
    assert "host busy; judging it again" in started.stdout
    candidates = list(Store(sort.parent.parent).snapshot("r1").candidates.values())
    assert len(candidates) == 4 and all(len(c.results) == 1 for c in candidates), [c.results for c in candidates]
    assert all(int(t.read_text()) == 2 for t in tally.iterdir()), {t.name: t.read_text() for t in tally.iterdir()}
    statuses = sorted(c.status for c in candidates)
    assert statuses == (["crash"] * 3 + ["ok"] if always else ["ok"] * 4), statuses


def on_fake_gpus(tmp_path: Path, gpus: int, name: str, evaluator: str, files: str, seed: int = 1) -> tuple[Path, dict[str, str]]:
    """The CPU example judged by `evaluator` (examples/sort/NAME, committed) on a machine whose fake nvidia-smi
    shows `gpus` GPUs; (the example's directory, the environment to run evolve in)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\n" + "".join(f"echo '{i}, Fake GPU, 999.1'\n" for i in range(gpus)))
    (bin_dir / "nvidia-smi").chmod(0o755)
    config = example_config(evaluation=f'command = "{{python}} {name} --kernel-dir {{kernel_dir}} --mode {{mode}}"\n'
                            f'files = [{files}]\ngpus = "auto"\ntimeout_s = 60\nsandbox = "off"',
                            evolution=f"operators = {{ tune = 1.0 }}\nseed = {seed}")
    repo = make_repo(tmp_path / "repo", config)
    (repo / "examples" / "sort" / name).write_text(evaluator)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"the evaluator {name}")
    return repo / "examples" / "sort", {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


@pytest.mark.slow
def test_a_failing_gpu_leaves_the_rotation_and_no_candidate_is_blamed(tmp_path: Path) -> None:
    sort, env = on_fake_gpus(tmp_path, 2, "broken_gpu.py", BROKEN, '"check.py", "broken_gpu.py"', seed=2)
    started = evolve(sort, "start", "--max-candidates", "12", env=env)
    assert started.returncode == 0, started.stdout + started.stderr
    assert "GPU 1 (Fake GPU / driver 999.1) is out of rotation after 3 device errors" in started.stdout
    candidates = Store(sort.parent.parent).snapshot("r1").candidates.values()
    assert len(candidates) == 12 and all(c.status == "ok" for c in candidates), [c.status for c in candidates]
    assert all(r.gpu.startswith("Fake GPU") and "CUDA_VISIBLE" not in str(r.line) for c in candidates for r in c.results)
    status = json.loads(evolve(sort, "status", "--json", env=env).stdout)
    assert [g["gpu"] for g in status["out_of_rotation"]] == [1]
    assert "GPU 1 (Fake GPU / driver 999.1) out of rotation: CUDA error" in evolve(sort, "status", env=env).stdout


def test_on_the_last_device_only_a_gone_device_counts_towards_a_stop() -> None:
    health = Health(1)
    gone = {"status": "crash", "error": "no CUDA device is visible to the harness"}
    kernel_bug = {"status": "crash", "error": "CUDA error: an illegal memory access was encountered"}
    assert not health.device_gone(0, kernel_bug)  # one device, no second opinion: a kernel's bug is recorded
    assert health.device_gone(0, gone) and health.device_gone(0, gone) and not health.exhausted(0)
    assert health.device_gone(0, gone) and health.exhausted(0)


@pytest.mark.slow
def test_a_run_whose_only_gpu_is_gone_stops_with_nothing_blamed(tmp_path: Path) -> None:
    gone = 'import json\nprint(json.dumps({"status": "crash", "error": "no CUDA device is visible to the harness"}))\n'
    sort, env = on_fake_gpus(tmp_path, 1, "gone.py", gone, '"gone.py"')
    started = evolve(sort, "start", "--max-candidates", "6", env=env)
    assert started.returncode == 1, started.stdout + started.stderr
    assert "no device left to judge on: GPU 0 failed 3 times in a row (no CUDA device" in started.stdout
    assert all(c.result is None for c in Store(sort.parent.parent).snapshot("r1").candidates.values())  # nobody blamed
