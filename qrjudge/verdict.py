"""How an evaluation ends and what the judge says while it runs: one `Verdict`, raised by any stage and caught once
in the judge's `main`; the `Report` on stdout (progress lines, then the final one); a `heartbeat` through long
stages.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO, Any

ANTI_CHEAT_VERSION = 12  # raised whenever a check or the timing changes; every result records it
# An import may compile (an exported file's load_inline build: its first evaluation, build included, took
# 64 s on an H200): while it runs, the judge says so every HEARTBEAT_S, for at most IMPORT_S, so the
# supervisor's stall watchdog (90 s without a line, meant for hung kernels) does not kill a compilation; after
# IMPORT_S the watchdog decides.
HEARTBEAT_S, IMPORT_S = 20.0, 240.0


class Verdict(Exception):
    """The end of an evaluation: a status, a message and whatever else the result carries."""

    def __init__(self, status: str, error: str = "", **fields: Any) -> None:
        super().__init__(error)
        self.status, self.error, self.fields = status, error, fields


class Report:
    """The judge's stdout: progress lines, then the final line."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.lock = threading.Lock()  # `heartbeat` emits from a thread of its own

    def emit(self, **record: Any) -> None:
        with self.lock:
            self.stream.write(json.dumps(record, default=str) + "\n")
            self.stream.flush()
            if "stage" in record:
                print(f"[harness] {record['stage']}: {record.get('label', '')}", file=sys.stderr, flush=True)

    def final(self, verdict: Verdict) -> None:
        fields = {k: v for k, v in verdict.fields.items() if v is not None}
        self.emit(final={"status": verdict.status, "error": verdict.error, **fields, "judge": ANTI_CHEAT_VERSION})


@contextlib.contextmanager
def heartbeat(report: Report, stage: str, label: str, every: float = HEARTBEAT_S,
              limit: float = IMPORT_S) -> Iterator[None]:
    """While the block runs, a progress line every `every` seconds, for at most `limit` seconds."""
    done, began = threading.Event(), time.monotonic()

    def beat() -> None:
        while not done.wait(every) and time.monotonic() - began < limit:
            report.emit(stage=stage, label=f"{label} (still running after {time.monotonic() - began:.0f} s)")
    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
