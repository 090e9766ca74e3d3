"""Which GPUs are healthy: a device that keeps failing is taken out of rotation, and the candidates it
failed are judged again on another device instead of being blamed.

A crash whose message names the device (a CUDA error, a lost context, no device, ECC, Xid) on a slot while
other slots are in service is not recorded at once: the candidate goes to another slot, and the slot gets a
strike. If the candidate crashes there too, the kernel was at fault: its crash is recorded and the strike
is taken back. A slot with `RETIRE_AFTER` strikes in a row (an `ok` clears them) leaves the rotation. The
last slot in service has no second opinion: only what a broken device alone says (no device, ECC, Xid)
counts there (the candidate is judged again, never blamed), and `RETIRE_AFTER` of those in a row stop the
run, leaving the candidates unjudged for the next `evolve start`. A crash whose evaluator says it was not the
kernel's either (`judge_again`: the host too busy to check the judge's clock) is judged once more, on any slot.
Pure bookkeeping: the engine asks, and moves the jobs (evolver/run/engine.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

RETIRE_AFTER = 3
HEALTH_REF = "refs/evolve/health/{run}"  # the devices a run took out of rotation (`evolve status` shows them)
DEVICE_ERROR = re.compile(r"CUDA error|cudaError|CUDA_ERROR|context is lost|no CUDA device|CUDA device|ECC|\bXid\b|"
                          r"fallen off the bus|device not ready|NVML", re.I)


# What only a broken device or driver says (never a kernel's bug, unlike an illegal address): on the last
# device in service these stop the run instead of being recorded against kernel after kernel.
DEVICE_GONE = re.compile(r"no CUDA device|ECC|\bXid\b|fallen off the bus|device not ready|NVML|"
                         r"CUDA driver version is insufficient|CUDA_ERROR_NOT_INITIALIZED|cudaErrorNoDevice", re.I)


def first_line(result: dict[str, Any]) -> str:
    """The first line of a result's error, shortened: what a device's failure is reported by."""
    return (str(result.get("error") or "").splitlines() or [""])[0][:200]


def judge_again(result: dict[str, Any]) -> str | None:
    """Why a crash says it is worth judging once more (its evaluator's `"retry": "why"`: the QR judge's when the
    host was too busy to check the judge's clock against the candidate's, which on the H200 crashed three honest
    kernels in a run of four evaluations a GPU), or None."""
    why = (result.get("details") or {}).get("retry")
    return why[:200] if result.get("status") == "crash" and isinstance(why, str) and why else None


def device_error(result: dict[str, Any], pattern: re.Pattern[str] = DEVICE_ERROR) -> bool:
    return result.get("status") == "crash" and bool(pattern.search(str(result.get("error") or "")))


@dataclass
class Health:
    slots: int
    strikes: dict[int, int] = field(default_factory=dict)
    retired: dict[int, str] = field(default_factory=dict)  # slot index -> the last error that retired it

    @property
    def in_service(self) -> int:
        return self.slots - len(self.retired)

    def judge_elsewhere(self, slot: int, result: dict[str, Any], retried_from: int | None) -> bool:
        """After `slot` returned `result`: whether the candidate should be judged again on another slot
        (a device error here while another slot serves, and not itself a retry). Keeps the strikes."""
        if retried_from is not None:  # the second opinion: a crash here too means the kernel did it
            if device_error(result):
                self.strikes[retried_from] = max(0, self.strikes.get(retried_from, 0) - 1)
            return False
        if not device_error(result):
            if result.get("status") == "ok":
                self.strikes[slot] = 0
            return False
        if self.in_service < 2:
            return False
        self.strikes[slot] = self.strikes.get(slot, 0) + 1
        return True

    def retire(self, slot: int, result: dict[str, Any]) -> bool:
        """Whether `slot` leaves the rotation now (its strikes in a row reached RETIRE_AFTER)."""
        if self.strikes.get(slot, 0) < RETIRE_AFTER or self.in_service < 2:
            return False
        self.retired[slot] = first_line(result)
        return True

    def device_gone(self, slot: int, result: dict[str, Any]) -> bool:
        """Whether the last slot in service returned what only a broken device says (DEVICE_GONE): then the
        result is not the kernel's (judge the candidate again) and the slot gets a strike; `exhausted` says
        when there have been enough in a row to stop the run."""
        if self.in_service >= 2 or not device_error(result, DEVICE_GONE):
            return False
        self.strikes[slot] = self.strikes.get(slot, 0) + 1
        return True

    def exhausted(self, slot: int) -> bool:
        return self.strikes.get(slot, 0) >= RETIRE_AFTER
