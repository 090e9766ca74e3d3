"""The compiles a candidate is about to ask for, foreseen from the evaluations before it (qrjudge/nvrtc_cache.py).

A `tune` move of a define that several modules share (the QR seed's NB, NWARPS, GRAM_ROWS) changes each of them,
and a candidate asks for its modules one at a time, as it first uses each: its tests waited for the compiles one
after the other (import and tests 12-16 s, against about 3 s for a move that compiles nothing; H200, run53),
while the GPU's other evaluations waited for its shared hold. Each compile server writes down what its runner
asked for (a recipe, in the cache's RECIPES directory); at a request the cache does not have, the
server looks for the nearest earlier request, the same but for some options (`-DNB=32` where this one has
`-DNB=16`), and compiles what that evaluation asked for with the same options changed, beside the request
itself: by the time the candidate asks for its next module, it is compiled or compiling.

Only ever a guess, and only ever work: a foreseen compile is an ordinary request compiled by the server's
confined workers into the entry of that request (what NVRTC makes of it, whoever asked); a wrong guess costs a
worker's time while the evaluation is alive (the server stops when its runner does, so never beside another's
timed region, and the judge quiets it before its own runner's timed calls: qrjudge/nvrtc_client.py,
`Client.quiet`), and no more than FORESEEN a server. Recipes hold the CUDA sources of earlier candidates, which
the runner may read as it reads the cache: the same candidates' sources that the repository holds anyway.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

RECIPES = ".recipes"  # inside the cache: a file of requests for each server that was asked for anything
KEEP = 32  # recipes kept, newest first (`prune`); each is a few of a candidate's sources, about 100 kB
FORESEEN = 8  # compiles a server starts on a guess, at most


def write(cache: Path, name: str, asked: list[dict[str, Any]]) -> None:
    """This server's requests so far, as its recipe (replaced whole: a reader never sees half of one)."""
    folder = cache / RECIPES
    folder.mkdir(exist_ok=True)
    partial = folder / f".{name}.partial"
    partial.write_text(json.dumps(asked))
    os.replace(partial, folder / f"{name}.json")


def read(cache: Path, own: str) -> list[list[dict[str, Any]]]:
    """The other servers' recipes, newest first (one being replaced, or unreadable, is left out)."""
    found = []
    for path in (cache / RECIPES).glob("*.json"):
        with contextlib.suppress(OSError, ValueError):
            if path.stem != own:
                found.append((path.stat().st_mtime, json.loads(path.read_text())))
    return [recipe for _, recipe in sorted(found, key=lambda f: -f[0]) if isinstance(recipe, list)]


def prune(cache: Path, keep: int = KEEP) -> None:
    """All but the newest `keep` recipes removed (another server may be removing them too)."""
    found = []
    for path in (cache / RECIPES).glob("*.json"):
        with contextlib.suppress(OSError):
            found.append((path.stat().st_mtime, path))
    for _, path in sorted(found, reverse=True)[keep:]:
        path.unlink(missing_ok=True)


def foresee(request: dict[str, Any], recipes: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """What the evaluation of the nearest earlier request asked for, with the options that `request` changed
    changed the same way: the request that differs from `request` in the fewest options (all else equal, the same
    number of options; the newest recipe first among equals) gives the changes."""
    nearest: tuple[dict[str, str], list[dict[str, Any]]] | None = None
    for recipe in recipes:
        for earlier in recipe:
            changed = _changed(earlier, request)
            if changed and (nearest is None or len(changed) < len(nearest[0])):
                nearest = changed, recipe
    if nearest is None:
        return []
    changed, recipe = nearest
    guessed = []
    for earlier in filter(_valid, recipe):
        options = [changed.get(o, o) for o in earlier["options"]]
        if options != earlier["options"]:  # (one the change leaves alone is a hit, or was never this one's)
            guessed.append({**earlier, "options": options})
    return guessed


def _changed(earlier: Any, request: dict[str, Any]) -> dict[str, str]:
    """{earlier option: request's} where the two differ only there (else nothing)."""
    if not _valid(earlier) or len(earlier["options"]) != len(request["options"]):
        return {}
    if any(earlier.get(k) != v for k, v in request.items() if k != "options"):
        return {}
    return {a: b for a, b in zip(earlier["options"], request["options"]) if a != b}


def _valid(request: Any) -> bool:
    return isinstance(request, dict) and isinstance(request.get("options"), list) and \
        all(isinstance(o, str) for o in request["options"])
