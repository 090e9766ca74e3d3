"""Fault injection for the judge's own tests, outside the harness: with this directory on PYTHONPATH and
EVOLVE_HARNESS_FAULT=clock=FACTOR, the runner reports FACTOR of every time it measured, as a runner subverted
below the Python level would (the harness has no such switch: nothing in the runner scales a time). The
judge's own clock must notice."""

import os
import sys

FAULT = os.environ.get("EVOLVE_HARNESS_FAULT", "")

if FAULT.startswith("clock=") and "qrjudge.runner" in sys.orig_argv:
    from typing import Any

    from qrjudge import wire

    factor = float(FAULT.removeprefix("clock="))
    honest_send = wire.send

    def send(fd: int, message: dict[str, Any]) -> None:
        if isinstance(message.get("event_us"), float):
            message = {**message, "event_us": message["event_us"] * factor, "wall_us": message["wall_us"] * factor}
        honest_send(fd, message)

    wire.send = send
