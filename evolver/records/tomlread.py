"""Reading a TOML configuration against a schema, with errors that name the file, line and key (`tomllib`
keeps no positions, so `_Locator` finds them in the text)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any


class ConfigError(Exception):
    """A configuration problem a user can fix; str() is the one-line message the CLI prints."""


class _Locator:
    """Finds the line of `section.key` in the TOML text (tomllib keeps no positions)."""

    _header = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\-\" ]+?)\s*\]\s*(#.*)?$")
    _key = re.compile(r"^\s*([A-Za-z0-9_\-\"]+)\s*=")

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def line_of(self, section: str, key: str | None = None) -> int | None:
        current = ""
        for number, line in enumerate(self.lines, start=1):
            header = self._header.match(line)
            if header:
                current = header.group(1).replace('"', "").replace(" ", "")
                if key is None and current == section:
                    return number
                continue
            match = self._key.match(line)
            if match and key is not None and current == section and match.group(1).strip('"') == key:
                return number
        return None


class TomlReader:
    """Sections of a parsed TOML file checked against a schema (section -> key -> (types, default); `...`
    marks a required key); every error names the file, the line and the key."""

    def __init__(self, path: Path, text: str, schema: dict[str, dict[str, tuple[tuple[type, ...], Any]]]) -> None:
        self.path = path
        self.locate = _Locator(text)
        self.schema = schema

    def error(self, section: str, key: str | None, message: str) -> ConfigError:
        where = f"{section}.{key}" if key else f"[{section}]"
        line = self.locate.line_of(section, key) or self.locate.line_of(section)
        at = f"{self.path}:{line}" if line else str(self.path)
        return ConfigError(f"{at}: {where}: {message}")

    def section(self, data: dict[str, Any], name: str) -> dict[str, Any]:
        schema = self.schema[name]
        raw = data.get(name, {})
        if not isinstance(raw, dict):
            raise self.error(name, None, "must be a table")
        out: dict[str, Any] = {}
        for key, value in raw.items():
            if key not in schema:
                known = ", ".join(sorted(schema))
                raise self.error(name, key, f"unknown key (known keys: {known})")
            types, _ = schema[key]
            # bool is an int in Python; a flag written where a number belongs is still a type error
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                names = " or ".join(_type_name(t) for t in types)
                raise self.error(name, key, f"must be {names}, not {_type_name(type(value))} ({value!r})")
            out[key] = value
        for key, (_, default) in schema.items():
            if key not in out:
                if default is ...:
                    raise self.error(name, key, "is required")
                out[key] = default
        return out


def _type_name(t: type) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true/false", list: "an array",
            dict: "a table"}.get(t, t.__name__)
