"""JSON lines between the judge and the runner, over raw pipe file descriptors.

Unbuffered on purpose: the judge must know whether anything beyond the reply it asked for has arrived
(`pending`), because a candidate that writes into the runner's reply pipe itself could otherwise slip a
forged reply in ahead of the real one.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from typing import IO, Any

MAX_LINE = 1 << 20
# What the runner runs between a call's `done` line and the judge's `kept` line, bound now, before any candidate
# exists: a candidate that replaces `os.read` or `time.perf_counter` for a moment (and puts it back before the
# runner's integrity checks look) would otherwise run in that wait, while the judge takes its copy of the outputs
# (`Channel.handover`; docs/QR_CONTRACT.md, "Times").
_read, _write, _select, _clock, _len = os.read, os.write, select.select, time.perf_counter, len
# How long the runner polls for the judge's next message before it blocks (on the GPU only). It waits there
# between timed calls; one that sleeps wakes on a cold core, and a small shape's launches (host-bound) then
# time up to twice slower on an H200 (bench/probe_timing.py: 20x32 57 us, 135 us after a 3 ms sleep, 63 us
# after 3 ms of polling). The judge never polls: it waits while the candidate runs. On the CPU self-test
# polling would only take cores from the processes it waits for.
SPIN_S = 0.25


class LineReader:
    def __init__(self, fd: int, spin_s: float = 0.0) -> None:
        self.fd = fd
        self.spin_s = spin_s
        self.buffer = b""

    def readline(self) -> bytes:
        """One line (b"" at end of file); a line longer than MAX_LINE is cut there."""
        self._spin()
        while b"\n" not in self.buffer and _len(self.buffer) < MAX_LINE:
            chunk = _read(self.fd, 65536)
            if not chunk:
                break
            self.buffer += chunk
        end = self.buffer.find(b"\n")
        end = _len(self.buffer) if end < 0 else end + 1
        line, self.buffer = self.buffer[:end], self.buffer[end:]
        return line

    def _spin(self) -> None:
        deadline = _clock() + self.spin_s
        while not self.buffer and _clock() < deadline:
            if _select([self.fd], [], [], 0)[0]:
                return

    def pending(self) -> bool:
        return bool(self.buffer) or bool(select.select([self.fd], [], [], 0)[0])


def send(fd: int, message: dict[str, Any]) -> None:
    write_all(fd, (json.dumps(message, default=str) + "\n").encode())


def write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[_write(fd, data):]


def forward(stream: IO[bytes], tail: list[bytes], keep: int) -> None:
    """Copy a child's output to our stderr line by line (never to our stdout, which carries results),
    keeping its last `keep` lines for the log. Runs in a thread until the stream closes."""
    for line in iter(stream.readline, b""):
        sys.stderr.buffer.write(line)
        sys.stderr.flush()
        tail.append(line)
        del tail[:-keep]


class Channel:
    """JSON lines over two file descriptors: the runner's side of the pipes."""

    def __init__(self, fd_in: int, fd_out: int) -> None:
        self.reader = LineReader(fd_in)
        self.fd_out = fd_out

    def receive(self) -> dict[str, Any] | None:
        line = self.reader.readline()
        return json.loads(line) if line else None

    def send(self, message: dict[str, Any]) -> None:
        send(self.fd_out, message)

    def handover(self, nonce: int) -> None:
        """A call's `done` line, then nothing until the judge's `kept` line: the judge copies the outputs out of
        the shared buffers in between, so whatever this process does after the wait (its checks, its reply, the
        candidate's code that any of them might reach) comes too late to change what is checked; a write after
        it is a rejection. Only functions bound at import run here (above)."""
        write_all(self.fd_out, b'{"done": true, "nonce": %d}\n' % nonce)
        self.reader.readline()
