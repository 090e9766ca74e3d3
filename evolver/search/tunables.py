"""Tunable parameters declared in kernel sources, and the changes the `tune` operator makes to them.

The annotation is a comment at the end of the line that holds the value:

    #define NT 256          // @tune NT: 128 256 512
    BLOCK = 64              # @tune BLOCK: 16 32 64 128

The last number before the comment is the current value; the words after the colon are the values the
parameter may take. Works in any language with `//` or `#` comments. Pure functions; used by operators.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

_ANNOTATION = re.compile(r"^(?P<code>.*?)(?P<comment>(//|#)\s*@tune\s+(?P<name>\w+)\s*:\s*(?P<choices>.*?))\s*$")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


@dataclass(frozen=True)
class Tunable:
    path: str
    line: int  # 0-based line index in the file
    name: str
    value: str
    choices: tuple[str, ...]
    span: tuple[int, int]  # character span of the value within the line


def find_tunables(files: dict[str, str]) -> list[Tunable]:
    found = []
    for path in sorted(files):
        for index, line in enumerate(files[path].splitlines()):
            match = _ANNOTATION.match(line)
            if not match:
                continue
            numbers = list(_NUMBER.finditer(match.group("code")))
            choices = tuple(c for c in re.split(r"[\s,]+", match.group("choices")) if c)
            if not numbers or len(choices) < 2:
                continue
            value = numbers[-1]
            found.append(Tunable(path, index, match.group("name"), value.group(0), choices, value.span()))
    return found


def set_value(files: dict[str, str], tunable: Tunable, value: str) -> dict[str, str]:
    lines = files[tunable.path].splitlines(keepends=True)
    line = lines[tunable.line]
    start, end = tunable.span
    lines[tunable.line] = line[:start] + value + line[end:]
    return {**files, tunable.path: "".join(lines)}


def apply_settings(files: dict[str, str], settings: list[str]) -> tuple[dict[str, str], list[str]]:
    """`NAME=VALUE` settings of declared tunables (`evolve try --set`, `evolve add --set`) applied to `files`: each
    declaration of NAME takes VALUE. Returns the files and what changed ("NAME=VALUE (was OLD)"). A value outside the
    declared choices is allowed, for a person may look beyond them, and said. ValueError says what is wrong."""
    changes = []
    for setting in settings:
        name, _, value = (part.strip() for part in setting.partition("="))
        if not name or not _NUMBER.fullmatch(value):
            raise ValueError(f"--set {setting!r}: NAME=VALUE, VALUE a number (as `--set NB=16`)")
        found = [t for t in find_tunables(files) if t.name == name]
        if not found:
            declared = ", ".join(sorted({t.name for t in find_tunables(files)})) or "none"
            raise ValueError(f"--set {setting}: no tunable {name} is declared (@tune) in the kernel (declared: "
                             f"{declared})")
        for t in found:
            files = set_value(files, t, value)
        t = found[0]
        where = f" in {len(found)} places" if len(found) > 1 else ""
        beyond = "" if value in t.choices else f"; not among its choices {' '.join(t.choices)}"
        changes.append(f"{name}={value} (was {t.value}{where}{beyond})")
    return files, changes


def moves(files: dict[str, str]) -> list[tuple[Tunable, str, float]]:
    """Every single-parameter change, weighted to prefer the neighbouring values of each choice list."""
    out = []
    for t in find_tunables(files):
        here = t.choices.index(t.value) if t.value in t.choices else None
        for i, choice in enumerate(t.choices):
            if choice == t.value:
                continue
            weight = 3.0 if here is not None and abs(i - here) == 1 else 1.0
            out.append((t, choice, weight))
    return out


def random_combination(files: dict[str, str], rng: random.Random) -> tuple[dict[str, str], list[str]]:
    """Change every tunable to a random value: a long jump when single steps find nothing new."""
    changes = []
    for t in find_tunables(files):
        choice = rng.choice(t.choices)
        if choice != t.value:
            files = set_value(files, _refind(files, t), choice)
            changes.append(f"{t.name}={choice} (was {t.value})")
    return files, changes


def _refind(files: dict[str, str], t: Tunable) -> Tunable:
    for other in find_tunables(files):
        if other.path == t.path and other.line == t.line:
            return other
    return t
