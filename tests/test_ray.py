"""`[evaluation] backend = "ray"`: the CPU example on a Ray cluster started by the test (a head with two
logical CPUs, so two worker processes judge at once), one worker killed in the middle of an evaluation.
Needs the `ray` extra; skipped without it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evolver.records.store import Store
from tests.conftest import example_config, git, make_repo

pytest.importorskip("ray")
pytestmark = pytest.mark.slow
RAY = str(Path(sys.executable).parent / "ray")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def cluster() -> Iterator[str]:
    port = free_port()
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's sockets need a short path
    started = subprocess.run([RAY, "start", "--head", f"--port={port}", "--num-cpus=2", "--disable-usage-stats",
                              "--include-dashboard=false", f"--temp-dir={temp}"], capture_output=True, text=True,
                             timeout=120)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=120)


def ray_workers_judging(name: str) -> list[int]:
    """PIDs of Ray workers running an evaluation now (Ray names a worker after its task or actor)."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [int(line.split()[0]) for line in out.splitlines() if f"ray::{name}" in line]


@pytest.mark.parametrize("prestart", [False, True])
def test_the_cpu_example_on_a_ray_cluster_survives_a_killed_worker(tmp_path: Path, cluster: str, prestart: bool) -> None:
    """Tasks (each evaluation laid out and sent whole), or with prestart a warm judge per slot (an actor that
    keeps the next evaluation's process started; only the kernel travels). A worker killed in the middle of
    an evaluation: Ray runs it again (the actor restarted), nothing is lost or blamed."""
    wait = " --wait-for-go" if prestart else ""
    config = example_config(evaluation=f'command = "{{python}} check.py --kernel-dir {{kernel_dir}} --mode {{mode}}{wait}"\n'
                            f'files = ["check.py"]\ngpus = []\ntimeout_s = 60\nbackend = "ray"\n'
                            f'address = "{cluster}"\nprestart = {str(prestart).lower()}',
                            evolution="operators = { tune = 1.0 }\nseed = 3")
    repo = make_repo(tmp_path / "repo", config)
    sort = repo / "examples" / "sort"
    head, tree = git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain")
    engine = subprocess.Popen([sys.executable, "-m", "evolver", "start", "--max-candidates", "40"], cwd=sort,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    killed: list[int] = []

    def watch() -> None:
        assert engine.stdout is not None
        for line in engine.stdout:
            lines.append(line)
            if not killed and sum(1 for x in lines if x.startswith("[")) >= 8:
                deadline = time.monotonic() + 20
                while not killed and time.monotonic() < deadline:  # one in the middle of its evaluation
                    busy = ray_workers_judging("WarmJudge" if prestart else "judge_on_worker")
                    if busy:
                        os.kill(busy[0], signal.SIGKILL)
                        killed.append(busy[0])
                    time.sleep(0.01)

    reader = threading.Thread(target=watch, daemon=True)
    reader.start()
    assert engine.wait(timeout=600) == 0, "".join(lines)
    reader.join(timeout=10)
    assert killed, "no Ray worker was caught judging: the kill did not happen"

    snapshot = Store(repo).snapshot("r1")
    assert len(snapshot.candidates) == 40
    results = [c.result for c in snapshot.candidates.values()]
    assert all(r is not None and r.status == "ok" for r in results), [c.status for c in snapshot.candidates.values()]
    for r in results:  # the same kinds of notes as a local run: the judge, the device that judged, the details
        assert r is not None and r.harness and r.gpu.startswith("cpu: ") and r.line.get("duration_s") is not None
        assert r.details.get("unit") == "us" and r.details.get("size") == 1500
        assert r.details.get("prestarted") is prestart  # (check.py says whether it was started ahead)
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == tree
    assert "Ray cluster" in "".join(lines)
    json.dumps([r.line for r in results if r is not None])  # notes are plain JSON


def test_an_address_where_no_cluster_answers_is_one_line(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    config = example_config(evaluation=f'command = "{{python}} check.py --kernel-dir {{kernel_dir}}"\n'
                            f'files = ["check.py"]\ngpus = []\nbackend = "ray"\naddress = "127.0.0.1:{port}"')
    repo = make_repo(tmp_path / "repo", config)
    proc = subprocess.run([sys.executable, "-m", "evolver", "start", "--max-candidates", "2"], cwd=repo / "examples" / "sort",
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().endswith(f"evaluation.address: no Ray cluster answers at '127.0.0.1:{port}' "
                                        "(Connection refused)"), proc.stderr


def test_confirmations_beside_warm_judges_never_wait_for_a_slot_they_hold(tmp_path: Path, cluster: str) -> None:
    """With prestart every slot's resource (a GPU on the QR problem) is held by its warm judge, so an evaluation
    in another mode (a would-be best confirmed in `final`) must run in that judge's actor: as a Ray task of its
    own it waited forever for a resource no one would give back (seen on an H200: the seed's confirmation hung)."""
    config = example_config(evaluation='command = "{python} check.py --kernel-dir {kernel_dir} --mode {mode} --wait-for-go"\n'
                            f'files = ["check.py"]\ngpus = []\ntimeout_s = 60\nbackend = "ray"\naddress = "{cluster}"\n'
                            'prestart = true\nmode = "quick"\nconfirm_mode = "final"',
                            evolution="operators = { tune = 1.0 }\nseed = 3")
    repo = make_repo(tmp_path / "repo", config)
    engine = subprocess.Popen([sys.executable, "-m", "evolver", "start", "--max-candidates", "6"],
                              cwd=repo / "examples" / "sort", stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = engine.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        engine.kill()
        out, _ = engine.communicate()
        pytest.fail("the run hung on its first confirmation:\n" + out)
    assert engine.returncode == 0, out

    snapshot = Store(repo).snapshot("r1")
    confirmed = [c for c in snapshot.candidates.values() if c.confirmation is not None]
    assert confirmed, out  # the seed, or a child that beat it (results.Recorder.maybe_confirm)
    assert all(c.confirmation is not None and c.confirmation.status == "ok" for c in confirmed), out
    assert all(c.result is not None and c.result.status == "ok" for c in snapshot.candidates.values()), out


def test_more_slots_than_the_cluster_holds_is_one_line_not_a_hang(tmp_path: Path, cluster: str) -> None:
    """`slots = 3` on a cluster of two CPUs: a third warm judge could never be placed and its evaluations would
    wait forever; the run is refused at once, in one line that says what the cluster offers."""
    config = example_config(evaluation='command = "{python} check.py --kernel-dir {kernel_dir} --mode {mode} --wait-for-go"\n'
                            f'files = ["check.py"]\ngpus = []\nslots = 3\ntimeout_s = 60\nbackend = "ray"\n'
                            f'address = "{cluster}"\nprestart = true')
    repo = make_repo(tmp_path / "repo", config)
    proc = subprocess.run([sys.executable, "-m", "evolver", "start", "--max-candidates", "4"], cwd=repo / "examples" / "sort",
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert proc.stderr.strip().endswith(f"evaluation.slots = 3, but the Ray cluster at '{cluster}' has 2 CPU for "
                                        "evaluations"), proc.stderr


HOLDER = """
import sys, time, ray
ray.init(address=sys.argv[1], log_to_driver=False)

@ray.remote(num_cpus=2)
class Holder:
    def ready(self):
        return True

holder = Holder.remote()
ray.get(holder.ready.remote())
print("held", flush=True)
time.sleep(600)
"""


def test_a_cluster_whose_resources_another_job_holds_is_refused_in_one_line(tmp_path: Path, cluster: str) -> None:
    """Another job holds both CPUs: the probes of the slots cannot run, and after EVOLVE_RAY_PROBE_S the run is
    refused in one line instead of waiting without a word."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, cluster], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        config = example_config(evaluation='command = "{python} check.py --kernel-dir {kernel_dir} --mode {mode}"\n'
                                f'files = ["check.py"]\ngpus = []\ntimeout_s = 60\nbackend = "ray"\naddress = "{cluster}"')
        repo = make_repo(tmp_path / "repo", config)
        began = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "evolver", "start", "--max-candidates", "2"],
                              cwd=repo / "examples" / "sort", capture_output=True, text=True, timeout=180,
                              env={**os.environ, "EVOLVE_RAY_PROBE_S": "5"})
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
        assert proc.stderr.strip().endswith(f"the Ray cluster at '{cluster}' did not run a probe on each of its 2 CPU "
                                            "within 5 s: are they held by other jobs? (`ray status` says)"), proc.stderr
        assert time.monotonic() - began < 120
    finally:
        holder.kill()
        holder.wait()
