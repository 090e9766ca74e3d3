"""The QR judge end to end on the CPU (`--device cpu --mode tiny`): the same supervisor, judge and runner as
on a GPU, with shared files instead of CUDA IPC and the host clock instead of CUDA events. Every planted
cheat that does not need a GPU gets its expected status here, in CI; tests/test_harness_gpu.py runs them
all on a GPU."""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import pytest

from qrjudge.timing import SHORT_US

pytest.importorskip("torch")

from tests.conftest import ROOT, supervised  # noqa: E402

CHEATS = Path(__file__).parent / "cheats"
HONEST = Path(__file__).parent / "cpu_kernel" / "kernel.py"


def judge(kernel_dir: Path, *args: str, env: dict[str, str] | None = None, attempts: int = 2) -> dict:
    """The judge run as an evaluation lays it out: its own copy of the harness beside the kernel directory (a
    cheat that gets at the judge's files reaches that copy, never the checkout's); a crash that asks for it judged
    again (`supervised`: the 2-core machine with another test's judges beside this one's can be too busy to check
    the judge's clock), up to `attempts` times in all."""
    here = kernel_dir.parent
    if not (here / "qrjudge").exists():
        shutil.copytree(ROOT / "qrjudge", here / "qrjudge", ignore=shutil.ignore_patterns("__pycache__"))
    result, stderr = supervised(["--kernel-dir", str(kernel_dir), "--device", "cpu", "--mode", "tiny", "--stall", "30",
                                 *args], here, env or {}, 180, attempts)
    return {**result, "stderr": stderr}


def candidate(tmp_path: Path, kernel: Path) -> Path:
    d = tmp_path / kernel.stem
    d.mkdir()
    shutil.copy(HONEST, d / "base.py")
    shutil.copy(kernel, d / "kernel.py")
    return d


def cpu_expectation(path: Path) -> tuple[str, str] | None:
    for line in path.read_text().splitlines()[:3]:
        if line.startswith("# expect-cpu:"):
            status, pattern = line.removeprefix("# expect-cpu:").split("|", 1)
            return status.strip(), pattern.strip()
    return None


CPU_CHEATS = sorted(p.stem for p in CHEATS.glob("*.py") if cpu_expectation(p))


@pytest.mark.parametrize("prime_bytes,pin", [("0", ""), (str(1 << 20), "fastest")])
def test_the_honest_kernel_passes(tmp_path: Path, prime_bytes: str, pin: str) -> None:
    """With its timed calls primed (an untimed call before each, the input handed over through the host
    stage) and the runner pinned to a CPU, and with neither."""
    result = judge(candidate(tmp_path, HONEST), env={"EVOLVE_PRIME_BYTES": prime_bytes, "EVOLVE_RUNNER_PIN": pin})
    assert result["status"] == "ok", result.get("error")
    assert result["runner_isolation"].startswith("user, mount and PID namespaces, its own /proc; read-only")
    assert (result.get("runner_cpu") is None) == (pin == "")
    assert result["judge"] >= 2 and result["tests"]["passed"] == result["tests"]["total"] == 4
    assert all(s["checked"] == s["runs"] for s in result["shapes"])  # tiny mode checks every timed call
    assert all(s["primed"] == (prime_bytes != "0") for s in result["shapes"])
    assert result["catch_probability"] > 0.5
    timings = result["timings"]  # where the overhead goes
    for stage in ("after_verdict_s", "runner_setup_s", "cuda_start_s", "contexts_s"):
        assert 0 <= timings[stage] < timings["wall_s"], (stage, timings)
    assert timings["contexts_s"] <= timings["cuda_start_s"], timings  # (the CUDA contexts, within the start)
    setup = [timings[f"setup_{part}_s"] for part in ("arena", "timer", "guard")]  # its parts (no cuBLAS on a CPU)
    assert "setup_compiler_s" not in timings  # (torch's compiler: only for a candidate that names it)
    assert all(s >= 0 for s in setup) and sum(setup) <= timings["runner_setup_s"] + 0.002, timings
    # the benchmark's time: its inputs, the prime calls, the runner's until `done` (the timed calls within it) and
    # after it, the judge's own the rest
    assert timings["timed_kernel_s"] < timings["bench_runner_s"], timings
    parts = [timings[f"bench_{part}_s"] for part in ("inputs", "prime", "runner", "tail")]
    assert parts[0] > 0 and (parts[1] > 0) == (prime_bytes != "0") and parts[3] > 0, timings
    assert sum(parts) < timings["bench_s"], timings
    assert 0 < timings["bench_warmup_s"] < sum(parts), timings  # the warm-up calls, whole, across the parts
    for shape in result["shapes"]:  # a short shape timed again after the others, scored by its fastest round
        means = shape["round_means_us"]
        assert len(means) == (2 if means[0] < SHORT_US else 1) and shape["mean_us"] == min(means), shape
        assert shape["runs"] >= 3 * len(means)
    for shape in result["shapes"]:  # what the host did meanwhile (qrjudge/hostwatch.py), read from /proc
        host = shape["host"]
        assert host["steal_ms"] is not None and host["steal_ms"] >= 0 and host["runner_preempted"] >= 0, shape
        assert host["runner_cpu"] is not None and host["judge_loop_us"] > 0 and host["judge_cpu"] is not None
        if pin:
            assert host["runner_cpu"] == result["runner_cpu"]


@pytest.mark.parametrize("name", CPU_CHEATS)
def test_planted_cheat_on_the_cpu(tmp_path: Path, name: str) -> None:
    expected = cpu_expectation(CHEATS / f"{name}.py")
    assert expected is not None
    if "cpp_extension" in (CHEATS / f"{name}.py").read_text() and not (shutil.which("c++") and shutil.which("ninja")):
        pytest.skip("builds a torch extension: needs a C++ compiler and ninja")
    status, pattern = expected
    result = judge(candidate(tmp_path, CHEATS / f"{name}.py"))
    assert result["status"] == status, f"{name}: {result['status']}: {result.get('error')}"
    assert re.search(pattern, result.get("error") or ""), f"{name}: {result.get('error')!r} !~ {pattern!r}"
    assert (result["score"] is None) == (status != "ok")


@pytest.mark.parametrize("name", ["late_wrong", "skips_a_tenth", "first_matrix_only", "content_cache", "modify_input"])
def test_planted_cheat_on_a_shared_gpu(tmp_path: Path, name: str) -> None:
    """The same statuses where evaluations share the GPU (EVOLVE_GPU_LOCKS, `per_gpu` > 1): tested by one runner,
    timed by another, the timed calls checked after the timed region (qrjudge/sharing.py, evaluate_sharing)."""
    locks = tmp_path / "locks"
    locks.mkdir()
    status, pattern = cpu_expectation(CHEATS / f"{name}.py") or ("", "")
    result = judge(candidate(tmp_path, CHEATS / f"{name}.py"), env={"EVOLVE_GPU_LOCKS": str(locks)})
    assert result["status"] == status, f"{name}: {result['status']}: {result.get('error')}"
    assert re.search(pattern, result.get("error") or ""), f"{name}: {result.get('error')!r} !~ {pattern!r}"
    if status == "ok":
        assert [h[0] for h in result["gpu_lock"]["held"]] == ["shared", "exclusive", "relaxed", "exclusive", "shared"]
        assert result["timings"]["deferred_checks_s"] > 0  # the kept calls were checked after the timed region


def test_a_candidate_that_names_torchs_compiler_has_its_runners_import_it_first(tmp_path: Path) -> None:
    """Its runners import the compiler before their snapshots (the timed one's beside the tests where the GPU is
    shared), not every runner (4-6.5 s a process): judged as any other."""
    kernel = tmp_path / "compiled.py"
    kernel.write_text("import torch\nfrom base import custom_kernel as honest\n\n\n"
                      "@torch.compile(backend='eager')\ndef twice(x):\n    return x + x\n\n\n"
                      "def custom_kernel(A):\n    return honest(A)\n")
    alone = judge(candidate(tmp_path, kernel))
    assert alone["status"] == "ok" and alone["timings"]["setup_compiler_s"] > 0, alone.get("error")
    locks, elsewhere = tmp_path / "locks", tmp_path / "shared"
    locks.mkdir()
    elsewhere.mkdir()
    shared = judge(candidate(elsewhere, kernel), env={"EVOLVE_GPU_LOCKS": str(locks)})
    assert shared["status"] == "ok", shared.get("error")
    assert shared["timings"]["setup_compiler_s"] > 0 and shared["timings"]["timed_setup_compiler_s"] > 0, shared["timings"]


def test_on_a_shared_gpu_a_wrong_timed_call_is_still_the_verdict_before_a_later_failure(tmp_path: Path) -> None:
    """Alone, the kept calls of a shape are checked before the next shape is timed; on a shared GPU after the
    timed region. A kernel wrong on the first benchmark shape's calls that then crashes on the second is
    `incorrect` both ways, as tests/cheats/cache_by_shape.py is (it is rejected by a later shape's clock)."""
    locks = tmp_path / "locks"
    locks.mkdir()
    kernel = tmp_path / "wrong_then_crash.py"
    kernel.write_text("from base import custom_kernel as honest\n\n\ndef custom_kernel(A):\n"
                      "    if A.shape[0] == 6:  # the second benchmark shape (no test has a batch of 6)\n"
                      "        raise RuntimeError('crashed on purpose')\n"
                      "    h, tau = honest(A)\n"
                      "    return (h, tau * 0.5) if A.shape[0] == 4 else (h, tau)  # the first shape's answers wrong\n")
    for env in ({}, {"EVOLVE_GPU_LOCKS": str(locks)}):
        (tmp_path / str(len(env))).mkdir()
        result = judge(candidate(tmp_path / str(len(env)), kernel), env=env)
        assert result["status"] == "incorrect" and "timed call" in result["error"], (env, result.get("error"))


def test_a_first_call_refused_in_the_warm_ups_is_the_verdict_where_its_shape_comes(tmp_path: Path) -> None:
    """On a shared GPU a benchmark size's first call is made with the lock relaxed, before any shape is timed
    (qrjudge/timed.py, `warm_up`); what it finds is still the verdict in the order alone finds it. A kernel honest in
    every test that calls a library factorisation on the second benchmark shape is rejected both ways; one that is
    also wrong on the first shape's timed calls is `incorrect` both ways (alone they are checked before the second
    shape is reached)."""
    locks = tmp_path / "locks"
    locks.mkdir()
    for wrong, status in (("tau", "rejected"), ("tau * 0.5 if A.shape[0] == 4 else tau", "incorrect")):
        kernel = tmp_path / f"library_in_benchmark_{status}.py"
        kernel.write_text("import torch\nfrom base import custom_kernel as honest\n\n\ndef custom_kernel(A):\n"
                          "    if A.shape[0] == 6:  # the second benchmark shape (no test has a batch of 6)\n"
                          "        torch.linalg.qr(A)\n"
                          f"    h, tau = honest(A)\n    return h, {wrong}\n")
        for env in ({}, {"EVOLVE_GPU_LOCKS": str(locks)}):
            where = tmp_path / f"{status}{len(env)}"
            where.mkdir()
            result = judge(candidate(where, kernel), env=env)
            assert result["status"] == status, (status, env, result.get("error"))
            assert ("forbidden" if status == "rejected" else "timed call") in result["error"], result["error"]


def test_a_forger_reaches_neither_the_judge_stdout_nor_its_environment(tmp_path: Path) -> None:
    result = judge(candidate(tmp_path, CHEATS / "forge_verdict.py"))
    assert result["status"] == "rejected"
    assert re.search(r"forge: /proc/\d+/fd/1: (Permission denied|No such file)", result["stderr"])
    assert re.search(r"forge: /proc/\d+/environ: (Permission denied|No such file)", result["stderr"])


def test_a_runner_that_misreports_its_clock_is_caught_by_the_judges_clock(tmp_path: Path) -> None:
    """A runner subverted below the Python level (fault injection) reports 2% of every time: the judge's
    own clock sees the difference. (Judged up to five times: beside another test's judges on a 2-core machine its
    calls wait for a CPU as long as the difference, which the judge declines to call tampering: `retry`.)"""
    slow = tmp_path / "slow.py"  # about 60 ms a call: well above the CPU self-test's slack of 20 ms
    slow.write_text("import torch\nfrom base import custom_kernel as honest\n\n\ndef custom_kernel(A):\n"
                    "    x = torch.ones(300, 300)\n    for _ in range(120):\n        x = (x @ x) * 1e-3\n"
                    "    return honest(A)\n")
    result = judge(candidate(tmp_path, slow), env={"EVOLVE_HARNESS_FAULT": "clock=0.02",
                                                   "PYTHONPATH": str(Path(__file__).parent / "faults")}, attempts=5)
    assert result["status"] == "rejected" and "judge's clock" in result["error"], result.get("error")


def test_a_timer_restarted_by_native_code_gains_nothing_on_the_cpu(tmp_path: Path) -> None:
    """Native code restarts the runner's timer behind its work (tests/cheats/frames_clock.py), and the runner reports
    next to nothing. On the CPU the score is the judge's own clock (qrjudge/timed.py, `timed_us`), which that code
    cannot reach: the cheat scores what the honest kernel it wraps scores, and its lie shows only in what its
    process reported. (On a GPU this door is open: docs/QR_CONTRACT.md, "Times".)"""
    if not (shutil.which("c++") and shutil.which("ninja")):
        pytest.skip("builds a torch extension: needs a C++ compiler and ninja")
    (tmp_path / "honest").mkdir()
    honest = judge(candidate(tmp_path / "honest", HONEST))
    cheat = judge(candidate(tmp_path, CHEATS / "frames_clock.py"))
    assert honest["status"] == "ok" and cheat["status"] == "ok", cheat.get("error")
    # per shape, medians (a busy CI host's wake-ups move a mean): about 1 where the score is the judge's clock, about
    # 1/100 where it was the runner's report (the cheat's score 4.90 against the honest kernel's 705.7)
    ratios = [c["median_us"] / h["median_us"] for c, h in zip(cheat["shapes"], honest["shapes"])]
    assert math.prod(ratios) ** (1 / len(ratios)) > 1 / 3, (ratios, cheat["score"], honest["score"])
    lied = [s for s in cheat["shapes"] if s["reported_median_us"] < s["median_us"] / 10]
    assert len(lied) == len(cheat["shapes"]), cheat["shapes"]  # it did lie, on every shape (`tiny`: all small)


def test_the_verdict_names_the_anti_cheat_version(tmp_path: Path) -> None:
    result = judge(candidate(tmp_path, CHEATS / "geqrf_direct.py"))
    assert result["status"] == "rejected" and result["judge"] >= 2


def test_a_profile_names_the_kernels_and_a_failing_one_leaves_the_score(tmp_path: Path) -> None:
    """`--profile` (what a confirmation asks for) adds where the time went; a candidate that breaks only under
    the profiler keeps its measured score, with the profile's error in its place."""
    profiled = judge(candidate(tmp_path, HONEST), "--profile")
    assert profiled["status"] == "ok", profiled.get("error")
    assert [s["shape"] for s in profiled["profile"]["shapes"]] == [s["shape"] for s in profiled["shapes"]]
    assert all(s["kernels"] and s["kernels"][0]["share"] > 0 for s in profiled["profile"]["shapes"])
    # torch.profiler's start imports torch's compiler (4-6 s on a busy GPU host, in the confirmation's exclusive
    # hold or before it): the profile runs without it, alone and sharing the GPU
    assert profiled["profile"]["compiler_imported"] is False and "setup_compiler_s" not in profiled["timings"]
    locks, elsewhere = tmp_path / "locks", tmp_path / "shared"
    locks.mkdir()
    elsewhere.mkdir()
    shared = judge(candidate(elsewhere, HONEST), "--profile", env={"EVOLVE_GPU_LOCKS": str(locks)})
    assert shared["status"] == "ok" and shared["profile"]["shapes"], shared.get("error")
    assert shared["profile"]["compiler_imported"] is False and "timed_setup_compiler_s" not in shared["timings"]

    shy = tmp_path / "shy.py"
    shy.write_text("import torch\nfrom base import custom_kernel as honest\n\n\ndef custom_kernel(A):\n"
                   "    if torch.autograd.profiler._is_profiler_enabled:\n"
                   "        raise RuntimeError('no profiling here')\n    return honest(A)\n")
    failed = judge(candidate(tmp_path, shy), "--profile")
    assert failed["status"] == "ok", failed.get("error")
    assert "no profiling here" in failed["profile"]["error"] and failed["profile"]["shapes"] == []
