"""The GPU pass scripts' own logic, on the CPU self-test (their figures are only worth what they measure)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evolver.evaluation import sandbox

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox here: {sandbox.unavailable()}")


@pytest.mark.parametrize("prestart", [False, True])
def test_sandbox_cost_alternates_the_sides_it_says(prestart: bool) -> None:
    """Outside, inside, outside, inside: each evaluation judged on the side its line names, each job once
    (without --prestart the pipeline once ran the first job twice and never the last)."""
    argv = [sys.executable, str(ROOT / "bench" / "sandbox_cost.py"), str(ROOT / "tests" / "cpu_kernel"), "--device",
            "cpu", "--mode", "tiny", "--repeats", "2", "--sides", "both"] + (["--prestart"] if prestart else [])
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    runs, summary = rows[:-1], rows[-1]["summary"]
    assert [r["sandbox"] for r in runs] == [False, True, False, True]
    assert all(r["status"] == "ok" and r["shapes_us"] for r in runs), runs
    assert set(summary) == {"plain", "sandbox"}


def test_tsqr_wy_loop_matches_geqrf_on_the_cpu() -> None:
    """bench/seed_model.py: tsqr_wy's own kernel.py driving Python stand-ins of its CUDA kernels (the multi-block
    panel and the fused update among them), against torch.geqrf; it guards the seed's Python side (panel widths,
    workspaces, which kernel when) whenever kernel.py or its defaults change."""
    pytest.importorskip("torch")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "seed_model.py")], capture_output=True, text=True,
                         timeout=600, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.rstrip().endswith(": ok"), out.stdout[-2000:] + out.stderr[-2000:]
    for kernel in ("mb_panel", "mb_cluster", "trail_update", "reg_panel1", "reg_panel2", "reg_panel4", "panel_qr",
                   "reg_cluster1", "reg_cluster2", "tile_panel4", "tile_panel8", "tile_panel16", "tile_cluster4",
                   "tile_cluster8", "col_qr", "lane_qr",
                   "colk_qr4", "colk_qr6", "col_panel4", "col_panel8", "col_panel16", "col_panel32",
                   "col_cluster4", "col_cluster8", "build_t",
                   "tf32x3_vtc32", "tf32x3_vtc64", "tf32x3_update", "tf32x3_apply", "wg_update", "wg_apply",
                   "wg_apply_split"):
        assert f"'{kernel}'" in out.stdout, kernel  # every panel kernel and the update were exercised
    assert "'outer'" in out.stdout  # and the outer blocking (OUTER_NB)
    assert "'lookahead'" in out.stdout  # and the look-ahead (LOOKAHEAD_BELOW)
    assert "'tf32x3 split'" in out.stdout  # and V^T C over chunks of rows, added up
    assert "'tf32x3_apply lanes'" in out.stdout  # and tf32x3_apply lane by lane


def test_split_tf32_products_are_as_accurate_as_fp32() -> None:
    """tf32x3.cu's arithmetic, as bench/seed_model.py models it: TF32 rounding is cvt.rna's (10 mantissa bits,
    ties away from zero), and three products of the split operands come within a small factor of an FP32
    GEMM's error, where one TF32 product is hundreds of times worse (why the seed takes three)."""
    torch = pytest.importorskip("torch")
    sys.path.insert(0, str(ROOT / "bench"))
    import seed_model

    x = torch.tensor([1 + 2**-11, -(1 + 2**-11), 1 + 2**-11 - 2**-23, 3.0, 1 + 3 * 2**-11])
    assert seed_model.tf32(x).tolist() == [1 + 2**-10, -(1 + 2**-10), 1.0, 3.0, 1 + 2 * 2**-10]
    torch.manual_seed(0)
    A, B = torch.randn(64, 1024), torch.randn(1024, 96)
    exact = A.double() @ B.double()
    def error(product: torch.Tensor) -> float:
        return (product.double() - exact).abs().max().item()
    fp32 = error(A @ B)
    split = error(seed_model.tf32x3_matmul(A, B))
    plain = error(seed_model.tf32(A).double() @ seed_model.tf32(B).double())
    assert split < 4 * fp32 and plain > 100 * fp32, (fp32, split, plain)


@pytest.mark.parametrize("m, N, w", [(16, 1, 8), (33, 31, 16), (70, 40, 48), (100, 33, 24), (130, 40, 64)])
def test_tf32x3_apply_lane_by_lane_matches_float64(m: int, N: int, w: int) -> None:
    """bench/seed_model.py's transcription of tf32x3_apply (warps, lanes, MMA fragments as PTX defines them,
    shared memory bounds-checked per region, unwritten shared memory NaN) against the update in float64: partial
    tiles, rows not a multiple of 32, every width class, more than 128 rows (two passes of the load loop)."""
    pytest.importorskip("torch")
    sys.path.insert(0, str(ROOT / "bench"))
    import numpy as np
    import seed_model

    rng = np.random.default_rng(0)
    V = rng.standard_normal((m, w)).astype(np.float32)
    T = np.triu(rng.standard_normal((w, w))).astype(np.float32)
    C = rng.standard_normal((m, N)).astype(np.float32)
    Cd, Vd, Td = C.astype(np.float64), V.astype(np.float64), T.astype(np.float64)
    expected = Cd - Vd @ (Td.T @ (Vd.T @ Cd))
    for col0 in range(0, N, 32):
        seed_model.apply_block(C, V, T, m, N, w, col0)
    assert np.abs(C - expected).max() / np.abs(expected).max() < 1e-6


def test_sass_stats_reads_each_kernels_registers_mmas_and_loops() -> None:
    """bench/sass_stats.py on tf32x3.cu and wgmma.cu (nvcc and cuobjdump where they are): their nine kernels,
    tf32x3_apply within the 128 registers its launch bounds allow two blocks an SM, without spills, with loops whose
    bodies issue MMAs (W = V^T C and C += V Wn); wg_update's and wg_apply's warpgroup MMAs (HGMMA, three a split step
    of 8, 8 steps; wg_apply's and wg_apply_split's three products), in registers enough for three blocks an SM,
    without spills."""
    import shutil

    sys.path.insert(0, str(ROOT / "bench"))
    import sass_stats

    try:
        sass_stats.cuobjdump()
    except SystemExit:
        pytest.skip("no cuobjdump or nvdisasm")
    if not shutil.which("nvcc"):
        pytest.skip("no nvcc")
    seed = ROOT / "seed_kernels" / "tsqr_wy"
    kernels = sass_stats.compile_kernels([seed / name for name in ("common.cu", "tf32x3.cu", "wgmma.cu")],
                                         [])  # as kernel.py's _WG_SOURCE
    assert set(kernels) == {"tf32x3_apply", "tf32x3_update", "tf32x3_vtc32", "tf32x3_vtc64", "chunk_tw", "wg_update",
                            "wg_apply", "wg_apply_split", "wg_compiled"}
    apply = kernels["tf32x3_apply"]
    assert 0 < apply.registers <= 128 and apply.spill_bytes == 0, apply.registers
    mma_loops = [loop for loop in apply.loops() if loop[3]]
    assert len(mma_loops) >= 2 and all(count > mmas for _, _, count, mmas in mma_loops), mma_loops
    assert sum(op.startswith("HMMA") for _, op, _ in apply.code) % 3 == 0  # three MMAs per split product
    for name, chains in (("wg_update", 8), ("wg_apply", 4 + 8 + 8), ("wg_apply_split", 4 + 8 + 8)):
        kernel = kernels[name]
        assert 0 < kernel.registers <= 65536 // (3 * 128) and kernel.spill_bytes == 0, (name, kernel.registers)
        assert sum(op.startswith("HGMMA") for _, op, _ in kernel.code) >= 3 * chains, name
        assert not any(op.startswith("HMMA") for _, op, _ in kernel.code), name


def test_split_tf32_updates_keep_the_gates_where_fp32_has_them() -> None:
    """The blocked path at n = 512 with every trailing update in tf32x3's arithmetic (bench/seed_model.py
    --gates): the factor gate used about as much as with FP32 GEMMs, far less than with plain TF32."""
    pytest.importorskip("torch")
    sys.path.insert(0, str(ROOT / "bench"))
    import seed_model

    fp32, split, plain = (seed_model.gate_use(512, updates)[0] for updates in ("fp32", "split", "plain"))
    assert split < 2 * fp32 < 0.01 and plain > 0.05, (fp32, split, plain)


def test_each_evaluation_of_a_pass_logs_the_gpu_clock_range(tmp_path: Path) -> None:
    """bench/lib.sh's `qr` samples nvidia-smi while the harness runs (a fake of each here: the clock drops after
    the first sample, another process holds the GPU) and writes the SM clock's range and the other processes to
    pass.log; the sampler does not outlive the evaluation, and a machine without nvidia-smi gets no line and no
    error."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\ncase \"$*\" in *compute-apps*) echo '4242, python3'; exit 0 ;; *-lms*) ;; "
                   "*) echo 1980; exit 0 ;; esac\n"  # the processes, one query, or a loop
                   "clock=1980\nwhile true; do echo \"$clock, 61, 310.25, 0x0000000000000000\"; clock=1755;"
                   " sleep 0.05; done\n")
    harness = bin_dir / "fake-python"
    harness.write_text("#!/bin/sh\nsleep 0.5\necho '{\"status\": \"ok\", \"score\": 1.0}'\n")
    for tool in (smi, harness):
        tool.chmod(0o755)
    clock = "SM clock 1755-1980 MHz, up to 61 C"
    for path, expect in ((f"{bin_dir}:/usr/bin:/bin", clock), ("/usr/bin:/bin", None)):
        out = tmp_path / ("with" if expect else "without")
        env = {**os.environ, "PATH": path, "OUT": str(out), "PYTHON": str(harness)}
        run = subprocess.run(["bash", "-c", f"source {ROOT}/bench/lib.sh; qr one --mode quick"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=60)
        log = (out / "pass.log").read_text()
        assert run.returncode == 0 and '"score": 1.0' in (out / "results.jsonl").read_text(), run.stderr
        if expect:
            assert expect in log and "1 CUDA process(es) on the GPU as one starts" in log, log
        else:
            assert "SM clock" not in log and not (out / "gpu.csv").exists(), log
    assert not running(smi), "the sampler outlived its evaluation"


def running(path: Path) -> bool:
    """Whether a process whose command line names `path` is alive."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if str(path).encode() in cmdline.read_bytes():
                return True
        except OSError:  # the process ended while we looked
            pass
    return False


def seed_pass_table(tmp_path: Path) -> str:
    """The Python bench/seed_pass.sh runs on its results at the end (its per-shape table), as a file."""
    text = (ROOT / "bench" / "seed_pass.sh").read_text()
    start = text.index("<<'PY'", text.index("results.jsonl\""))
    code = tmp_path / "table.py"
    code.write_text(text[text.index("\n", start) + 1:text.index("\nPY\n", start)])
    return str(code)


RESULTS = ROOT / "tests" / "data" / "recorded"  # copies of the notebook's 2026-12-02/run1 and run3, 2026-12-01-late/run1
RUN1, RUN3 = RESULTS / "2026-12-02-run1.jsonl", RESULTS / "2026-12-02-run3.jsonl"
RUN120 = RESULTS / "2026-12-07-run120-seed.jsonl"  # 2026-12-03/run120's seed_pass, each shape's mean and score kept


def test_seed_pass_prints_the_seed_beside_geqrf_and_the_seeds_it_climbed_from(tmp_path: Path) -> None:
    """seed_pass.sh's closing table on run120's results (an H100, 2026-12-07): a column for each variant between
    blocked_wy and the seed, ms a call, the speedup over geqrf, the geomean row, the repeats' CV and final's score."""
    out = subprocess.run([sys.executable, seed_pass_table(tmp_path), str(RUN120)], capture_output=True, text=True,
                         timeout=60)
    lines = out.stdout.splitlines()
    assert lines[0] == "| shape | geqrf | blocked_wy | WG_APPLY=0 | WG_APPLY=1 | seed | seed vs geqrf |", out.stderr
    assert "| 640x512 dense cond=2 | 1004.081 | 11.704 | 8.058 | 6.985 | 6.626 | 151.5x |" in lines
    assert lines[-3] == "| geomean (the judge's score) | 118.415 | 5.664 | 2.608 | 2.463 | 2.420 | 48.9x |"
    assert lines[-2].endswith("CV 0.11%") and lines[-1] == "final: ok 2436.236 us"
    assert len(lines) == 2 + 12 + 3  # the header, the contract's twelve shapes, the geomean, the CV, final


@pytest.mark.parametrize("script, commands", [
    ("trust_pass.sh", [["bench/passes.py", "evaluations", RUN3], ["bench/passes.py", "stages", RUN3]]),
    ("seed_pass.sh", [["seed_pass table", RUN1]]),
    ("ab_judge.sh", [["bench/passes.py", "stages", RUN3], ["bench/passes.py", "shapes", RUN3]]),
    ("noise_pass.sh", [["bench/passes.py", "evaluations", RUN3], ["bench/passes.py", "cv", RUN3],
                       ["bench/passes.py", "loops", RESULTS / "2026-12-01-late-loop_timing.jsonl"]]),
])
def test_a_pass_summary_reads_recorded_results(tmp_path: Path, script: str, commands: list[list[object]]) -> None:
    """A pass's closing summary runs on the GPU machine after minutes of device time: it must read results as
    the harness records them (including older ones, without this session's fields) and print, not crash."""
    printed = ""
    for command in commands:
        assert command[0] == "seed_pass table" or f"$py {command[0]} {command[1]}" in (ROOT / "bench" / script).read_text()
        program = seed_pass_table(tmp_path) if command[0] == "seed_pass table" else str(ROOT / str(command[0]))
        out = subprocess.run([sys.executable, program, *map(str, command[1:])], capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, out.stderr[-2000:]
        printed += out.stdout
    assert "us" in printed and len(printed.splitlines()) >= 3, printed


@pytest.mark.slow
@pytest.mark.parametrize("cold", ["", "1"])
def test_share_ab_judges_the_same_candidates_with_both_harnesses(tmp_path: Path, cold: str) -> None:
    """bench/share_ab.sh on the CPU: the kernel and its variant judged by the old harness and then the new, two
    at a time under one lock, every result recorded as side+round/candidate, and each side's rate and stages;
    with COLD=1 the same without warming the compile cache (here: none)."""
    kernel = tmp_path / "kernel"
    kernel.mkdir()
    (kernel / "kernel.py").write_text((ROOT / "tests" / "cpu_kernel" / "kernel.py").read_text() + "\nUNUSED = 1\n")
    (tmp_path / "variants.txt").write_text("# one variant\n\nUNUSED=2\n")
    out = tmp_path / "out"
    env = {**os.environ, "OUT": str(out), "OLD": str(ROOT), "KERNEL": str(kernel),
           "VARIANTS": str(tmp_path / "variants.txt"), "DEVICE": "cpu", "MODE": "tiny", "QUICK_MODE": "tiny",
           "ROUNDS": "1", "PYTHON": sys.executable, "COLD": cold,
           "EVOLVE_NVRTC_CACHE": "off"}
    proc = subprocess.run(["bash", "bench/share_ab.sh"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rounds = [json.loads(line) for line in (out / "rounds.jsonl").read_text().splitlines()]
    assert [(r["name"], r["candidates"]) for r in rounds] == [("old1", 2), ("new1", 2)]
    assert all(r["wall_ms"] > 0 for r in rounds)
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["name"] for r in results) == ["new1/0", "new1/1", "old1/0", "old1/1"]
    assert all(r["result"]["status"] == "ok" for r in results), [r["result"].get("error") for r in results]
    log = (out / "pass.log").read_text()
    assert "old: 2 judged in" in log and "new: 2 judged in" in log and "2 of 2 ok" in log and "exclusive" in log, log
    assert ("emptied each round, KERNEL first" if cold else "(compile cache warmed)") in log, log


def test_a_variant_changes_the_constant_and_nothing_else(tmp_path: Path) -> None:
    """bench/variant.py on every @tune constant of tsqr_wy: only the constant's own line changes, even where
    the docstring has a line that starts like it (a variant run once changed prose instead of the constant)."""
    import re

    sys.path.insert(0, str(ROOT / "bench"))
    from variant import variant

    seed = ROOT / "seed_kernels" / "tsqr_wy"
    original = (seed / "kernel.py").read_text()
    kernel = tmp_path / "seed"
    kernel.mkdir()
    (kernel / "kernel.py").write_text(f'"""\nNB = 32) prose that starts like a constant\n"""\n{original}')
    names = re.findall(r"^(\w+) = \S+  # @tune", original, flags=re.M)
    assert "MB_CLUSTER" in names and "VTC_BELOW" in names
    for name in names:
        text = (variant(kernel, [f"{name}=7"]) / "kernel.py").read_text()
        before, after = (kernel / "kernel.py").read_text().splitlines(), text.splitlines()
        changed = [(a, b) for a, b in zip(before, after) if a != b]
        assert len(before) == len(after) and len(changed) == 1, (name, changed)
        assert changed[0][1].startswith(f"{name} = 7  # @tune"), changed


def test_tsqr_wy_compiles_one_warp_count_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """With its defaults tsqr_wy compiles qr.cu for NWARPS only (and reg_panel's and cols.cu's modules with 8 as
    well; tf32x3.cu, for small batches, has no warp count):
    every module is compiled again in each sandboxed evaluation, and the exported file builds one extension per
    module on its first import. A small batch (multi-block panels) and a large one, on the CPU stand-ins of
    bench/seed_model.py (small matrices use TINY_WARPS, 8 as well); tf32x3_apply's as its three products (lane by
    lane, 35 of this test's 47 s: test_tf32x3_apply_lane_by_lane_matches_float64 runs that)."""
    torch = pytest.importorskip("torch")
    sys.path.insert(0, str(ROOT / "bench"))
    import seed_model

    monkeypatch.setattr(seed_model, "APPLY_LANES", False)
    seed_model.MODULES.clear()
    module = seed_model.load({"GRAPH_BYTES": 0})  # the eager path (no CUDA graph on a CPU)
    for batch, n in ((2, 200), (20, 200)):  # above COLK_N: panels, not one launch
        A = torch.randn(batch, n, n)
        H, tau = module.custom_kernel(A)
        h, t = torch.geqrf(A.double())
        assert max((H.double() - h).abs().max().item(), (tau.double() - t).abs().max().item()) < 1e-4
    warps = {option for options in seed_model.MODULES for option in options if option.startswith("-DNWARPS=")}
    assert warps == {"-DNWARPS=8"}, seed_model.MODULES
    assert len(seed_model.MODULES) == 4  # common.cu + qr.cu, + tile_panel.cu, + cols.cu (col_panel), tf32x3.cu


def test_a_tune_move_recompiles_only_the_modules_that_read_what_it_changed() -> None:
    """bench/move_compiles.py: each module is compiled with the defines it reads (kernel.py's _DEFINES), so the
    moves of NB, NWARPS and GRAM_ROWS recompile qr.cu alone, RP_WARPS and CLUSTER_MBAR tile_panel.cu alone (the
    register panel's module, RP_TILE = 1) and RP_TILE=0 reg_panel.cu alone (each made only where RP_TILE picks it);
    cols.cu, the costliest with reg_panel.cu (2.6 s each with nvcc here, qr.cu 1.0), had been compiled again by six of
    the seven moves before that."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "move_compiles.py"), "--no-time"], capture_output=True,
                         text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    moves = dict(re.findall(r"^  (\w+=\w+): 1 module\(s\): (\S+)$", out.stdout, re.MULTILINE))
    assert moves == {"NB=16": "qr.cu", "NWARPS=4": "qr.cu", "NWARPS=16": "qr.cu", "NWARPS=32": "qr.cu",
                     "GRAM_ROWS=64": "qr.cu", "GRAM_ROWS=256": "qr.cu", "RP_WARPS=16": "tile_panel.cu",
                     "CLUSTER_MBAR=0": "tile_panel.cu", "RP_TILE=0": "reg_panel.cu"}, out.stdout
    assert "9 moves compile" in out.stdout


@pytest.mark.parametrize("script, says", [
    ("checkpoint_probe", "no CUDA driver with the checkpoint API here"),  # needs the driver's checkpoint API
    ("cuda_start", "no NVIDIA driver here"),
])
def test_gpu_probes_say_in_one_line_where_there_is_no_driver(script: str, says: str) -> None:
    """The bench probes that need an NVIDIA driver say so in one line without one, and exit 2."""
    import shutil

    if shutil.which("nvidia-smi"):
        pytest.skip("this machine has an NVIDIA driver")
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / f"{script}.py")], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == f"{script}: {says}"


FAKE_EVAL = r'''
import os, re, sys
lines = open(sys.argv[2]).read().splitlines()
pattern = r"\s*([a-zA-Z]+):\s*([a-zA-Z]+|[+-]?[0-9]+)\s*"  # the contest's own test-file grammar
assert all(re.fullmatch(pattern, part) for line in lines for part in line.split(";")), lines
import utils  # staged from task.yml's `files` source
out = os.fdopen(int(os.environ["POPCORN_FD"]), "w")
if sys.argv[1] == "test":
    print(f"test-count: {len(lines)}", file=out)
    for i, line in enumerate(lines):
        print(f"test.{i}.spec: {line}", file=out)
        print(f"test.{i}.status: " + ("fail" if "rankdef" in line and utils.STRICT else "pass"), file=out)
    print("check: " + ("fail" if utils.STRICT else "pass"), file=out)
else:
    print(f"benchmark-count: {len(lines)}", file=out)
    for i, line in enumerate(lines):
        n = int(re.search(r"n: (\d+)", line)[1])
        print(f"benchmark.{i}.spec: {line}", file=out)
        for field, value in (("runs", 5), ("mean", n * 1000.0), ("std", 1.0), ("err", 0.5), ("best", 1.0),
                             ("worst", 2.0)):
            print(f"benchmark.{i}.{field}: {value}", file=out)
    print("check: pass", file=out)
'''
TASK_YML = '''# name: fake
files:
  - {"name": "submission.py", "source": "@SUBMISSION@"}
  - {"name": "utils.py", "source": "../shared/utils.py"}
  - {"name": "eval.py", "source": "eval.py"}

test_timeout: 60
tests:
  - {"batch": 2, "n": 32, "cond": 1, "seed": 5}
  - {"batch": 2, "n": 64, "cond": 0, "seed": 6, "case": "rankdef"}

benchmarks:
  - {"batch": 4, "n": 1000, "cond": 1, "seed": 7}
  - {"batch": 4, "n": 4000, "cond": 0, "seed": 8, "case": "mixed"}
'''


@pytest.mark.parametrize("strict", [False, True])
def test_gpumode_eval_stages_the_task_and_reads_the_runner(tmp_path: Path, strict: bool) -> None:
    """bench/gpumode_eval.py copies the files task.yml lists (a source outside the problem directory too), writes
    its tests in eval.py's grammar, reads what eval.py reports on POPCORN_FD, and fails where a mode fails."""
    problem = tmp_path / "problems" / "qr"
    problem.mkdir(parents=True)
    (tmp_path / "problems" / "shared").mkdir()
    (tmp_path / "problems" / "shared" / "utils.py").write_text(f"STRICT = {strict}\n")
    (problem / "task.yml").write_text(TASK_YML)
    (problem / "eval.py").write_text(FAKE_EVAL)
    (tmp_path / "export.py").write_text("def custom_kernel(a): return a\n")
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "gpumode_eval.py"), "--problem", str(problem),
                           "--submission", str(tmp_path / "export.py"), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == (1 if strict else 0), proc.stdout + proc.stderr
    test, bench = (json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{"))
    assert test["tests"] == ("1 of 2 passed" if strict else "2 of 2 passed")
    assert test["check"] == ("fail" if strict else "pass")
    assert [b["mean_ms"] for b in bench["benchmarks"]] == [1.0, 4.0] and bench["check"] == "pass"
    assert "| geomean | **2.000 ms** |" in proc.stdout


def test_gpumode_eval_runs_only_the_benchmarks_picked(tmp_path: Path) -> None:
    """--benchmarks keeps those of task.yml's benchmarks, by position; a position it does not have is one line."""
    problem = tmp_path / "problems" / "qr"
    problem.mkdir(parents=True)
    (tmp_path / "problems" / "shared").mkdir()
    (tmp_path / "problems" / "shared" / "utils.py").write_text("STRICT = False\n")
    (problem / "task.yml").write_text(TASK_YML)
    (problem / "eval.py").write_text(FAKE_EVAL)
    (tmp_path / "export.py").write_text("def custom_kernel(a): return a\n")

    def run(*picked: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(ROOT / "bench" / "gpumode_eval.py"), "--problem", str(problem),
                               "--submission", str(tmp_path / "export.py"), "--out", str(tmp_path / "out"),
                               "--modes", "benchmark", "--benchmarks", *picked],
                              capture_output=True, text=True, timeout=120)
    proc = run("1")
    bench = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("{")))
    assert proc.returncode == 0 and [b["mean_ms"] for b in bench["benchmarks"]] == [4.0], proc.stdout + proc.stderr
    assert "| geomean | **4.000 ms** |" in proc.stdout
    proc = run("0", "2")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert proc.stderr.strip().endswith("cannot stage the problem: no benchmark 2 (it lists 2, from 0)"), proc.stderr


def test_contest_pass_asks_for_the_problem_directory_in_one_line(tmp_path: Path) -> None:
    """bench/contest_pass.sh without PROBLEM (or with one that has no task.yml): one line, exit 2, nothing run."""
    for env in ({}, {"PROBLEM": str(tmp_path)}):
        proc = subprocess.run(["bash", str(ROOT / "bench" / "contest_pass.sh")], capture_output=True, text=True,
                              timeout=60, cwd=ROOT, env={**{k: v for k, v in os.environ.items() if k != "PROBLEM"},
                                                         "OUT": str(tmp_path / "out"), **env})
        assert proc.returncode == 2 and proc.stdout == "" and not (tmp_path / "out").exists()
        assert proc.stderr.strip() == "contest_pass.sh: set PROBLEM to the contest's problem directory (its task.yml " \
                                      "and eval.py)"


def test_qr_demo_makes_a_committed_repository_whose_config_loads(tmp_path: Path) -> None:
    """bench/lib.sh's qr_demo, the repository of the GPU passes' runs (contest_pass, export_pass, agents_pass): its
    evolve.toml loads (problem.guidance there too: contest_pass's first run on the H200 stopped on it), with the
    seeds asked for, a seed outside seed_kernels/ copied to its path, tune only, no confirmation, nothing left
    uncommitted, and a git identity for evolve's commits."""
    from evolver.records.config import load_config

    demo = tmp_path / "demo"
    proc = subprocess.run(["bash", "-c", f'source bench/lib.sh && qr_demo "{demo}" seed_kernels/tsqr_wy '
                                         "tests/climb_problem/seed"], capture_output=True, text=True, timeout=60,
                          cwd=ROOT, env={**os.environ, "OUT": str(tmp_path / "out")})
    assert proc.returncode == 0, proc.stderr
    config = load_config(demo / "evolve.toml", demo)
    assert [str(s) for s in config.problem.seeds] == ["seed_kernels/tsqr_wy", "tests/climb_problem/seed"]
    assert (demo / "tests" / "climb_problem" / "seed" / "kernel.py").is_file()
    assert config.evaluation.confirm_mode == "" and set(config.evolution.operators) == {"tune"}
    git = ["git", "-C", str(demo)]
    assert subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True).stdout == ""
    assert subprocess.run([*git, "config", "user.name"], capture_output=True, text=True).stdout.strip() == "bench"


def test_gpumode_eval_says_in_one_line_what_it_cannot_stage(tmp_path: Path) -> None:
    """A file task.yml lists that is not there: one line naming task.yml, exit 2, no traceback."""
    problem = tmp_path / "qr"
    problem.mkdir()
    (problem / "task.yml").write_text(TASK_YML)  # its utils.py source, ../shared/utils.py, does not exist here
    (problem / "eval.py").write_text(FAKE_EVAL)
    (tmp_path / "export.py").write_text("def custom_kernel(a): return a\n")
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "gpumode_eval.py"), "--problem", str(problem),
                           "--submission", str(tmp_path / "export.py"), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"gpumode_eval: {problem / 'task.yml'}: cannot stage the problem:"), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_run_stages_says_how_busy_the_gpu_was_under_each_kind_of_hold(tmp_path: Path) -> None:
    """bench/run_stages.py --busy: nvidia-smi's samples (the machine's local time) laid over the evaluations' holds of
    the GPU's lock (monotonic spans, the judge's `wall` offset), so that a pass says where the GPU sat idle."""
    from datetime import datetime
    from types import SimpleNamespace

    sys.path.insert(0, str(ROOT / "bench"))
    import run_stages

    base = datetime(2026, 12, 4, 14, 22, 0).timestamp()
    lock = {"wall": base - 100.0, "held": [["shared", 100.0, 101.0], ["exclusive", 101.0, 101.5],
                                            ["relaxed", 101.5, 102.0], ["exclusive", 102.0, 103.0]]}
    other = {"wall": base - 50.0, "held": [["shared", 51.5, 52.0]]}  # beside the first one's relaxed hold
    old = {"held": [["shared", 0.0, 1000.0]]}  # a judge without the offset: left out
    results = [(SimpleNamespace(details={"gpu_lock": g}), None) for g in (lock, other, old)]
    csv = tmp_path / "busy.csv"
    csv.write_text("".join(f"2026/12/04 14:22:{s:06.3f}, {p}\n" for s, p in
                           ((0.5, 40), (1.25, 10), (1.75, 60), (2.25, 20), (2.5, 30), (3.5, 0))) + "garbage, [N/A]\n")
    by = run_stages.busy_by_hold(run_stages.read_busy(csv), results)
    assert by == {"exclusive": [10.0, 20.0, 30.0], "relaxed": [60.0], "shared": [40.0], "none": [0.0]}, by


def test_run_stages_says_how_much_of_a_run_the_timed_chains_took(tmp_path: Path) -> None:
    """bench/run_stages.py: each evaluation's chain (its first exclusive hold to its last) on one clock, the share of
    the run they cover (overlaps counted once), and each one's wait from the end of its tests to its chain."""
    from types import SimpleNamespace

    sys.path.insert(0, str(ROOT / "bench"))
    import run_stages

    first = {"wall": 1000.0, "held": [["shared", 0.0, 2.0], ["exclusive", 3.0, 3.5], ["relaxed", 3.5, 4.0],
                                       ["exclusive", 4.0, 5.0], ["shared", 5.0, 5.2]]}  # chain 1003-1005
    second = {"wall": 2000.0, "held": [["shared", -999.0, -996.0], ["exclusive", -995.0, -993.0]]}  # 1005-1007
    third = {"wall": 1000.0, "held": [["exclusive", 9.0, 11.0]]}  # 1009-1011: no tests of its own to wait from
    results = [(SimpleNamespace(details={"gpu_lock": g}), None) for g in (first, second, third)]
    said = run_stages.timed_chains(results)
    assert said == ("timed chains: 3, mean 2.00 s, covering 6 of the 8 s from the first to the last (75%); from the "
                    "end of its tests to its chain an evaluation waited 1.00 s on average"), said
    assert run_stages.timed_chains(results[:1]) == ""
    candidates = [SimpleNamespace(id=f"0000{i}", subject=f"tune X={i}") for i in (1, 2, 3)]
    said = run_stages.slow_sessions([(SimpleNamespace(confirm=False, details={"gpu_lock": g, "timings": {
        "import_kernel_s": 0.1, "tests_s": 1.5}}), c) for g, c in zip((first, second, third), candidates)], most=1)
    assert said == ["test sessions (the first shared hold): 2, median 2.50 s, mean 2.50 s; the slowest:",
                    "  00002   3.00 s (import 0.1, tests 1.5): tune X=2"], said  # (the third has no shared hold)


def test_run_stages_says_what_the_gpu_lock_was_doing_over_the_run() -> None:
    """bench/run_stages.py: the span from the first hold to the last cut by what held the lock: exclusive over
    anything, relaxed over shared, shared holds counted by how many overlap, the gaps free."""
    from types import SimpleNamespace

    sys.path.insert(0, str(ROOT / "bench"))
    import run_stages

    first = {"wall": 100.0, "held": [["shared", 0.0, 4.0], ["exclusive", 4.0, 5.0], ["relaxed", 5.0, 6.0]]}
    second = {"wall": 100.0, "held": [["shared", 1.0, 3.0], ["shared", 5.0, 7.0], ["shared", 9.0, 10.0]]}
    third = {"wall": 90.0, "held": [["shared", 12.0, 13.0], ["shared", 12.5, 12.5]]}  # 102-103 on the wall clock
    results = [(SimpleNamespace(details={"gpu_lock": g}), None) for g in (first, second, third)]
    said = run_stages.occupancy(results)
    # 0-1 one, 1-2 two, 2-3 three, 3-4 one, 4-5 exclusive, 5-6 relaxed, 6-7 one, 7-9 free, 9-10 one (of 10 s)
    assert said == ("the GPU's lock over the 10 s from the first hold to the last: exclusive 10%, relaxed 10%, "
                    "shared by one 40%, shared by two 10%, shared by three or more 10%, free 20%"), said
    assert run_stages.occupancy([]) == ""


def test_run_stages_models_the_rate_of_more_evaluations_sharing_the_gpu() -> None:
    """bench/run_stages.py: a child costs its chain plus its shared holds over how many share; the seed and
    confirmations (judged cold, or in another mode) are left out."""
    from types import SimpleNamespace

    sys.path.insert(0, str(ROOT / "bench"))
    import run_stages

    def one(op: str, confirm: bool, shared: float, chain: float) -> tuple[object, object]:
        held = [["shared", 0.0, shared], ["exclusive", shared, shared + 0.5], ["relaxed", shared + 0.5, shared + 1.0],
                ["exclusive", shared + 1.0, shared + chain], ["shared", shared + chain, shared + chain + 1.0]]
        return SimpleNamespace(confirm=confirm, details={"gpu_lock": {"wall": 0.0, "held": held}}), SimpleNamespace(op=op)

    results = [one("tune", False, 2.0, 1.0), one("tune", False, 4.0, 2.0), one("seed", False, 9.0, 9.0),
               one("tune", True, 9.0, 9.0)]
    # chain 1.5 s, shared holds 3 + 5 = 4 s: 3600 / (1.5 + 4 / k)
    assert run_stages.rate_model(results) == (
        "modelled from its 2 children (chain 1.50 s, shared holds 4.00 s): an hour, 1,029 by two, 1,271 by three, "
        "1,440 by four sharing the GPU, if sharing did not lengthen the holds"), run_stages.rate_model(results)
    assert run_stages.rate_model(results[2:]) == ""


def test_a_pass_samples_how_busy_the_gpu_is_and_stops_its_sampler(tmp_path: Path) -> None:
    """bench/lib.sh's busy_sampling / busy_sampled (pipeline_pass.sh's runs) with a fake nvidia-smi: the samples, with
    their timestamps, land in busy_NAME.csv as run_stages.py --busy reads them, the mean in $busy_mean, and the
    sampler does not outlive the run (it is stopped where it was started, on the same shared helpers as `sampling`)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\nbusy=40\nwhile true; do echo \"2026/12/04 14:22:00.250, $busy\"; busy=60; sleep 0.05;"
                   " done\n")
    smi.chmod(0o755)
    out = tmp_path / "out"
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "OUT": str(out)}
    run = subprocess.run(["bash", "-c", f"source {ROOT}/bench/lib.sh; busy_sampling one; sleep 0.5; busy_sampled one;"
                          ' echo "mean: $busy_mean"; echo "left: $busy_sampler"'], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("mean: the GPU busy 5") and lines[0].endswith("samples"), lines  # 40 once, then 60s
    assert lines[1:] == ["left: "], lines
    assert not running(smi), "the sampler outlived its run"
    sys.path.insert(0, str(ROOT / "bench"))
    import run_stages

    samples = run_stages.read_busy(out / "busy_one.csv")
    assert len(samples) > 3 and samples[0][1] == 40.0 and {p for _, p in samples[1:]} == {60.0}, samples


def test_rate_plot_draws_each_run_as_it_was_written(tmp_path: Path) -> None:
    """bench/rate_plot.py: a step a result at its time since the run was made, confirmations as ticks, and a legend
    with the whole run's rate (here results at 60, 120 and 180 s after the record: 3 in 180 s, 60 an hour) and the
    modules its judges compiled."""
    from tests.conftest import CLOCK, Scripted, make_repo

    s = Scripted(make_repo(tmp_path / "repo"))
    s.store.set_meta(f"refs/evolve/runs/{s.run}", {**s.store.get_meta(f"refs/evolve/runs/{s.run}"),
                                                   "created": CLOCK - 600})
    for cid, parent in (("00001", None), ("00002", "00001"), ("00003", "00002")):
        s.add(cid, "seed" if parent is None else "tune", parent, f"x = {cid}\n",
              {"status": "ok", "score": 1.0, "details": {"nvrtc_cache": {"hits": 1, "compiled": int(cid)}}})
    s.store.append_note(s.commits["00001"], {"t": CLOCK - 600 + 90, "status": "ok", "score": 1.0, "confirm": "final"})
    out = tmp_path / "rate.svg"
    proc = subprocess.run([sys.executable, "bench/rate_plot.py", f"mine={tmp_path / 'repo'}", "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "mine: 3 in 180 s, 60 an hour, 6 NVRTC compiles" in proc.stdout
    text = out.read_text()
    points = text.split('<polyline fill="none" stroke="#1f77b4"')[1].split('points="')[1].split('"')[0].split()
    assert len(points) == 1 + 2 * 3  # the origin, then a step (along, then up) a result
    assert text.count('stroke="#1f77b4" stroke-width="2"/>') == 1 + 1  # the confirmation's tick, the legend's line


def test_clock_slack_says_what_the_slack_made_of_each_shape(tmp_path: Path) -> None:
    """Passed within the slack; beyond it a crash where the host's waits a call cover the excess, else a rejection
    (what `clocks_agree` decides); torch.geqrf's and the CPU self-test's results are left out."""
    def shape(label: str, median: float, excess: float, waited: float | None = None) -> dict[str, object]:
        return {"shape": f"{label} dense cond=1", "median_us": median, "unexplained_us": excess, "runs": 4,
                "host": {"waited_ms": waited}}
    gpu = {"name": "NVIDIA H200"}
    rows = [{"details": {"gpu": gpu, "shapes": [shape("640x512", 7500, 2900.0), shape("20x32", 15, 10.0)]}},
            {"details": {"gpu": gpu, "shapes": [shape("640x512", 7500, 3500.0, waited=16.0)]}},
            {"details": {"gpu": gpu, "shapes": [shape("640x512", 7500, 3600.0, waited=4.0)]}},
            {"details": {"gpu": gpu, "baseline": True, "shapes": [shape("640x512", 99000, 9e6)]}},
            {"details": {"gpu": "cpu", "shapes": [shape("20x32", 15, 9e6)]}}]
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps({"name": str(i), "result": r}) + "\n" for i, r in enumerate(rows)))
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "clock_slack.py"), str(results)], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    lines = {line.split()[0]: line for line in proc.stdout.splitlines()[2:]}
    assert set(lines) == {"20x32", "640x512"}, proc.stdout
    assert "passed 1" in lines["20x32"] and "9000000" not in proc.stdout
    assert lines["640x512"].split()[1] == "3" and "REJECTED 1, crash 1, passed 1" in lines["640x512"], proc.stdout
    assert "1000 us, REJECTED" in lines["640x512"], proc.stdout  # the largest: 3.6 ms over, 4 ms waited in 4 calls


def test_lock_sim_counts_evaluations_and_the_locks_time() -> None:
    """One evaluation a GPU never waits: its rate is an hour over its holds' sum, and its lock is never shared by two;
    with two, the shares still cover the run once; `lock_states` over a window counts the time outside every hold
    as free."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import lock_sim
        import run_stages
    finally:
        sys.path.remove(str(ROOT / "bench"))
    holds = {"outside": 0.5, "shared": 2.0, "calibrate": 0.5, "relaxed": 0.5, "timed": 0.5, "deferred": 0.5}
    alone = lock_sim.simulate(1, 1.2, 0.02, holds)
    assert 0.85 * 3600 / 4.5 <= alone["per_hour"] <= 3600 / 4.5, alone
    assert "shared by two" not in alone and "shared by three or more" not in alone, alone
    assert abs(sum(alone.values()) - alone["per_hour"] - 1) < 1e-6, alone
    two = lock_sim.simulate(2, 1.2, 0.02, holds)
    assert abs(sum(two.values()) - two["per_hour"] - 1) < 1e-6 and two["per_hour"] > 0, two
    spans = [("exclusive", 0.0, 1.0), ("shared", 0.5, 2.0), ("shared", 1.5, 3.0)]
    assert run_stages.lock_states(spans, 0.0, 4.0) == {"exclusive": 1.0, "shared by one": 1.5, "shared by two": 0.5,
                                                       "free": 1.0}
    assert run_stages.lock_states(spans) == {"exclusive": 1.0, "shared by one": 1.5, "shared by two": 0.5}


def test_timeline_says_what_each_stream_and_panel_did() -> None:
    """bench/timeline.py's report on a made-up trace of two look-ahead steps: each stream's busy time (overlaps
    counted once), a panel's run and its wait after the last kernel another stream finished before it (tile_panel's
    and tile_cluster's panels among them)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import timeline

    found = [("reg_cluster2", 7, 0.0, 60.0), ("tf32x3_vtc32", 7, 61.0, 66.0), ("tf32x3_update", 7, 66.0, 70.0),
             ("reg_cluster2", 7, 70.0, 160.0), ("tf32x3_vtc32", 9, 70.0, 140.0), ("tf32x3_update", 9, 141.0, 200.0),
             ("tf32x3_vtc32", 7, 200.0, 205.0), ("tf32x3_update", 7, 205.0, 220.0), ("tile_cluster4", 7, 220.0, 280.0)]
    lines = timeline.report(found, steps=3)
    assert lines[0] == "9 kernels, 280.0 us from the first kernel's start to the last one's end"
    assert "  stream 7: 7 kernels, busy 239.0 us" in lines and "  stream 9: 2 kernels, busy 129.0 us" in lines
    assert "  any stream busy 279.0 us" in lines  # 0-60, 61-200, 200-280
    assert lines[-2].startswith("  panel   2: tile_cluster4") and "waited   20.0 us after tf32x3_update" in lines[-2]
    assert lines[-1] == ("  3 panels: ran 210.0 us (median 60.0), waited 20.0 us (median 0.0); between panels' "
                         "starts, median 110.0 us")


@pytest.mark.parametrize("overrides, panel", [({}, "tile_panel.cu"), ({"RP_TILE": "0"}, "reg_panel.cu")])
def test_cluster_trace_patches_the_seeds_own_register_panel_and_reads_its_lines(overrides: dict[str, str],
                                                                               panel: str) -> None:
    """bench/cluster_trace.py: its copy of the seed differs from the seed only by the two clock reads and the line
    each block prints, in the file whose clustered panel the copy launches (tile_panel.cu, or reg_panel.cu with
    RP_TILE = 0; anchored on the file's own lines: a change there must not leave the probe timing nothing), and its
    summary tells a late cluster from a slow one."""
    sys.path.insert(0, str(ROOT / "bench"))
    import cluster_trace

    copy = cluster_trace.traced_copy({"LOOKAHEAD_BELOW": "0", **overrides})
    seed_dir = ROOT / "seed_kernels" / "tsqr_wy"
    for name in ("tile_panel.cu", "reg_panel.cu"):
        seed, traced = seed_dir / name, copy / name
        added = [line for line in traced.read_text().splitlines() if line not in seed.read_text().splitlines()]
        if name != panel:
            assert not added, (name, added)
            continue
        assert len(added) == 5 and sum("globaltimer" in line for line in added) == 2, added
        assert added[1].lstrip().startswith("asm volatile") and "rc_t0" in added[1], added  # at the kernel's start
    assert "LOOKAHEAD_BELOW = 0" in (copy / "kernel.py").read_text()
    late = [f"rc {mat} {rank} 0 {start} {start + 60000}" for mat, start in ((0, 1000), (1, 26000)) for rank in range(8)]
    said = cluster_trace.summary(late)
    assert "a cluster's span median 60.0 us" in said and "the clusters' starts apart median 25.0 us" in said, said
    assert "span (first start to last end) median 85.0 us" in said, said


def test_panel_probes_dissect_finds_each_text_it_cuts() -> None:
    """bench/panel_probe.py --dissect times reg_cluster1 with parts of its column cut out by their text (common.cu's
    cluster_sums since session 58): each text must be in the module's source once, or the probe stops on a GPU (its
    cut of the stores had matched nothing since CLUSTER_MBAR changed them)."""
    import ast

    probe = (ROOT / "bench" / "panel_probe.py").read_text()
    cuts = next(node.value for node in ast.parse(probe).body
                if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "CUTS")
    seed = ROOT / "seed_kernels" / "tsqr_wy"
    source = (seed / "common.cu").read_text() + (seed / "reg_panel.cu").read_text()  # kernel.py's _REG_SOURCE
    pairs = [pair for pairs in ast.literal_eval(cuts).values() for pair in pairs]
    assert len(pairs) == 4 and all(source.count(text) == 1 for text, _ in pairs), pairs
