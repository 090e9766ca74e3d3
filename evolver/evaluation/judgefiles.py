"""The built-in judge's files, fixed when a run opens.

Every evaluation of a run is judged by the files read here once, by content: each evaluation's directory is
written from this copy in memory, never from the installed package or the checkout, so nothing that writes
there during the run (a candidate without a sandbox, a coding agent with a shell, a person editing the
harness) can slip a new judge in. A change to the source between evaluations is an error that stops the run
(`JudgeChanged`), not a silent new judge: restarting judges with the new files under a new version, whose
scores never compare with the old ones.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


class JudgeChanged(Exception):
    """The judge's files changed since the run opened; str() names the first that did."""


class JudgeFiles:
    def __init__(self, source: Path) -> None:
        self.source = source
        self.files = self._read()
        self.digest = self._digest(self.files)

    def _read(self) -> dict[str, bytes]:
        return {p.relative_to(self.source).as_posix(): p.read_bytes()
                for p in sorted(self.source.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}

    @staticmethod
    def _digest(files: dict[str, bytes]) -> str:
        digest = hashlib.sha1()
        for name, data in files.items():
            digest.update(name.encode() + b"\0" + data + b"\0")
        return digest.hexdigest()

    def check(self) -> None:
        """Raise JudgeChanged if the source no longer holds the files the run opened with."""
        try:
            now = self._read()
        except OSError as exc:
            raise JudgeChanged(f"the judge's files in {self.source} cannot be read any more ({exc})") from None
        if now == self.files:
            return
        changed = sorted(set(now) ^ set(self.files) | {n for n in now if self.files.get(n, now[n]) != now[n]})
        raise JudgeChanged(f"the judge's files changed while the run was going ({self.source / changed[0]}); "
                           "the run stopped rather than judge the rest with another judge: start again to "
                           "judge with the new files (their scores never compare with the old ones)")

    def write(self, dest: Path) -> None:
        """The files as the run opened with them, under `dest`, read-only (the sandbox binds them so too)."""
        for name, data in self.files.items():
            path = dest / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(0o444)
