"""Has anything the runner relies on been replaced since the candidate was imported?

A snapshot records, for each namespace it watches (a module or a class), the identity of every callable,
class and module in it, and for plain functions the identity of their code, defaults and closure. `changed`
compares the namespaces with the snapshot and names the first entry that was replaced or removed: a
candidate that wraps `torch.cuda.Event.elapsed_time`, swaps `time.perf_counter`, patches `torch.equal` or
a harness function is rejected with that name. New entries are allowed (lazy imports add submodules); data
(flags, counters) is not watched.

This runs inside the runner, the process the candidate controls, so it is a first filter for the tricks a
model writes, never the defence: the judge checks every result with its own copy of the input and its own
clock (docs/QR_CONTRACT.md, "Threat model").
"""

from __future__ import annotations

import types
from typing import Any

Fingerprint = tuple[int, int, int, int, int]


def _fingerprint(value: Any) -> Fingerprint:
    func = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
    if isinstance(func, types.FunctionType):
        return (id(value), id(func.__code__), id(func.__defaults__), id(func.__kwdefaults__), id(func.__closure__))
    return (id(value), 0, 0, 0, 0)


def _watched(value: Any) -> bool:
    return callable(value) or isinstance(value, (type, types.ModuleType, classmethod, staticmethod, property))


def _state(namespace: Any) -> dict[str, Fingerprint]:
    entries = dict(vars(namespace))  # a copy: a module's dict may grow while we read it
    return {name: _fingerprint(value) for name, value in entries.items() if _watched(value)}


class Snapshot:
    """The watched entries of some namespaces, as they are now."""

    def __init__(self, namespaces: dict[str, Any]) -> None:
        self.namespaces = dict(namespaces)
        self.before = {label: _state(obj) for label, obj in self.namespaces.items()}

    def changed(self) -> str:
        """'' if every watched entry is as it was, else which one changed and how."""
        for label, obj in self.namespaces.items():
            now = _state(obj)
            for name, fingerprint in self.before[label].items():
                if name not in now:
                    return f"{label}.{name} was removed"
                if now[name] != fingerprint:
                    return f"{label}.{name} was replaced"
        return ""


def namespaces(*objects: Any) -> dict[str, Any]:
    """label -> namespace for modules and classes, labelled by their qualified names."""
    out: dict[str, Any] = {}
    for obj in objects:
        label = obj.__name__ if isinstance(obj, types.ModuleType) else f"{obj.__module__}.{obj.__qualname__}"
        out[label] = obj
    return out
