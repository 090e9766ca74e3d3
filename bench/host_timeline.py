"""The host's speed over time, beside a GPU pass: every 0.25 s, the time of the judge's fixed Python loop
(qrjudge/hostwatch.py) in this separate process, with the wall clock and the CPU it ran on. Laid beside the
pass's log it says whether an evaluation that ran slow did so while the whole machine was slow (this loop
slows too) or alone (this loop stays fast: something of that process, such as where its memory lives).

    python bench/host_timeline.py > timeline.jsonl &    # until killed

One JSON line per sample: {"t": unix time, "us": the loop's time, "cpu": the CPU it last ran on}.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from qrjudge.hostwatch import last_cpu, loop_us


def main() -> None:
    while True:
        us = loop_us()
        print(json.dumps({"t": round(time.time(), 2), "us": us, "cpu": last_cpu(Path("/proc/self/stat"))}),
              flush=True)
        time.sleep(0.25)


if __name__ == "__main__":
    main()
