"""The judges shipped with evolve (`[evaluation] builtin`): where the QR judge lies, and what it promises to run,
read from its own `specs.py` (the engine never imports the judge as a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any


class BuiltinMissing(Exception):
    """The built-in judge is not installed next to evolver; str() is the message."""


def builtin_harness_dir(name: str) -> Path:
    """The QR judge's directory: inside the installed package (`evolver/_harness`, from a wheel), else the
    source checkout's `harness/` (an editable install). Evaluations copy it and run it as `harness`."""
    shipped = Path(__file__).resolve().parents[1] / "_harness"
    if (shipped / "qr.py").is_file():
        return shipped
    spec = importlib.util.find_spec("harness")
    if spec is None or not spec.submodule_search_locations:
        raise BuiltinMissing(f"the built-in evaluator {name!r} needs its judge (evolver/_harness or the "
                              "checkout's harness/), which is not installed next to evolver")
    return Path(list(spec.submodule_search_locations)[0])


def harness_specs(harness_dir: Path) -> Any:
    """The judge's own statement of what it runs (`specs.py`, which imports nothing of the harness), read
    from the judge's directory: the engine never imports the harness as a package."""
    if harness_dir not in _SPECS:
        name = f"evolve_judge_specs_{len(_SPECS)}"
        spec = importlib.util.spec_from_file_location(name, harness_dir / "specs.py")
        assert spec is not None and spec.loader is not None
        module = sys.modules[name] = importlib.util.module_from_spec(spec)  # (dataclasses look it up there)
        spec.loader.exec_module(module)
        _SPECS[harness_dir] = module
    return _SPECS[harness_dir]


_SPECS: dict[Path, Any] = {}
