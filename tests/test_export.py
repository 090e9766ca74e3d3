"""`evolve export --format gpumode`: a candidate as one file for the contest, within the judge's own rules for
candidates; its kernels' arguments laid out as their declarations say, and on a GPU (marked `gpu`) the file
judged ok; what cannot be carried over is refused in one line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evolver.commands.export import ExportError, export_dir
from evolver.records.store import Store
from evolver.search.tunables import find_tunables
from qrjudge import guard
from tests.conftest import ROOT, git

SEEDS = ROOT / "seed_kernels"


@pytest.mark.parametrize("seed", ["blocked_wy", "naive", "tsqr_wy"])
def test_a_seed_becomes_one_file_the_judge_would_accept(tmp_path: Path, seed: str) -> None:
    text = export_dir(SEEDS / seed, ["evolve candidate r1/00001"])
    assert text.startswith("# evolve candidate r1/00001\n# tunables (frozen): ")
    assert not find_tunables({"kernel.py": text})  # the values stay, the annotations go
    assert "import cupy" not in text and "_EVOLVE_FILES = {\n    '" in text
    for source in (SEEDS / seed).glob("*.cu"):  # tsqr_wy reads four, for its three modules
        assert f"'{source.name}': " in text
    compile(text, "kernel.py", "exec")
    (tmp_path / "kernel.py").write_text(text)  # a kernel directory of one file: what `evolve try` judges
    assert guard.scan(tmp_path) == []


def test_the_frozen_values_are_the_candidates(tmp_path: Path) -> None:
    kernel = tmp_path / "k"
    shutil.copytree(SEEDS / "blocked_wy", kernel)
    (kernel / "kernel.py").write_text((kernel / "kernel.py").read_text().replace("NB = 32  #", "NB = 16  #"))
    text = export_dir(kernel, [])
    assert "NB=16, " in text.splitlines()[0] and "\nNB = 16\n" in text


@pytest.mark.parametrize("change, reason", [
    (lambda k: (k / "helpers.py").write_text("X = 1\n"), "helpers.py: a module of the candidate's own"),
    (lambda k: _prepend(k, "import numpy\n"), "kernel.py:1: `import numpy` cannot be exported"),
    (lambda k: _prepend(k, "from base import custom_kernel\n"), "kernel.py:1: `from base import ...` cannot be exported"),
    (lambda k: _append(k, "\nFUSED = cp.ElementwiseKernel('float32 x', 'float32 y', 'y = x')\n"),
     "cp.ElementwiseKernel: export's CuPy stand-in has"),
    (lambda k: _append(k, "\n_EVOLVE_STREAMS = {}\n"), "kernel.py defines _EVOLVE_STREAMS, a name the exported"),
    (lambda k: (k / "kernel.py").rename(k / "sort.py"), "its kernel directory has no kernel.py (the one-file form"),
])
def test_what_cannot_be_carried_over_is_one_line(tmp_path: Path, change: object, reason: str) -> None:
    kernel = tmp_path / "k"
    shutil.copytree(SEEDS / "blocked_wy", kernel)
    change(kernel)  # type: ignore[operator]
    with pytest.raises(ExportError) as caught:
        export_dir(kernel, [])
    assert reason in str(caught.value) and "\n" not in str(caught.value), str(caught.value)


def _prepend(kernel: Path, line: str) -> None:
    (kernel / "kernel.py").write_text(line + (kernel / "kernel.py").read_text())


def _append(kernel: Path, text: str) -> None:
    (kernel / "kernel.py").write_text((kernel / "kernel.py").read_text() + text)


def test_each_argument_reaches_the_kernel_as_its_declared_c_type() -> None:
    """The stand-in launches through one extension for every file, so each kernel's parameters are read from
    its declaration: a layout letter each (pointers and 64-bit integers in eight bytes, int in four, ...)."""
    shim: dict[str, object] = {}
    exec((ROOT / "evolver" / "commands" / "export_shim.txt").read_text(), shim)  # its helpers, as the file has them
    code = "".join((SEEDS / "tsqr_wy" / name).read_text() for name in ("common.cu", "cols.cu", "tf32x3.cu"))
    kernels = dict(shim["_evolve_kernels"](code))  # type: ignore[operator]
    letter = shim["_evolve_code"]

    def layout(name: str) -> str:
        return "".join(letter(c, k) for c, k in kernels[name])  # type: ignore[operator]

    assert layout("col_panel4") == "qqqiqqiqiiii" and layout("tf32x3_vtc32") == "qiqiqiqiiqi"
    assert [letter(c, k) for c, k in [("unsigned long long", "int"), ("const unsigned", "int"), ("double", "float"),
                                      ("float", "float"), ("bool", "int"), ("const float *", "ptr")]] == \
        ["Q", "I", "d", "f", "?", "q"]  # type: ignore[operator]
    with pytest.raises(TypeError, match="numbers and pointers only"):
        letter("Params", "int")  # type: ignore[operator]


def test_a_source_nvrtc_refuses_is_a_compile_error_with_nvrtcs_log() -> None:
    """The stand-in raises NVRTC's refusal as CuPy does (a CompileException with the whole log), so the judge's
    verdict names the error where it had kept the message's first line only (`NVRTC_ERROR_COMPILATION`)."""
    from qrjudge.runner import classify

    shim: dict[str, object] = {}
    exec((ROOT / "evolver" / "commands" / "export_shim.txt").read_text(), shim)

    class Refusing:  # the extension as NVRTC answers a source it does not compile (TORCH_CHECK's message)
        def compile(self, code: str, name: str, flags: list[str]) -> bytes:
            raise RuntimeError(f"{name}: NVRTC_ERROR_COMPILATION\n{name}(3): error: identifier \"x\" is undefined\n")

    shim["_evolve_api"], shim["_evolve_arch"] = Refusing, lambda: "--gpu-architecture=sm_90"
    with pytest.raises(RuntimeError) as raised:
        shim["_EvolveRawModule"]("__global__ void k() { x; }")  # type: ignore[operator]
    verdict = classify(raised.value)
    assert verdict["status"] == "compile_error", verdict
    assert 'error: identifier "x" is undefined' in verdict["message"], verdict


def test_the_stand_in_compiles_for_the_architecture_a_source_names() -> None:
    """A module whose options name an architecture (wgmma.cu's sm_90a: wgmma has no other target) is compiled for
    that one alone; any other for the GPU's own (CuPy's way)."""
    shim: dict[str, object] = {}
    exec((ROOT / "evolver" / "commands" / "export_shim.txt").read_text(), shim)
    seen: list[list[str]] = []

    class Recording:  # the extension, as far as a module's making goes
        def compile(self, code: str, name: str, flags: list[str]) -> bytes:
            seen.append(flags)
            return b""

        def load(self, image: bytes) -> int:
            return 1

    shim["_evolve_api"], shim["_evolve_arch"] = Recording, lambda: "--gpu-architecture=sm_90"
    for options in (("--std=c++17", "-arch=sm_90a"), ("--std=c++17",)):
        shim["_EvolveRawModule"]("__global__ void k() {}", options=options)  # type: ignore[operator]
    architectures = [[f for f in flags if f.startswith(("-arch", "--gpu-architecture"))] for flags in seen]
    assert architectures == [["-arch=sm_90a"], ["--gpu-architecture=sm_90"]], seen


@pytest.mark.gpu
@pytest.mark.parametrize("seed", ["blocked_wy", "tsqr_wy"])
def test_the_exported_file_passes_the_judge_on_a_gpu(tmp_path: Path, seed: str) -> None:
    """The exported file judged as a kernel directory of one file (`quick`): the stand-in's one extension built,
    every module compiled by NVRTC and loaded, the kernels launched with their arguments as declared."""
    one = tmp_path / "one"
    one.mkdir()
    (one / "kernel.py").write_text(export_dir(SEEDS / seed, []))
    proc = subprocess.run([sys.executable, "-m", "qrjudge.supervisor", "--kernel-dir", str(one), "--mode", "quick"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["status"] == "ok", result.get("error")
    print(seed, result["score"], result.get("timings"))


def test_evolve_export_writes_the_candidate_with_its_score_and_judge(tmp_path: Path) -> None:
    from evolver.records.candidates import format_message

    repo = tmp_path / "repo"
    shutil.copytree(SEEDS, repo / "seed_kernels")
    (repo / "evolve.toml").write_text('[problem]\nkernel_dir = "kernel"\nseeds = ["seed_kernels/blocked_wy"]\n'
                                      '[evaluation]\nbuiltin = "qr"\n')
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "qr")
    store = Store(repo)
    base = store.head_commit()
    store.set_meta("refs/evolve/runs/r1", {"run": "r1", "base": base, "kernel_dir": "kernel"})
    files = {p.name: p.read_bytes() for p in (SEEDS / "blocked_wy").iterdir() if p.is_file()}
    commit = store.write_candidate([base], base, "kernel", files, format_message(
        "evolve r1/00001: seed", "", {"Id": "00001", "Run": "r1", "Op": "seed", "Island": "0"}))
    store.create_branch("refs/heads/evolve/r1/00001", commit)
    store.append_note(commit, {"t": 1.0, "status": "ok", "score": 5830.0, "harness": "abc123", "gpu": "NVIDIA H200",
                               "details": {"unit": "us", "judge": 3, "mode": "full"}})
    out = subprocess.run([sys.executable, "-m", "evolver", "export", "1", "--format", "gpumode", "-o", "sub.py"],
                         cwd=repo, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = (repo / "sub.py").read_text()
    assert text.startswith(f"# evolve candidate r1/00001 (commit {commit[:12]})\n"
                           "# score 5830 us (full mode; judge abc123, anti-cheat version 3; on NVIDIA H200)\n")
    assert "wrote sub.py" in out.stdout and git(repo, "status", "--porcelain") == "?? sub.py\n"
    nested = subprocess.run([sys.executable, "-m", "evolver", "export", "1", "-o", "out/contest/sub.py"], cwd=repo,
                            capture_output=True, text=True, timeout=120)
    def body(exported: str) -> list[str]:  # all but the export's minute
        return [line for line in exported.splitlines() if not line.startswith("# exported ")]
    assert nested.returncode == 0 and body((repo / "out/contest/sub.py").read_text()) == body(text), nested.stderr
    into_a_folder = subprocess.run([sys.executable, "-m", "evolver", "export", "1", "-o", "out"], cwd=repo,
                                   capture_output=True, text=True, timeout=120)
    assert into_a_folder.returncode != 0 and "Traceback" not in into_a_folder.stderr
    assert into_a_folder.stderr.strip().count("\n") == 0 and "cannot write out" in into_a_folder.stderr


@pytest.mark.slow
def test_check_judges_the_exported_file_as_a_one_file_kernel(tmp_path: Path) -> None:
    """`--check` on the CPU: a problem judged by the QR harness's CPU self-test (`--device cpu --mode tiny`),
    whose seed is a plain-torch kernel.py; the exported file is judged as a kernel directory of one file
    and compared with the candidate's own score (CPU timings mean nothing: only the path is checked here)."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "qrjudge", repo / "qrjudge", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests" / "cpu_kernel", repo / "seeds" / "householder")
    (repo / "evolve.toml").write_text(
        '[problem]\nkernel_dir = "kernel"\nseeds = ["seeds/householder"]\n[evaluation]\n'
        'command = "{python} -m qrjudge --kernel-dir {kernel_dir} --device cpu --mode tiny --stall 60"\n'
        'files = ["qrjudge"]\ngpus = []\ntimeout_s = 120\n[evolution]\noperators = { tune = 1.0 }\n')
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the QR judge's CPU self-test as a problem")
    started = subprocess.run([sys.executable, "-m", "evolver", "start", "--max-candidates", "1"], cwd=repo,
                             capture_output=True, text=True, timeout=300)
    assert started.returncode == 0 and " ok " in started.stdout, started.stdout + started.stderr
    out = subprocess.run([sys.executable, "-m", "evolver", "export", "1", "-o", "one.py", "--check"], cwd=repo,
                         capture_output=True, text=True, timeout=300)
    assert "check: the exported file is ok, " in out.stdout and "against the candidate's " in out.stdout, \
        out.stdout + out.stderr
    assert out.returncode in (0, 1) and "Traceback" not in out.stderr
