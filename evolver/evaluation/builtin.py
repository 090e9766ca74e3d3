"""The judges shipped with evolve (`[evaluation] builtin`): where the QR judge lies, and what it promises to run,
read from its own `specs.py` (the engine never imports the judge as a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any


class BuiltinMissing(Exception):
    """The built-in judge is not installed next to evolver; str() is the message."""


PACKAGES = {"qr": "qrjudge"}  # a built-in judge's name in evolve.toml -> its package, run as `python -m PACKAGE`


def builtin_judge_dir(name: str) -> Path:
    """The built-in judge's directory: inside the installed package (`evolver/_qrjudge`, from a wheel), else the
    source checkout's `qrjudge/` (an editable install). Evaluations copy it and run it as its package."""
    package = PACKAGES[name]
    shipped = Path(__file__).resolve().parents[1] / f"_{package}"
    if (shipped / "__main__.py").is_file():
        return shipped
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise BuiltinMissing(f"the built-in evaluator {name!r} needs its judge (evolver/_{package} or the "
                              f"checkout's {package}/), which is not installed next to evolver")
    return Path(list(spec.submodule_search_locations)[0])


def judge_specs(judge_dir: Path) -> Any:
    """The judge's own statement of what it runs (`specs.py`, which imports nothing else of the judge), read
    from the judge's directory: the engine never imports the judge as a package."""
    if judge_dir not in _SPECS:
        name = f"evolve_judge_specs_{len(_SPECS)}"
        spec = importlib.util.spec_from_file_location(name, judge_dir / "specs.py")
        assert spec is not None and spec.loader is not None
        module = sys.modules[name] = importlib.util.module_from_spec(spec)  # (dataclasses look it up there)
        spec.loader.exec_module(module)
        _SPECS[judge_dir] = module
    return _SPECS[judge_dir]


_SPECS: dict[Path, Any] = {}


_CONFINE_PROBE = """import sys, tempfile
sys.path.insert(0, sys.argv[1])
from qrjudge import isolation
with tempfile.TemporaryDirectory() as tmp:
    try:
        print("confined:", isolation.confine([tmp]), flush=True)
    except (isolation.ConfineError, OSError) as exc:
        print("not confined:", exc, flush=True)
"""


def confinement_problem(judge_dir: Path) -> str:
    """'' when the QR judge's runner can confine itself on this machine (qrjudge/isolation.py), else why not:
    checked once before a run, so that a machine without user namespaces is told so in one line instead of
    getting a crash for every candidate."""
    import subprocess

    try:
        out = subprocess.run([sys.executable, "-I", "-c", _CONFINE_PROBE, str(judge_dir.parent)], capture_output=True,
                             text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if "confined: user" in out:
        return ""
    return out.strip().removeprefix("not confined: ") or "the probe said nothing"
