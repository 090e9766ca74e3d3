"""Evaluations sharing one GPU (qrjudge/gpulock.py): untimed work side by side, each timed region alone. Three CPU
judges (`--device cpu --mode tiny`, the same judge and runners as on a GPU) run at once under one lock directory;
no timed region of one may overlap anything of another (its untimed work, its timed region, or a moment when its
candidate's code existed), and each candidate's code exists only while its judge holds the lock. The lock's own
rules (readers together, a writer alone and ahead of later readers) and its invisibility to confined processes
are tested directly."""

from __future__ import annotations

import json
import shutil
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from qrjudge.gpulock import GpuLock
from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(subprocess.run(["unshare", "-Ur", "true"], capture_output=True).returncode != 0,
                                reason="needs user namespaces (the runner confines itself)")


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def unbroken(held: list[list]) -> list[tuple[float, float]]:
    """The judge's holds of the lock joined where one began as the other ended (exclusive, relaxed, exclusive)."""
    spans: list[tuple[float, float]] = []
    for _, began, ended in sorted(held, key=lambda h: h[1]):
        if spans and began == spans[-1][1]:
            spans[-1] = (spans[-1][0], ended)
        else:
            spans.append((began, ended))
    return spans


def test_no_timed_call_runs_while_another_candidates_work_is_on_the_gpu(tmp_path: Path) -> None:
    locks = tmp_path / "locks"
    locks.mkdir()
    env = {**os.environ, "EVOLVE_GPU_LOCKS": str(locks), "CUDA_VISIBLE_DEVICES": "0"}
    procs = [subprocess.Popen([sys.executable, "-m", "qrjudge", "--kernel-dir", str(ROOT / "tests" / "cpu_kernel"),
                               "--device", "cpu", "--mode", "tiny"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) for _ in range(3)]
    results = [json.loads(p.communicate(timeout=600)[0].strip().splitlines()[-1]) for p in procs]
    assert all(r["status"] == "ok" for r in results), [r.get("error") for r in results]
    runs = [r["gpu_lock"] for r in results]
    assert all(isinstance(run["wall"], float) for run in runs)  # the spans' clock to the wall clock (run_stages --busy)
    assert all([h[0] for h in run["held"]] == ["shared", "exclusive", "relaxed", "exclusive", "shared"]
               for run in runs)
    for i, mine in enumerate(runs):
        for alive in mine["alive"]:  # candidate code only inside its judge's lock (held without a break)
            assert any(h[0] <= alive[0] and alive[1] <= h[1] for h in unbroken(mine["held"])), (alive, mine["held"])
        timed = [h[1:] for h in mine["held"] if h[0] == "exclusive"]
        for j, theirs in enumerate(runs):
            if i != j:
                busy = [h[1:] for h in theirs["held"]] + theirs["alive"]
                assert not any(overlap(t, b) for t in timed for b in busy), (i, j, timed, busy)
    shared = [[h[1:] for h in run["held"] if h[0] == "shared"][0] for run in runs]
    assert any(overlap(a, b) for a in shared for b in shared if a is not b)  # the untimed work did share


def test_a_lone_evaluation_holds_the_gpu_for_its_whole_length_beside_sharing_ones(tmp_path: Path) -> None:
    """`per_gpu = 1` (EVOLVE_GPU_ALONE): the judge holds the lock exclusively from its CUDA contexts until its one
    runner is gone, so nothing of two sharing judges started with it (as `evolve try` beside a run, or another
    run, would be) overlaps any moment of it, and its candidate's code exists only inside that hold."""
    locks = tmp_path / "locks"
    locks.mkdir()
    env = {**os.environ, "EVOLVE_GPU_LOCKS": str(locks), "CUDA_VISIBLE_DEVICES": "0"}
    argv = [sys.executable, "-m", "qrjudge", "--kernel-dir", str(ROOT / "tests" / "cpu_kernel"), "--device", "cpu",
            "--mode", "tiny"]
    procs = [subprocess.Popen(argv, cwd=ROOT, env={**env, **({"EVOLVE_GPU_ALONE": "1"} if i == 1 else {})},
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) for i in range(3)]
    results = [json.loads(p.communicate(timeout=600)[0].strip().splitlines()[-1]) for p in procs]
    assert all(r["status"] == "ok" for r in results), [r.get("error") for r in results]
    alone = results[1]["gpu_lock"]
    assert [h[0] for h in alone["held"]] == ["exclusive"] and "lock_wait_s" in results[1]["timings"]
    hold = alone["held"][0][1:]
    assert all(hold[0] <= a[0] and a[1] <= hold[1] for a in alone["alive"]) and alone["alive"]
    for other in (results[0]["gpu_lock"], results[2]["gpu_lock"]):
        busy = [h[1:] for h in other["held"]] + other["alive"]
        assert not any(overlap(hold, b) for b in busy), (hold, busy)


def test_a_judge_waiting_for_the_lock_is_not_a_stalled_one(tmp_path: Path) -> None:
    """An evaluation held behind others for longer than the supervisor's stall limit says that it waits (a line
    every LOCK_BEAT_S) and is judged, not killed as a hung kernel; its wait is in lock_wait_s."""
    from qrjudge.sharing import LOCK_BEAT_S

    locks = tmp_path / "locks"
    locks.mkdir()
    env = {**os.environ, "EVOLVE_GPU_LOCKS": str(locks), "CUDA_VISIBLE_DEVICES": "0"}
    # The stall limit leaves the judge's start-up (torch imported, the runners started: seconds on a loaded 2-core
    # machine) and one beat before its first line; the lock is held past it, so without the beats it is killed.
    stall_s = 4 * LOCK_BEAT_S
    held_s = stall_s + 2 * LOCK_BEAT_S
    with GpuLock(str(locks), "0").exclusive():  # another evaluation, timed meanwhile
        proc = subprocess.Popen([sys.executable, "-m", "qrjudge", "--kernel-dir", str(ROOT / "tests" / "cpu_kernel"),
                                 "--device", "cpu", "--mode", "tiny", "--stall", str(stall_s)], cwd=ROOT,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(held_s)
    out, err = proc.communicate(timeout=600)
    result = json.loads(out.strip().splitlines()[-1])
    assert result["status"] == "ok", result.get("error")
    assert result["timings"]["lock_wait_s"] > 2 * LOCK_BEAT_S, result["timings"]  # (less its start-up)
    assert "lock: waiting for the GPU (still running after" in err, err[-2000:]


def test_readers_share_a_writer_is_alone_and_ahead_of_later_readers(tmp_path: Path) -> None:
    order: list[str] = []
    entered = threading.Event()

    def reader(name: str, hold: float) -> None:
        with GpuLock(str(tmp_path), "0").shared():
            order.append(f"{name} in")
            entered.set()
            time.sleep(hold)
            order.append(f"{name} out")

    def writer() -> None:
        with GpuLock(str(tmp_path), "0").exclusive():
            order.append("writer in")
            time.sleep(0.1)
            order.append("writer out")

    a = threading.Thread(target=reader, args=("a", 0.5))
    a.start()
    entered.wait()
    w = threading.Thread(target=writer)
    w.start()
    time.sleep(0.1)  # the writer waits for a, holding the gate
    b = threading.Thread(target=reader, args=("b", 0.0))
    b.start()
    for t in (a, w, b):
        t.join(timeout=10)
    assert order == ["a in", "a out", "writer in", "writer out", "b in", "b out"], order


def test_a_relaxed_writer_lets_readers_in_and_no_other_writer(tmp_path: Path) -> None:
    """The timed runner's warm-ups (qrjudge/timed.py, `warm_up`): relaxed, a writer admits readers but no other
    writer until it is done; taking its exclusive hold back waits for the readers that came in meanwhile."""
    order: list[str] = []
    relaxed, reader_in = threading.Event(), threading.Event()

    def first() -> None:
        with GpuLock(str(tmp_path), "0").exclusive() as held:
            held.relax()
            order.append("first relaxed")
            relaxed.set()
            reader_in.wait(timeout=10)
            held.tighten()
            order.append("first exclusive again")
            time.sleep(0.2)
            order.append("first out")

    def reader() -> None:
        relaxed.wait(timeout=10)
        with GpuLock(str(tmp_path), "0").shared():
            order.append("reader in")
            reader_in.set()
            time.sleep(0.3)
            order.append("reader out")

    def second() -> None:
        relaxed.wait(timeout=10)
        time.sleep(0.1)
        with GpuLock(str(tmp_path), "0").exclusive():
            order.append("second in")

    threads = [threading.Thread(target=f) for f in (first, reader, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert order == ["first relaxed", "reader in", "reader out", "first exclusive again", "first out", "second in"], order


def test_a_confined_process_cannot_see_the_locks(tmp_path: Path) -> None:
    locks, scratch = tmp_path / "locks", tmp_path / "scratch"
    locks.mkdir()
    scratch.mkdir()
    (locks / "gpu-0.rw").write_text("")
    probe = r"""
import os, sys
from qrjudge import isolation
isolation.confine([sys.argv[1]], hidden=isolation.judges_only())
print(sorted(os.listdir(sys.argv[2])))
try:
    open(os.path.join(sys.argv[2], "gpu-0.rw"), "w")
    print("opened")
except OSError as exc:
    print("refused", exc.errno)
"""
    out = subprocess.run([sys.executable, "-c", probe, str(scratch), str(locks)], capture_output=True, text=True,
                         timeout=60, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "EVOLVE_GPU_LOCKS": str(locks)})
    assert out.stdout.splitlines()[:1] == ["[]"] and out.stdout.splitlines()[1].startswith("refused"), out


def test_per_gpu_makes_that_many_slots_a_gpu_and_their_judges_share_its_lock(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from evolver.evaluation import evaluate
    from evolver.evaluation.command import contain
    from evolver.records.config import ConfigError, load_config

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(evaluate, "detect_gpus", lambda: [(0, "H200 / driver 580"), (1, "H200 / driver 580")])
    text = (ROOT / "evolve.toml").read_text()
    assert "\nper_gpu = 2 " in text  # the shipped config shares each GPU between two evaluations
    (tmp_path / "evolve.toml").write_text(text)
    for seed in ("seed_kernels/tsqr_wy", "seed_kernels/GUIDANCE.md"):  # what the config names must exist
        (tmp_path / seed).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (ROOT / seed).is_dir() else shutil.copy)(ROOT / seed, tmp_path / seed)
    config = load_config(tmp_path / "evolve.toml", tmp_path)
    slots = evaluate.make_slots(config)
    assert sorted(s.gpu for s in slots) == [0, 0, 1, 1]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    _, env = contain(["true"], scratch, scratch, 0, False, config.evaluation, [], "t-")
    assert env["EVOLVE_GPU_LOCKS"] == str((tmp_path / "cache" / "evolve" / "gpu-locks").resolve())
    assert "EVOLVE_GPU_ALONE" not in env
    (tmp_path / "evolve.toml").write_text(text.replace("per_gpu = 2", "per_gpu = 1"))
    alone = load_config(tmp_path / "evolve.toml", tmp_path)
    _, env = contain(["true"], scratch, scratch, 0, False, alone.evaluation, [], "t-")  # one a GPU: the lock
    assert env["EVOLVE_GPU_LOCKS"] == str((tmp_path / "cache" / "evolve" / "gpu-locks").resolve())  # still, held
    assert env["EVOLVE_GPU_ALONE"] == "1"  # for the whole evaluation: `evolve try` beside a run takes turns too
    (tmp_path / "evolve.toml").write_text(text.replace("per_gpu = 2", "per_gpu = 9"))
    with pytest.raises(ConfigError, match="per_gpu"):
        load_config(tmp_path / "evolve.toml", tmp_path)
