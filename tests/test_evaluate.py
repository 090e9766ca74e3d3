from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from evolver.evaluation.command import scrubbed_env
from evolver.evaluation.processes import parse_result, run_evaluator


def test_parse_result_maps_every_failure() -> None:
    ok = parse_result('progress\n{"status": "ok", "score": 12.5, "shapes": 3}\n', "", 0)
    assert ok == {"status": "ok", "score": 12.5, "details": {"shapes": 3}}
    assert parse_result("garbage\nmore garbage", "boom", 1)["status"] == "crash"
    assert "no JSON" in parse_result("", "", -11)["error"] and "SIGSEGV" in parse_result("", "", -11)["error"]
    assert parse_result('{"status": "ok"}', "", 0)["status"] == "crash"  # ok without a score
    assert parse_result('{"status": "ok", "score": NaN}', "", 0)["status"] == "crash"
    assert parse_result('{"status": "ok", "score": 5}', "", 3)["status"] == "crash"  # ok but failed exit
    assert parse_result('{"status": "great", "score": 5}', "", 0)["status"] == "crash"
    bad = parse_result('{"status": "incorrect", "score": 1.0, "error": "factor gate"}', "log", 1)
    assert bad["status"] == "incorrect" and bad["score"] is None and bad["error"] == "factor gate"
    # the last JSON line wins; a candidate's own JSON printed earlier does not
    assert parse_result('{"status": "ok", "score": 1}\n{"status": "incorrect"}', "", 0)["status"] == "incorrect"


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    script = ("import subprocess, sys, time\n"
              f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
              f"open({str(marker)!r}, 'w').write(str(p.pid))\n"
              "time.sleep(60)\n")
    start = time.monotonic()
    result = asyncio.run(run_evaluator([sys.executable, "-c", script], tmp_path, scrubbed_env(None), 1.5))
    assert result["status"] == "timeout" and time.monotonic() - start < 10
    child = int(marker.read_text())
    time.sleep(0.2)
    assert not _alive(child), "the evaluator's child survived the timeout"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its reaper is dead for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_evaluator_sees_no_secrets(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "t0k3n")
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    script = "import json, os; print(json.dumps({'status': 'ok', 'score': 1, 'env': dict(os.environ)}))"
    result = asyncio.run(run_evaluator([sys.executable, "-c", script], tmp_path, scrubbed_env(3), 30))
    env = result["details"]["env"]
    assert "OPENAI_API_KEY" not in env and "MY_SERVICE_TOKEN" not in env
    assert "sk-secret" not in str(env) and env["CUDA_VISIBLE_DEVICES"] == "3" and env["PYTHONPATH"] == "/somewhere"


def test_missing_evaluator_program(tmp_path: Path) -> None:
    result = asyncio.run(run_evaluator(["/nonexistent/evaluator"], tmp_path, scrubbed_env(None), 5))
    assert result["status"] == "crash" and "cannot start" in result["error"]
