"""The compile cache (qrjudge/nvrtc_cache.py): compiles served by the judge's own server and shared across
evaluations, written only by it. With a stand-in for CuPy's NVRTC call (tests/stub_cupy), through the judge's
`compile_server` and the runner's `install`, in a process of its own: the first compile of a source is the
server's, the second a hit; another source or option is another entry; a failing compile fails in the runner
with NVRTC's own error; and a process confined as the runner is cannot write the cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qrjudge import foresight, nvrtc_cache, nvrtc_client
from tests.conftest import ROOT

STUB = ROOT / "tests" / "stub_cupy"

CLIENT = r"""
import json, os
from qrjudge import link, nvrtc_client
hidden = tuple(filter(None, [os.environ.get("HIDE")]))  # as the judge names its own directory and the candidate's
fds = link.compile_server(hidden)  # none: the runner compiles as it always did
os.environ["HOME"] += ".runner"  # the runner's home is not the judge's (link.runner_env)
client = nvrtc_client.install(*fds) if fds else None
if os.environ.get("CONFINE"):  # as the runner is: everything read-only but its scratch
    from qrjudge import isolation
    isolation.confine([os.environ["CONFINE"]])
from cupy.cuda import compiler
nvrtc = compiler._compile_using_nvrtc_no_warning
out = {"me": os.getpid()}
out["a"] = nvrtc("src A", ("-DX=1",), 90, "k.cu", None, None, False, None, None)[0].decode()
out["again"] = nvrtc("src A", ("-DX=1",), 90, "k.cu", None, None, False, None, None)[0].decode()
out["option"] = nvrtc("src A", ("-DX=2",), 90, "k.cu", None, None, False, None, None)[0].decode()
out["mapping"] = nvrtc("src B", (), 90, "k.cu", ["f<1>"], None, False, None, None)[1]
try:
    nvrtc("FAIL", (), 90, "bad.cu", None, None, False, None, None)
except compiler.CompileException as exc:
    out["error"] = str(exc)
if os.environ.get("KILL_WORKER"):
    out["after_death"] = nvrtc("DIE", (), 90, "k.cu", None, None, False, None, None)[0].decode()
    out["later"] = nvrtc("src C", (), 90, "k.cu", None, None, False, None, None)[0].decode()
if os.environ.get("THREADS"):  # a candidate building its modules side by side
    import threading, time
    n = int(os.environ["THREADS"])
    got = [None] * n
    def build(i):
        got[i] = nvrtc(f"SLOW {i}", (), 90, "k.cu", None, None, False, None, None)[0].decode()
    began = time.monotonic()
    threads = [threading.Thread(target=build, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out["threads"], out["threads_s"] = got, time.monotonic() - began
if os.environ.get("SERVER_DIES"):  # the server killed while three threads wait for their compiles
    import signal, threading, time
    def ours(pid):  # the compile server this process started (another process may end while it is read)
        try:
            return (b"qrjudge.nvrtc_cache" in open(f"/proc/{pid}/cmdline", "rb").read()
                    and f"PPid:\t{os.getpid()}\n" in open(f"/proc/{pid}/status").read())
        except OSError:
            return False
    server = next(int(p) for p in os.listdir("/proc") if p.isdigit() and ours(p))
    got = [None] * 3
    def build(i):
        got[i] = nvrtc(f"SLOW dies {i}", (), 90, "k.cu", None, None, False, None, None)[0].decode()
    threads = [threading.Thread(target=build, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    os.kill(server, signal.SIGKILL)
    for t in threads:
        t.join(timeout=30)
    out["died"] = got
    out["after"] = nvrtc("src D", (), 90, "k.cu", None, None, False, None, None)[0].decode()
if os.environ.get("POISON"):  # the candidate names an entry as the file CuPy writes its source to
    entry = os.environ["POISON"]
    try:
        nvrtc("poison", (), 90, entry, None, None, False, None, None)
    except OSError as exc:  # refused by the server's worker, then compiled here: the runner cannot write it either
        out["refused_here"] = exc.errno
    out["entry_after"] = open(entry, "rb").read().decode()
if os.environ.get("FORESEE"):  # a module asked for, then the two others its first use leads to, one by one
    import hashlib, time
    began, nb = time.time(), os.environ["FORESEE"]
    def named(source, options):  # as CuPy names a program: after its own cache key
        return hashlib.sha1((source + str(options)).encode()).hexdigest() + ".cubin.cu"
    out["foreseen"] = [nvrtc(f"SLOW {m}", (f"-DNB={nb}", "-DW=8"), 90, named(m, nb), None, None, False, None, None)[0]
                       .decode() for m in "ABC"]
    out["foreseen_at"], out["foreseen_s"] = began, time.time() - began
if os.environ.get("HUSH"):  # NB=32: three modules; NB=16: the first, whose two others are foreseen (a second each)
    import time
    nb = os.environ["HUSH"]
    for m in ("QA", "SLOW QB", "SLOW QC")[:3 if nb == "32" else 1]:
        nvrtc(m, (f"-DNB={nb}",), 90, "k.cu", None, None, False, None, None)
    if os.environ.get("QUIET_NOW"):  # as the runner does before the timed calls
        client.quiet()
    time.sleep(1.6)
if os.environ.get("HEADER"):  # a header the candidate writes (or a person edits) between two like requests
    for text in ("one", "two"):
        open(os.environ["HEADER"], "w").write(text)
        out[text] = nvrtc(f"INCLUDE {os.environ['HEADER']}", (), 90, "k.cu", None, None, False, None, None)[0].decode()
out["stats"] = client.stats() if client else None
print(json.dumps(out))
"""


def run_client(cache: Path, cwd: Path = ROOT, **env: str) -> dict:
    home = cache.parent / "home"  # a fresh home, as an evaluation's sandbox gives: CuPy makes a directory in it
    home.mkdir(exist_ok=True)
    proc = subprocess.run([sys.executable, "-c", CLIENT], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": f"{STUB}:{ROOT}", "EVOLVE_NVRTC_CACHE": str(cache),
                               "HOME": str(home), "CUPY_CACHE_DIR": "", **env})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    if subprocess.run(["unshare", "-Ur", "true"], capture_output=True).returncode != 0:
        pytest.skip("no user namespaces here: the server will not run unconfined")
    (tmp_path / "cache").mkdir()
    return tmp_path / "cache"


def test_compiles_are_the_servers_then_hits_and_a_failure_is_nvrtcs_own(cache: Path) -> None:
    first = run_client(cache)
    assert not first["a"].startswith(f"pid {first['me']}:")  # compiled by the server, not in this process
    assert first["again"] == first["a"] and first["option"] != first["a"]
    assert first["mapping"] == {"f<1>": "_Z4f<1>"}
    assert "identifier FAIL is undefined" in first["error"]  # the server's failure, compiled again here
    assert first["stats"]["compiled"] == 3 and first["stats"]["hits"] == 1
    second = run_client(cache)  # the next evaluation: every entry is there
    assert second["a"] == first["a"] and second["stats"]["hits"] == 4 and second["stats"]["compiled"] == 0
    assert len(list(cache.glob("*/*.bin"))) == 3


def test_a_compile_that_kills_its_worker_is_compiled_in_the_runner_and_the_server_goes_on(cache: Path) -> None:
    said = run_client(cache, KILL_WORKER="1")
    assert said["after_death"].startswith(f"pid {said['me']}:")  # compiled here
    assert not said["later"].startswith(f"pid {said['me']}:")  # and the next one served again
    assert "worker ended without a result" in said["stats"]["why"], said["stats"]


def test_compiles_asked_from_several_threads_run_side_by_side(cache: Path) -> None:
    """Each thread gets its own module (the replies are handed to whoever asked), compiled by the server, at most
    WORKERS at once: six one-second compiles run four at a time, then two (the compiles' own spans say so; the wall
    time, 2 s and more, depends on how loaded the machine is: 6.8 s once on the 2-core CI machine)."""
    said = run_client(cache, THREADS="6")
    assert all(got.startswith("pid ") and f"SLOW {i} " in got and not got.startswith(f"pid {said['me']}:")
               for i, got in enumerate(said["threads"])), said["threads"]
    assert nvrtc_cache.WORKERS == 4 and said["threads_s"] >= 2.0, said["threads_s"]  # two rounds at least
    spans = [tuple(map(float, got.rsplit(" from ", 1)[1].split(" to "))) for got in said["threads"]]
    at_once = max(sum(a <= start < b for a, b in spans) for start, _ in spans)
    assert at_once == nvrtc_cache.WORKERS, spans  # as many as it may run, never more
    assert said["stats"]["compiled"] == 3 + 6, said["stats"]  # (and the three of the script before them)


def test_threads_waiting_on_a_server_that_dies_all_compile_themselves(cache: Path) -> None:
    """Nothing hangs: every thread waiting for a reply when the server goes is told, and compiles in the runner;
    the server is not asked again."""
    said = run_client(cache, SERVER_DIES="1")
    assert all(got is not None and got.startswith(f"pid {said['me']}:") for got in said["died"]), said["died"]
    assert said["after"].startswith(f"pid {said['me']}:") and said["stats"]["why"], said["stats"]


def test_a_request_cannot_write_an_entry_through_the_compilers_file_name(cache: Path, tmp_path: Path) -> None:
    first = run_client(cache)
    entry = next(p for p in cache.glob("*/*.bin") if p.read_bytes() == first["a"].encode())
    (tmp_path / "scratch").mkdir()
    said = run_client(cache, POISON=str(entry), CONFINE=str(tmp_path / "scratch"), TMPDIR=str(tmp_path / "scratch"))
    assert said["entry_after"] == first["a"]  # the server's worker could not write it, nor the runner
    assert said["stats"]["why"] and said.get("refused_here")


def test_a_header_in_the_candidates_directory_is_read_as_it_is_at_each_compile(cache: Path, tmp_path: Path) -> None:
    """The key is the request, not the files NVRTC reads beside it: a compile that reads a hidden directory (the
    runner's, the candidate's) fails in the server's worker and is compiled in the runner, so an edited header is
    never served the binary of the one before; one that reads only the installation is served."""
    kernel = tmp_path / "kernel"
    kernel.mkdir()
    said = run_client(cache, HEADER=str(kernel / "common.cuh"), HIDE=str(kernel))
    assert "= one " in said["one"] and "= two " in said["two"], said
    assert said["one"].startswith(f"pid {said['me']}:") and said["two"].startswith(f"pid {said['me']}:")
    assert "cannot open source file" in said["stats"]["why"]
    said = run_client(cache, cwd=kernel, HEADER="common.cuh", HIDE=str(kernel))  # relative, from the judge's directory
    assert "= one " in said["one"] and "= two " in said["two"], said
    installed = tmp_path / "installed.cuh"  # a header outside every hidden directory: served, then a hit
    said = run_client(cache, HEADER=str(installed), HIDE=str(kernel))
    assert not said["one"].startswith(f"pid {said['me']}:") and "= one " in said["one"]
    assert nvrtc_cache.sealed((str(cache.parent), str(kernel), str(tmp_path / "none")), cache) == (str(kernel),)


def test_without_the_cache_or_with_an_unconfined_runner_the_runner_compiles_itself(cache: Path) -> None:
    unconfined = run_client(cache, EVOLVE_RUNNER_CONFINE="off")
    assert unconfined["a"].startswith(f"pid {unconfined['me']}:") and not list(cache.glob("*/*.bin"))
    off = run_client(cache / "missing")
    assert off["a"].startswith(f"pid {off['me']}:")


def test_a_process_confined_as_the_runner_cannot_write_the_cache(cache: Path, tmp_path: Path) -> None:
    run_client(cache)
    entry = next(cache.glob("*/*.bin"))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    attempt = r"""
import sys
from pathlib import Path
from qrjudge import isolation
isolation.confine([sys.argv[1]])
entry = Path(sys.argv[2])
recipe = Path(sys.argv[3])  # what the next evaluations' servers foresee from (qrjudge/foresight.py)
for what, act in (("rewrite", lambda: entry.write_bytes(b"poison")), ("add", lambda: (entry.parent / "x.bin").write_bytes(b"")),
                  ("remove", entry.unlink), ("recipe", lambda: recipe.write_text("[]")),
                  ("scratch", lambda: (Path(sys.argv[1]) / "ok").write_text("ok"))):
    try:
        act()
        print(what, "done")
    except OSError as exc:
        print(what, "refused", exc.errno)
"""
    recipe = next((cache / foresight.RECIPES).glob("*.json"))
    proc = subprocess.run([sys.executable, "-c", attempt, str(scratch), str(entry), str(recipe)], capture_output=True,
                          text=True, timeout=60, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    said = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert said.get("scratch") == "done", proc.stdout + proc.stderr
    assert all(said.get(w, "").startswith("refused") for w in ("rewrite", "add", "remove", "recipe")), said
    assert not entry.read_bytes().startswith(b"poison")


def test_keys_cover_the_whole_request_and_the_compiler_and_pruning_keeps_the_newest(tmp_path: Path) -> None:
    request = {"source": "s", "options": ["-DX=1"], "arch": 90}
    assert nvrtc_cache.key(request, "nvrtc (13, 0)") != nvrtc_cache.key(request, "nvrtc (12, 8)")
    assert nvrtc_cache.key(request, "v") != nvrtc_cache.key({**request, "arch": 100}, "v")
    for age, name in enumerate(("old", "mid", "new")):
        path = tmp_path / "ab" / f"{name}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"x" * 100)
        path.with_suffix(".json").write_text("{}")
        os.utime(path, (1000 + age, 1000 + age))
    nvrtc_cache.prune(tmp_path, keep=200)
    assert sorted(p.stem for p in tmp_path.glob("*/*.bin")) == ["mid", "new"]
    assert not (tmp_path / "ab" / "old.json").exists()


def test_a_tune_moves_next_modules_are_compiled_before_it_asks_for_them(cache: Path) -> None:
    """An evaluation asks for three one-second modules one after the other, with NB=32; the next, with NB=16,
    asks for the same three the same way: its server foresees the second and third from the first (the earlier
    one changed by NB alone) and compiles them beside it, so it waits for one compile, not three."""
    first = run_client(cache, FORESEE="32")
    assert first["foreseen_s"] >= 3.0 and first["stats"]["compiled"] == 3 + 3, first
    second = run_client(cache, FORESEE="16")
    assert all(f"SLOW {m} -DNB=16 -DW=8 " in got and not got.startswith(f"pid {second['me']}:")
               for m, got in zip("ABC", second["foreseen"])), second["foreseen"]
    began = [float(got.rsplit(" from ", 1)[1].split(" to ")[0]) for got in second["foreseen"]]
    assert max(began) - began[0] < 0.9, began  # B and C compiled beside A (asked for, they would follow it)
    assert second["foreseen_s"] < first["foreseen_s"], (first["foreseen_s"], second["foreseen_s"])  # (not a wall
    # time of its own: a loaded 2-core machine stretches those, as it stretched another test's to 6.8 s once)
    recipes = list((cache / foresight.RECIPES).glob("*.json"))
    assert len(recipes) == 2 and all("SLOW C" in r.read_text() for r in recipes)


def test_cupys_program_names_are_one_name_and_a_candidates_own_are_kept() -> None:
    """CuPy names each program after its cache key, so that no two requests would be alike but for their options
    (foresight could never guess one): the server compiles them all under one name."""
    assert nvrtc_client.program_name("04d8c4f3894ea05c541453b2d956dd8928f59d0d.cubin.cu") == "kernel.cu"
    assert nvrtc_client.program_name("04d8c4f3894ea05c541453b2d956dd8928f59d0d.cu") == "kernel.cu"
    for own in ("k.cu", "/tmp/x/04d8c4f3894ea05c541453b2d956dd8928f59d0d.cubin.cu", "04d8.cubin.cu"):
        assert nvrtc_client.program_name(own) == own


def test_foresight_changes_the_nearest_earlier_requests_options_and_nothing_else() -> None:
    def req(source: str, *options: str, arch: int = 90) -> dict:
        return {"source": source, "options": list(options), "arch": arch, "filename": "k.cu"}

    parent = [req("qr", "-DNB=32", "-DW=8"), req("qr", "-DNB=32", "-DW=16"), req("cols", "-DNB=32", "-DW=8"),
              req("tf32")]
    sibling = [req("qr", "-DNB=16", "-DW=8", "-DG=256"), req("cols", "-DNB=16", "-DW=8", "-DG=256")]
    asked = req("qr", "-DNB=16", "-DW=8")
    assert foresight.foresee(asked, [sibling, parent]) == [
        req("qr", "-DNB=16", "-DW=8"), req("qr", "-DNB=16", "-DW=16"), req("cols", "-DNB=16", "-DW=8")]
    assert foresight.foresee(req("qr", "-DNB=16", "-DW=8", arch=80), [parent]) == []  # another GPU: nothing
    assert foresight.foresee(req("other", "-DNB=16", "-DW=8"), [parent]) == []  # another source: nothing
    assert foresight.foresee(asked, [[{"options": "-DNB=32"}, 7], parent])[1] == req("qr", "-DNB=16", "-DW=16")


def test_recipes_are_written_whole_read_newest_first_and_pruned(tmp_path: Path) -> None:
    for i in range(5):
        foresight.write(tmp_path, f"s{i}", [{"options": [str(i)]}])
        os.utime(tmp_path / foresight.RECIPES / f"s{i}.json", (i, i))
    (tmp_path / foresight.RECIPES / "torn.json").write_text("[{")
    os.utime(tmp_path / foresight.RECIPES / "torn.json", (9, 9))
    assert [r[0]["options"] for r in foresight.read(tmp_path, "s4")] == [["3"], ["2"], ["1"], ["0"]]
    foresight.prune(tmp_path, keep=2)
    assert sorted(p.name for p in (tmp_path / foresight.RECIPES).iterdir()) == ["s4.json", "torn.json"]


def test_sharing_the_verdict_says_what_the_runner_that_tested_compiled(cache: Path, tmp_path: Path) -> None:
    """On a shared GPU the candidate is imported twice (tested, then timed): the second finds its modules compiled
    already, so the verdict's compile stats are the first runner's, where the compiles happened."""
    kernel = tmp_path / "kernel"
    kernel.mkdir()
    (kernel / "kernel.py").write_text((ROOT / "tests" / "cpu_kernel" / "kernel.py").read_text() + (
        "\nfrom cupy.cuda import compiler\n"
        "BUILT = compiler._compile_using_nvrtc_no_warning('src K', (), 90, 'k.cu', None, None, False, None, None)\n"))
    locks = tmp_path / "locks"
    locks.mkdir()
    proc = subprocess.run([sys.executable, "-m", "qrjudge", "--kernel-dir", str(kernel), "--device", "cpu", "--mode",
                           "tiny"], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": f"{STUB}:{ROOT}", "EVOLVE_NVRTC_CACHE": str(cache),
                               "EVOLVE_GPU_LOCKS": str(locks), "CUDA_VISIBLE_DEVICES": "0"})
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["status"] == "ok", (result.get("error"), proc.stderr[-2000:])
    assert result["gpu_lock"] and result["nvrtc_cache"]["compiled"] == 1, result["nvrtc_cache"]


@pytest.mark.parametrize("quiet", [False, True])
def test_a_quiet_server_stops_its_guesses_before_the_timed_calls(tmp_path: Path, quiet: bool) -> None:
    """The runner quiets its server before anything is timed: the two one-second compiles it foresaw are stopped
    then (their entries never written), where left alone they finish."""
    if subprocess.run(["unshare", "-Ur", "true"], capture_output=True).returncode != 0:
        pytest.skip("no user namespaces here: the server will not run unconfined")
    cache = tmp_path / "cache"
    cache.mkdir()
    run_client(cache, HUSH="32")
    before = len(list(cache.glob("*/*.bin")))
    run_client(cache, HUSH="16", **({"QUIET_NOW": "1"} if quiet else {}))
    assert len(list(cache.glob("*/*.bin"))) == before + (1 if quiet else 3)
