"""qrjudge/hostwatch.py: what the host did while a shape was timed, read from /proc (fake files here, and the
real /proc of this machine)."""

from __future__ import annotations

import os
from pathlib import Path

from qrjudge import hostwatch


def fake_proc(root: Path, steal: int, cpu: int, preempted: int, waited: int = 0) -> Path:
    (root / "42").mkdir(parents=True, exist_ok=True)
    (root / "thread-self").mkdir(exist_ok=True)
    (root / "42" / "schedstat").write_text(f"123456 {waited} 17\n")  # on a CPU, waiting for one (ns), slices
    (root / "thread-self" / "schedstat").write_text(f"999 {waited // 2} 3\n")
    (root / "stat").write_text(f"cpu  100 2 30 4000 5 0 6 {steal} 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
    fields = ["S"] + ["0"] * 35 + [str(cpu)] + ["0"] * 15  # state is field 3, the CPU field 39
    (root / "42" / "stat").write_text("42 (python -m (odd) name) " + " ".join(fields) + "\n")
    (root / "42" / "status").write_text(f"Name:\tpython\nvoluntary_ctxt_switches:\t9\n"
                                        f"nonvoluntary_ctxt_switches:\t{preempted}\n")
    return root


def test_a_shape_reports_steal_the_runners_cpu_and_its_preemptions(tmp_path: Path) -> None:
    before = hostwatch.sample(42, fake_proc(tmp_path, steal=1000, cpu=3, preempted=7, waited=2_000_000), probe=False)
    after = hostwatch.sample(42, fake_proc(tmp_path, steal=1012, cpu=11, preempted=10, waited=10_000_000), probe=False)
    assert before == hostwatch.Sample(1000, 3, 7, waited_ns=3_000_000)  # the runner's wait and the judge's
    assert hostwatch.between(before, after) == {"steal_ms": round(12 * hostwatch.TICK_MS, 1), "runner_cpu": 11,
                                                "runner_preempted": 3, "waited_ms": 12.0, "judge_loop_us": None,
                                                "judge_cpu": None}


def test_the_judges_loop_is_reported_as_the_later_sample_timed_it() -> None:
    before, after = hostwatch.Sample(0, 1, 0, loop_us=900.0, judge_cpu=2), hostwatch.Sample(0, 1, 0, 450.0, 5)
    report = hostwatch.between(before, after)
    assert report["judge_loop_us"] == 450.0 and report["judge_cpu"] == 5
    assert 0 < min(hostwatch.loop_us(1000) for _ in range(3)) < hostwatch.loop_us(200000)  # the loop it is given


def test_what_cannot_be_read_is_none_never_an_error(tmp_path: Path) -> None:
    (tmp_path / "stat").write_text("garbage\n")
    missing = hostwatch.sample(42, tmp_path, probe=False)
    assert missing == hostwatch.Sample(None, None, None)
    assert hostwatch.between(missing, missing) == {"steal_ms": None, "runner_cpu": None, "runner_preempted": None,
                                                   "waited_ms": None, "judge_loop_us": None, "judge_cpu": None}


def test_this_machines_proc_reads() -> None:
    mine = hostwatch.sample(os.getpid())
    assert mine.steal_ticks is not None and mine.steal_ticks >= 0
    assert mine.cpu is not None and 0 <= mine.cpu < (os.cpu_count() or 1) * 64
    assert mine.preempted is not None and mine.preempted >= 0
    assert mine.loop_us is not None and mine.loop_us > 0 and mine.judge_cpu is not None
    assert mine.waited_ns is not None and mine.waited_ns >= 0
