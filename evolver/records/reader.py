"""Reading a run from git and keeping it current (`RunReader`), for `evolve status` and the TUI."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any, Protocol

from evolver.records.candidates import Candidate, Result, Snapshot, parse_commit, parse_note
from evolver.records.refs import BEST_REF, NOTES_REF


class Repository(Protocol):
    """What reading a run takes of the repository (evolver/records/store.py's `Store`, which reads runs through
    this module)."""

    def cat_blobs(self, shas: Iterable[str]) -> dict[str, bytes]: ...
    def note_lines(self, commit: str, ref: str = NOTES_REF) -> list[dict[str, Any]]: ...
    def ref_listing(self, run: str) -> dict[str, str]: ...
    def note_listing(self, known: bool | None = None) -> dict[str, str]: ...
    def note_changes(self, old: str, new: str) -> dict[str, str] | None: ...


class RunReader:
    """Reads one run from git and keeps it current cheaply: each `refresh` lists the refs (one call) and
    reads only commits that are new and notes that changed. Used by `evolve status` (one refresh) and the
    TUI (a refresh per poll), so its work per refresh is proportional to what changed, not to the run."""

    def __init__(self, store: Repository, run: str) -> None:
        self.store = store
        self.snapshot = Snapshot(run=run)
        self._refs: dict[str, str] = {}
        self._notes: dict[str, str] = {}  # commit -> note blob, every note of the notes ref
        self._bad: dict[str, int] = {}  # commit -> malformed lines in its note, where there are any
        self._by_commit: dict[str, Candidate] = {}

    def by_commit(self) -> dict[str, Candidate]:
        """commit -> candidate (a copy: the reader keeps its own up to date)."""
        return dict(self._by_commit)

    def _set_bad(self, commit: str, bad: int) -> None:
        if bad:
            self._bad[commit] = bad
        else:
            self._bad.pop(commit, None)

    def _note_delta(self, old: str | None, new: str | None) -> dict[str, str]:
        """commit -> note blob ("" for a removed note) for every note that changed between two notes refs."""
        if old and new:
            delta = self.store.note_changes(old, new)
            if delta is not None:
                return {commit: blob for commit, blob in delta.items() if self._notes.get(commit, "") != blob}
        listing = self.store.note_listing(known=True) if new else {}
        delta = {commit: blob for commit, blob in listing.items() if self._notes.get(commit) != blob}
        delta.update({commit: "" for commit in self._notes if commit not in listing})
        return delta

    def refresh(self) -> set[str]:
        """Bring the snapshot up to date; returns the ids of candidates that are new or changed.

        At most three git processes: the ref listing, the notes that changed (a tree diff between the old
        and new notes commits, or a listing the first time) and one `cat-file --batch` for the new commits
        and the changed notes together."""
        snap = self.snapshot
        refs = self.store.ref_listing(snap.run)
        if refs == self._refs:
            return set()
        prefix = f"refs/heads/evolve/{snap.run}/"
        new = {ref[len(prefix):]: obj for ref, obj in refs.items()
               if ref.startswith(prefix) and self._refs.get(ref) != obj}
        by_commit = self._by_commit
        changed: set[str] = set()
        for ref, obj in self._refs.items():
            if ref.startswith(prefix) and refs.get(ref) != obj:  # a branch went or moved
                gone = snap.candidates.pop(ref[len(prefix):], None)
                if gone is not None:
                    by_commit.pop(gone.commit, None)
        delta = {}
        if refs.get(NOTES_REF) != self._refs.get(NOTES_REF):
            delta = self._note_delta(self._refs.get(NOTES_REF), refs.get(NOTES_REF))
            for commit, blob in delta.items():
                if blob:
                    self._notes[commit] = blob
                else:
                    self._notes.pop(commit, None)
        new_commits = set(new.values())
        stale = {commit: blob for commit, blob in delta.items() if blob and commit in by_commit}
        stale.update({commit: self._notes[commit] for commit in new_commits if commit in self._notes})
        raw = self.store.cat_blobs([*new.values(), *stale.values()])
        for cid, commit in new.items():
            if commit in raw:
                parents, created, subject, trailers = parse_commit(raw[commit])
                snap.candidates[cid] = by_commit[commit] = Candidate(
                    run=snap.run, id=cid, commit=commit, parents=parents, created=created, subject=subject,
                    trailers=trailers)
                changed.add(cid)
        for commit, blob in stale.items():
            results, bad = parse_note(raw.get(blob, b"").decode("utf-8", "replace"))
            self._set_bad(commit, bad)
            cand = by_commit.get(commit)
            if cand is not None:
                snap.candidates[cand.id] = by_commit[commit] = dataclasses.replace(
                    cand, results=tuple(Result.of(r) for r in results))
                changed.add(cand.id)
        for commit in (c for c, blob in delta.items() if not blob):  # a note was removed
            self._set_bad(commit, 0)
            cand = by_commit.get(commit)
            if cand is not None:
                snap.candidates[cand.id] = by_commit[commit] = dataclasses.replace(cand, results=())
                changed.add(cand.id)
        snap.best_commit = refs.get(BEST_REF)
        snap.bad_lines = {commit: bad for commit, bad in self._bad.items() if commit in by_commit}
        snap.malformed_notes = sum(snap.bad_lines.values())
        self._refs = refs
        return changed


def candidate_at(store: Repository, commit: str) -> Candidate | None:
    """The candidate a commit is, whichever run it belongs to (None: not a candidate, or gone)."""
    raw = store.cat_blobs([commit]).get(commit)
    if not raw:
        return None
    parents, created, subject, trailers = parse_commit(raw)
    if "Id" not in trailers:
        return None
    return Candidate(run=trailers.get("Run", ""), id=trailers["Id"], commit=commit, parents=parents, created=created,
                     subject=subject, trailers=trailers,
                     results=tuple(Result.of(line) for line in store.note_lines(commit)))


ALL_RUNS = "(all runs)"  # the TUI's name for the merged view


def run_letters(runs: list[str]) -> dict[str, str]:
    """The letter of each run in the merged view (the latest 26): a candidate there is `b00003`."""
    return {run: chr(ord("a") + i) for i, run in enumerate(runs[-26:])}


def legend(letters: dict[str, str]) -> str:
    """Which letter is which run: `a r1, b r2`."""
    return ", ".join(f"{letter} {run}" for run, letter in letters.items())


class MergedReader:
    """Several runs of one problem read as one population (the TUI's view of all runs, where `evolve pull`
    brought other clones'): a candidate's id is its run's letter and its id (`b00003`: the second run's
    00003), so ids stay six characters (`legend` says which letter is which run)."""

    def __init__(self, store: Repository, runs: list[str]) -> None:
        self.letters = run_letters(runs)
        self.readers = [RunReader(store, run) for run in self.letters]
        self.snapshot = Snapshot(run=ALL_RUNS)
        self._by_commit: dict[str, Candidate] = {}

    def refresh(self) -> set[str]:
        """Each run's reader refreshed; only the candidates they report changed are copied under new ids."""
        changed = set()
        candidates = self.snapshot.candidates
        for reader in self.readers:
            letter = self.letters[reader.snapshot.run]
            for cid in reader.refresh():
                new = reader.snapshot.candidates.get(cid)
                old = candidates.pop(letter + cid, None)
                if old is not None and self._by_commit.get(old.commit) is old:
                    del self._by_commit[old.commit]
                if new is not None:
                    candidates[letter + cid] = merged = dataclasses.replace(new, id=letter + cid)
                    self._by_commit.setdefault(new.commit, merged)  # a kernel two runs made: shown by one of them
                changed.add(letter + cid)
        if changed:
            self.snapshot = Snapshot(run=ALL_RUNS, candidates=candidates,
                                     best_commit=self.readers[0].snapshot.best_commit if self.readers else None,
                                     malformed_notes=sum(r.snapshot.malformed_notes for r in self.readers),
                                     bad_lines={k: v for r in self.readers for k, v in r.snapshot.bad_lines.items()})
        return changed

    def by_commit(self) -> dict[str, Candidate]:
        return dict(self._by_commit)
