"""Where evaluations run: a slot per GPU (or the CPU), each with the fingerprint its results carry, the GPUs
nvidia-smi sees (no torch in the engine), and the one-line error for an evaluator that cannot run at all."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Slot:
    index: int
    gpu: int | None  # CUDA_VISIBLE_DEVICES for this slot; None on a CPU-only evaluator
    fingerprint: str


class EvaluationError(Exception):
    """The evaluator cannot run at all (configuration); str() is the message."""


def detect_gpus() -> list[tuple[int, str]]:
    """(index, "name / driver") of each GPU nvidia-smi sees, without importing torch or cupy."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index,name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    gpus = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3 and parts[0].isdigit():
            gpus.append((int(parts[0]), f"{parts[1]} / driver {parts[2]}"))
    return gpus


def cpu_fingerprint() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"cpu: {model} x{os.cpu_count()}"
