"""The QR judge on a real GPU: the seeds pass, every planted cheat or fault is caught with the right status.

Marked `gpu`: skipped without CUDA. Run on the GPU machine (bench/gpu_pass.sh runs these).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from evolver.evaluation.command import gpu_locks
from tests.conftest import ROOT, supervised

pytestmark = pytest.mark.gpu
CHEATS = Path(__file__).parent / "cheats"
SEEDS = ROOT / "seed_kernels"


def taking_turns() -> dict[str, str]:
    """The GPU's lock for judges that pytest-xdist's workers run side by side, as the engine gives every judge one:
    where the caller set none (bench/ci_gpu.sh shares one, as `per_gpu = 2` does), each judge holds evolve's own
    (where a run on this machine takes its turns too) for its whole evaluation, as `per_gpu = 1` does. Without it two
    judges time their calls on one GPU at once: an honest kernel was rejected for the other's work (flush_overlap,
    "the device stayed busy", H100, 2026-12-05, notebook run61)."""
    if os.environ.get("EVOLVE_GPU_LOCKS"):
        return {}
    locks = gpu_locks() or Path(tempfile.gettempdir()) / f"evolve-gpu-locks-{os.getuid()}"  # (no cache directory)
    locks.mkdir(exist_ok=True)
    return {"EVOLVE_GPU_LOCKS": str(locks), "EVOLVE_GPU_ALONE": "1"}


def run_harness(kernel_dir: Path, *args: str, timeout: float = 300) -> dict:
    """The judge on a kernel directory; a cheat's (`cheat_dir`) is judged by the copy of the harness beside it,
    so that one that reaches the judge's files reaches that copy, never the checkout's. A crash that says it is
    worth judging once more (`retry`: the host too busy to check the judge's clock, as the GPU tests' parallel
    workers made it once on an H200, honest_names at 40x352, run57) is judged once more (`supervised`); a second
    such crash stands."""
    here = kernel_dir.parent if (kernel_dir.parent / "qrjudge").is_dir() else ROOT
    return supervised(["--kernel-dir", str(kernel_dir), *args], here, taking_turns(), timeout)[0]


@pytest.mark.alone
@pytest.mark.parametrize("seed", ["naive", "blocked_wy", "tsqr_wy"])
def test_seed_passes_quick(seed: str) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("timing needs the GPU to itself; run the seed tests without -n (bench/gpu_pass.sh does)")
    result = run_harness(SEEDS / seed, "--mode", "quick")
    assert result["status"] == "ok", result.get("error")
    assert result["score"] > 0 and len(result["shapes"]) == 4


@pytest.mark.alone
@pytest.mark.parametrize("overrides", [
    ["REG_ROWS=0"], ["MB_CLUSTER=0"], ["CLUSTER_FROM=0"], ["CLUSTER_FROM=0", "REG_CLUSTER=0"],
    ["CLUSTER_FROM=0", "REG_CLUSTER=1"], ["VTC_BELOW=0", "TF32X3_BELOW=0", "APPLY_ROWS=0"],
    ["VTC_BELOW=4096", "TF32X3_BELOW=4096", "TF32X3_ROWS=0", "APPLY_ROWS=0"],
    ["OUTER_FROM=1", "VTC_BELOW=4096", "TF32X3_BELOW=4096", "APPLY_ROWS=0"],
    ["APPLY_FROM=0", "APPLY_BELOW=4096", "APPLY_ROWS=1088", "OUTER_FROM=1"],
    ["RP_WARPS=16", "REG_ROWS=2"], ["LOOKAHEAD_BELOW=0"], ["LOOKAHEAD_BELOW=1024", "CLUSTER_FROM=1"],
    ["COL_N=32", "COL_PANEL_BELOW=1024", "COL_ROWS=32", "COL_CLUSTER=1"], ["LANE_QR=0"],
    ["COL_PANEL_BELOW=1024", "OUTER_FROM=1"], ["COL_CLUSTER=1", "CLUSTER_FROM=1", "MB_BELOW=64"],
    ["COLK_N=0"], ["COL_N=0", "COLK_N=0", "COL_PANEL_BELOW=0"],
    ["CLUSTER_MBAR=0"], ["WG_FROM=0"], ["WG_FROM=1"], ["WG_FROM=1", "OUTER_FROM=1"], ["WG_APPLY=0"],
    ["WG_APPLY=1"], ["WG_SPLIT=1"], ["RP_TILE=0"], ["RP_TILE=0", "RP_WARPS=16", "REG_ROWS=2"],
    ["RP_TILE=0", "CLUSTER_FROM=1"], ["CLUSTER_FROM=1"]],
    ids="+".join)  # -k COL_CLUSTER: by constant
def test_tsqr_wy_paths_pass_quick(overrides: list[str]) -> None:
    """tsqr_wy's other paths (each a constant of kernel.py, bench/variant.py): the panel without registers, the
    multi-block panel without clusters and always as one (reg_cluster, 1 and 2 rows a thread, and mb_cluster where
    REG_CLUSTER leaves it panels), the trailing update all in cuBLAS's FP32, all in
    split TF32 by three kernels (tf32x3_vtc32 and tf32x3_update; tf32x3_vtc64 inside the outer blocks) and by
    tf32x3_apply at every batch (64-wide outer blocks too), the 16-warp register panel, the panel loop without
    look-ahead and with it at every batch that runs as a CUDA graph, multi-block panels clustered at every batch,
    col_qr for n <= 32 (lane_qr is the default), col_panel for every single-block panel it holds
    (inside the outer blocks too), col_cluster for the clustered ones (at batches under 64 too), n of 33 to 192
    without colk_qr (small_qr and the panels), none of them (small_qr and reg_panel, the defaults before the
    fourteenth pass), reg_cluster exchanging its sums by cluster barriers (before the mbarriers), and the updates
    WG_FROM sends to wgmma.cu on a Hopper: by cuBLAS there (WG_FROM 0), by wgmma.cu at every batch wherever 128
    columns wide (in outer blocks too; elsewhere WG_FROM changes nothing), there only C -= V W by wg_update (WG_APPLY
    0, where the default has wg_apply do the whole update wherever its strips make a wave of blocks), wg_apply only
    where wg_update could (WG_APPLY 1), its rows over a cluster where the strips are few (WG_SPLIT), reg_panel
    in tile_panel's place (RP_TILE 0: 1, 2 and 4 whole rows a thread, where tile_panel holds 4, 8 and 16 rows of 8
    columns; 16 warps too) and reg_cluster in tile_cluster's, and tile_cluster clustered at every batch."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("timing needs the GPU to itself")
    sys.path.insert(0, str(ROOT / "bench"))
    from variant import variant

    result = run_harness(variant(SEEDS / "tsqr_wy", overrides), "--mode", "quick", "--stall", "30")
    assert result["status"] == "ok", result.get("error")


def tsqr_wy_module() -> Any:
    """tsqr_wy's kernel.py as a module of its own, so a test calls its kernels directly."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tsqr_wy_kernel", SEEDS / "tsqr_wy" / "kernel.py")
    assert spec and spec.loader
    kernel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernel)
    return kernel


def assert_only_view_changed(H: Any, before: Any, first: int, N: int) -> None:
    """Nothing of H changed outside the view H[:, 5:, first:first + N] that a kernel wrote."""
    import torch

    outside = torch.ones_like(H, dtype=torch.bool)
    outside[:, 5:, first:first + N] = False
    assert torch.equal(H[outside], before[outside])


@pytest.mark.parametrize("m, N, w", [(16, 1, 8), (33, 31, 16), (70, 5, 48), (100, 33, 24), (512, 448, 64),
                                     (1024, 992, 32), (1088, 40, 64)])
def test_tsqr_wy_fused_update_matches_float64(m: int, N: int, w: int) -> None:
    """tf32x3_apply (C += V Wn, Wn = -T^T V^T C, a 32-column tile of C per block held in shared memory) on
    strided views like the ones kernel.py passes, against the same update in float64: within 1e-5 of the result's
    largest entry, and no entry outside the view touched. Sizes: partial tiles (N not a multiple of 32), rows not a
    multiple of 32, every width class (V of 8 to 64 columns), the largest C that fits in shared memory."""
    torch = pytest.importorskip("torch")
    kernel = tsqr_wy_module()
    torch.manual_seed(0)
    batch = 3
    V = torch.randn(batch, m + 3, 70, device="cuda")[:, 3:, :w]
    T = torch.randn(batch, 72, 72, device="cuda").triu()[:, :w, :w]
    H = torch.randn(batch, m + 5, N + 9, device="cuda")
    before = H.clone()
    C = H[:, 5:, 7:7 + N]
    Cd, Vd, Td = C.double(), V.double(), T.double()
    expected = Cd - Vd @ (Td.transpose(1, 2) @ (Vd.transpose(1, 2) @ Cd))
    assert kernel._apply_bytes(m) <= kernel.SMEM_BUDGET
    kernel._tf32x3_apply(V, T, C)
    torch.cuda.synchronize()
    error = (C.double() - expected).abs().max().item() / expected.abs().max().item()
    assert error < 1e-5, error
    assert_only_view_changed(H, before, 7, N)


def wg_views(m: int, N: int, w: int) -> tuple[Any, Any, Any]:
    """V (3 x m x w) and C (3 x m x N) as views like the ones kernel.py passes to wgmma.cu (rows of a wider matrix, C
    from its column 8), and H, the matrices C is a view of; skipped but on a GPU of compute capability 9.0 (sm_90a's
    code runs nowhere else)."""
    torch = pytest.importorskip("torch")
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("wgmma needs compute capability 9.0")
    torch.manual_seed(0)
    V = torch.randn(3, m + 3, 70, device="cuda")[:, 3:, :w]
    H = torch.randn(3, m + 5, N + 10, device="cuda")
    return V, H, H[:, 5:, 8:8 + N]


def assert_wg_result(C: Any, expected: Any, H: Any, before: Any) -> None:
    """C (wg_views's) within 1e-5 of float64's `expected`, relative to its largest entry, and H unchanged outside C."""
    import torch

    torch.cuda.synchronize()
    error = (C.double() - expected).abs().max().item() / expected.abs().max().item()
    assert error < 1e-5, error
    assert_only_view_changed(H, before, 8, C.shape[2])


@pytest.mark.parametrize("m, N, w", [(16, 2, 8), (70, 6, 48), (100, 34, 24), (512, 448, 64), (1024, 992, 32),
                                     (130, 260, 64)])
def test_tsqr_wy_wgmma_update_matches_float64(m: int, N: int, w: int) -> None:
    """wgmma.cu's wg_update (kernel.py's _wg_update: C -= V W) on strided views like the ones kernel.py passes,
    against float64: within 1e-5 of the result's largest entry, nothing outside the view touched. On a GPU of
    compute capability 9.0 only (sm_90a's code runs nowhere else)."""
    V, H, C = wg_views(m, N, w)
    kernel = tsqr_wy_module()
    before = H.clone()
    W = V.transpose(1, 2) @ C
    expected = C.double() - V.double() @ W.double()
    kernel._wg_update(V, W, C, -1.0)
    assert_wg_result(C, expected, H, before)


@pytest.mark.parametrize("split", [0, 1])
@pytest.mark.parametrize("m, N, w", [(16, 2, 8), (70, 6, 48), (100, 34, 24), (512, 448, 64), (1024, 992, 32),
                                     (130, 260, 64), (97, 130, 40)])
def test_tsqr_wy_wgmma_apply_matches_float64(m: int, N: int, w: int, split: int) -> None:
    """wgmma.cu's wg_apply (kernel.py's _wg_apply: C = C - V T^T V^T C in one launch), and with WG_SPLIT its rows
    over a cluster of blocks (wg_apply_split, taller than 64 rows), on strided views like the ones kernel.py passes,
    against float64: within 1e-5 of the result's largest entry, nothing outside the view touched. On a GPU of
    compute capability 9.0 only."""
    V, H, C = wg_views(m, N, w)
    kernel = tsqr_wy_module()
    kernel.WG_SPLIT = split
    before = H.clone()
    T = (H.new_empty(V.shape[0], 80, 80).normal_()[:, :w, :w].triu() / w)
    Vd, Cd = V.double(), C.double()
    expected = Cd - Vd @ (T.double().transpose(1, 2) @ (Vd.transpose(1, 2) @ Cd))
    kernel._wg_apply(V, T, C)
    assert_wg_result(C, expected, H, before)


def cheat_dir(tmp_path: Path, name: str) -> Path:
    """A cheat's kernel directory, with its own copy of the harness beside it (see `run_cheat`)."""
    d = tmp_path / name
    d.mkdir()
    shutil.copytree(ROOT / "qrjudge", tmp_path / "qrjudge", ignore=shutil.ignore_patterns("__pycache__"),
                    dirs_exist_ok=True)
    shutil.copy(SEEDS / "blocked_wy" / "kernel.py", d / "base.py")
    shutil.copy(SEEDS / "blocked_wy" / "qr.cu", d / "qr.cu")
    shutil.copy(CHEATS / f"{name}.py", d / "kernel.py")
    return d


def expectation(name: str) -> tuple[str, str]:
    first = (CHEATS / f"{name}.py").read_text().splitlines()[0]  # the GPU expectation
    status, pattern = first.removeprefix("# expect:").split("|", 1)
    return status.strip(), pattern.strip()


@pytest.mark.parametrize("name", sorted(p.stem for p in CHEATS.glob("*.py")))
def test_planted_cheat_is_caught(tmp_path: Path, name: str) -> None:
    status, pattern = expectation(name)
    result = run_harness(cheat_dir(tmp_path, name), "--mode", "quick", "--stall", "20")
    assert result["status"] == status, f"{name}: {result.get('status')}: {result.get('error')}"
    assert re.search(pattern, result.get("error") or ""), f"{name}: {result.get('error')!r} !~ {pattern!r}"
    assert (result["score"] is None) == (status != "ok")


def full_score(kernel_dir: Path, env: dict[str, str] | None = None) -> dict:
    """The judge's `full` verdict on a kernel directory, judged once."""
    return supervised(["--kernel-dir", str(kernel_dir), "--mode", "full"], ROOT, {**taking_turns(), **(env or {})}, 600,
                      attempts=1)[0]


@pytest.mark.parametrize("factor", ["0.9", "0.97"])
def test_cheat_clock_wrapper_at_more_factors(tmp_path: Path, factor: str) -> None:
    d = cheat_dir(tmp_path, "clock_wrapper")
    kernel = d / "kernel.py"
    kernel.write_text(kernel.read_text().replace("FACTOR = 0.6", f"FACTOR = {factor}"))
    result = run_harness(d, "--mode", "quick")
    assert result["status"] == "rejected" and "elapsed_time was replaced" in result["error"], result.get("error")


@pytest.mark.alone  # scores compared within 2%: another evaluation's host work beside them would be noise
@pytest.mark.parametrize("name, limit", [("honest_prose", 0.02), ("content_cache", 0.05)])
def test_cheat_honest_ones_score_like_the_honest_kernel(tmp_path: Path, name: str, limit: float) -> None:
    """The honest kernel with docstrings naming geqrf scores as it does without them; the content cache never
    hits on independent inputs, so it is no faster than the kernel it wraps. Three evaluations of each, in
    turn, compared by their best: a host-bound small shape makes whole evaluations on one machine differ by a
    few percent (docs/benchmarks-history.md), and the fastest of a few is what the kernel itself can do."""
    honest: list[float] = []
    other: list[float] = []
    cheat = cheat_dir(tmp_path, name)
    for _ in range(3):
        for scores, kernel_dir in ((honest, SEEDS / "blocked_wy"), (other, cheat)):
            result = full_score(kernel_dir)
            assert result["status"] == "ok", f"{kernel_dir.name}: {result.get('error')}"
            scores.append(result["score"])
    ratio = min(other) / min(honest)
    print(f"{name}: {other} us vs honest {honest} us (ratio of the best {ratio:.4f})")
    assert abs(ratio - 1) < limit if name == "honest_prose" else ratio > 1 - limit


def test_cheat_nothing_runs_beside_the_hold() -> None:
    """The hold before a timed call fills every SM: a kernel launched on another stream during it starts only
    once it ends (a one-thread sleep of the same length would let it through at once)."""
    import torch

    from qrjudge.timing import Hold

    hold, side = Hold(torch, 2000), torch.cuda.Stream()
    x = torch.zeros(1 << 20, device="cuda")
    torch.cuda.synchronize()
    began, side_done = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    began.record()
    hold()
    with torch.cuda.stream(side):
        x.add_(1)
        side_done.record()
    torch.cuda.synchronize()
    assert began.elapsed_time(side_done) > 1.8, began.elapsed_time(side_done)  # ms


@pytest.mark.alone  # the fastest 20x32 calls compared
def test_cheat_flush_overlap_gains_nothing(tmp_path: Path) -> None:
    """Side-stream work launched while L2 is still being flushed gets no head start: the smallest shape, where
    the flush (about 70 us) would hide most of the kernel, times as the wrapped kernel does (fastest calls)."""
    def fastest_small(kernel_dir: Path) -> float:
        result = run_harness(kernel_dir, "--mode", "quick")
        assert result["status"] == "ok", f"{kernel_dir.name}: {result.get('error')}"
        return float(result["shapes"][0]["min_us"])
    honest, overlapping = fastest_small(SEEDS / "blocked_wy"), fastest_small(cheat_dir(tmp_path, "flush_overlap"))
    print(f"flush_overlap: fastest 20x32 call {overlapping} us vs honest {honest} us")
    assert overlapping > 0.8 * honest


@pytest.mark.parametrize("factor", ["0.5", "0.9"])
def test_cheat_a_runner_misreporting_its_time_is_caught_by_the_judges_clock(tmp_path: Path, factor: str) -> None:
    """A runner subverted below the Python level (fault injection: every time reported at FACTOR of the truth)
    passes the integrity check by construction; the judge's own clock rejects it."""
    result = full_score(SEEDS / "blocked_wy", env={"EVOLVE_HARNESS_FAULT": f"clock={factor}",
                                                   "PYTHONPATH": str(Path(__file__).parent / "faults")})
    assert result["status"] == "rejected" and "judge's clock" in result["error"], result.get("error")


@pytest.mark.alone
def test_seed_full_mode_checks_every_timed_call() -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("timing needs the GPU to itself")
    result = full_score(SEEDS / "blocked_wy")
    assert result["status"] == "ok", result.get("error")
    for shape in result["shapes"]:  # every timed call checked; a heavy shape's on a secret sample of its matrices
        assert shape["checked"] == shape["runs"] and 1 <= shape["checked_matrices"] <= shape["batch"], shape
    assert result["catch_probability"] >= 0.99, result["catch_probability"]
    assert len(result["shapes"][0]["round_means_us"]) == 3  # 20x32: timed in three rounds (timing.SHORT_US)
    assert len(result["shapes"][-1]["round_means_us"]) == 1  # 2x4096: one
    assert result["runner_isolation"].startswith("user, mount and PID namespaces, its own /proc; read-only")
    assert 10 < result["hold_us"] < 1000, result["hold_us"]  # a flush and up to 100 us (about 160 us on an H200)
