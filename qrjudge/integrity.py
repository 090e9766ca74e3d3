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
from typing import Any, NamedTuple

_MISSING = object()


class _Entry(NamedTuple):
    label: str
    mapping: Any  # the namespace's live __dict__ (a mappingproxy for a class)
    name: str
    value: Any  # held, not its id: a replacement can never be mistaken for a freed original
    func: Any  # the plain function behind the value (None for anything else), whose parts are watched too
    parts: tuple[Any, ...]  # that function's code, defaults, kwdefaults and closure


def _function(value: Any) -> Any:
    func = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
    return func if isinstance(func, types.FunctionType) else None


def _parts(func: Any) -> tuple[Any, ...]:
    return () if func is None else (func.__code__, func.__defaults__, func.__kwdefaults__, func.__closure__)


def _watched(value: Any) -> bool:
    return callable(value) or isinstance(value, (type, types.ModuleType, classmethod, staticmethod, property))


class Snapshot:
    """The watched entries of some namespaces, as they are now."""

    def __init__(self, namespaces: dict[str, Any], unwatched: frozenset[str] = frozenset()) -> None:
        """`unwatched`: entries ("label.name") left out, each for a reason its caller gives."""
        self.entries = [_Entry(label, vars(obj), name, value, _function(value), _parts(_function(value)))
                        for label, obj in namespaces.items()
                        for name, value in dict(vars(obj)).items() if _watched(value)
                        and f"{label}.{name}" not in unwatched]

    def changed(self) -> str:
        """'' if every watched entry is as it was, else which one changed and how. Cheap (identity checks
        on live dictionaries: 567 entries in 86 us on the 2-core CPU machine), because the runner runs it
        between a call's L2 flush and its timed region."""
        for entry in self.entries:
            now = entry.mapping.get(entry.name, _MISSING)
            if now is entry.value and (entry.func is None or _parts(entry.func) == entry.parts):
                continue
            how = "removed" if now is _MISSING else "replaced"
            return f"{entry.label}.{entry.name} was {how}"
        return ""


def namespaces(*objects: Any) -> dict[str, Any]:
    """label -> namespace for modules and classes, labelled by their qualified names."""
    out: dict[str, Any] = {}
    for obj in objects:
        label = obj.__name__ if isinstance(obj, types.ModuleType) else f"{obj.__module__}.{obj.__qualname__}"
        out[label] = obj
    return out
