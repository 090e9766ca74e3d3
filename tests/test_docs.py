"""docs/ARCHITECTURE.md's walk through the code names only things that exist."""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

from tests.conftest import ROOT


def _modules() -> dict[str, Any]:
    """Every module of the engine, by its own name (`engine`, `store`, ...), and every package by its name."""
    import pkgutil

    import evolver

    out = {}
    for info in pkgutil.walk_packages(evolver.__path__, "evolver."):
        if ".tui" not in info.name and not info.name.endswith("__main__"):
            out[info.name.rsplit(".", 1)[-1]] = importlib.import_module(info.name)
    return out


MODULES = _modules()
WORDS = {"best", "ok", "mutate", "evolve start", "evolve prompt", "pipeline_depth"}  # a ref, a status, an
# operator, commands, a setting


def _resolve(name: str) -> bool:
    first, *rest = name.split(".")
    holders: list[Any] = []
    for module_name, module in MODULES.items():
        if first == module_name:
            holders.append(module)
        elif hasattr(module, first):
            holders.append(getattr(module, first))
    for obj in holders:
        for i, part in enumerate(rest):
            if hasattr(obj, part):
                obj = getattr(obj, part)
            elif i == len(rest) - 1 and inspect.isclass(obj) and \
                    re.search(rf"self\.{part}\b\s*[:=]", inspect.getsource(obj)):
                obj = None  # an instance attribute the class sets
            else:
                break
        else:
            return True
    return False


def test_the_walk_through_one_candidate_names_what_exists() -> None:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    section = text[text.index("## Reading the code"):text.index("## Layout")]
    names = set(re.findall(r"`([^`]+)`", section)) - WORDS
    assert len(names) > 30
    missing = sorted(n for n in names if not _resolve(n))
    assert not missing, f"docs/ARCHITECTURE.md names what the code does not have: {missing}"
