"""The git store: the only module that runs git.

Candidates are commits on branches `evolve/<run>/<id>`, built with plumbing (a private index file, never
the user's index or working tree). Results are JSON lines appended to notes in `refs/notes/evolve`.
`best` moves by compare-and-swap. Bulk reads use one `for-each-ref`, one `notes list` and one
`cat-file --batch`, so a snapshot of 10,000 candidates costs three git processes.

Strings that may come from an LLM reach git only on stdin, never as arguments.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import tarfile
from pathlib import Path
from typing import Any, Iterable

from evolver.records import lock
from evolver.records.candidates import Snapshot, parse_note
from evolver.records.reader import RunReader  # a run is read through it
from evolver.records.refs import BEST_REF, NOTES_REF, REPLIES_REF, RUN_REF
from evolver.records.stall import stall_env

ZERO = "0" * 40
# evolve authors its commits and notes itself: no git identity needs to be configured, and none leaks
IDENTITY = {"GIT_AUTHOR_NAME": "evolve", "GIT_AUTHOR_EMAIL": "evolve@localhost",
            "GIT_COMMITTER_NAME": "evolve", "GIT_COMMITTER_EMAIL": "evolve@localhost"}


class StoreError(Exception):
    """A git problem a user can act on; str() is the message."""


# --- the repository -------------------------------------------------------------------------------------

class Store:
    """One repository. All git access of the engine, CLI and TUI goes through here."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git_dir = Path(self._git("rev-parse", "--absolute-git-dir").strip())
        self.common_dir = Path(self._git("rev-parse", "--path-format=absolute", "--git-common-dir").strip())
        self._work = self.git_dir / "evolve"
        self._work.mkdir(exist_ok=True)
        self._lock_fd: int | None = None
        self._owned: dict[str, str | None] = {}  # ref -> where the running engine left it (`own_refs`)

    @classmethod
    def discover(cls, start: Path) -> "Store":
        """The repository containing `start`, found as git finds it."""
        import git  # GitPython: repository discovery with git's own rules, and its error types

        try:
            with git.Repo(start, search_parent_directories=True) as repo:
                top = repo.working_tree_dir
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise StoreError(f"{start} is not inside a git repository (run `git init` first)") from None
        if top is None:
            raise StoreError(f"{start}: a bare repository has no place for evolve.toml")
        return cls(Path(top))

    # -- plumbing ---------------------------------------------------------------------------------------
    def _git(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None,
             check: bool = True) -> str:
        return self._git_bytes(*args, input=input, env=env, check=check).decode("utf-8", "replace")

    def git(self, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
        """A git command in this repository, for what moves refs between clones (commands/share.py)."""
        return self._git(*args, env=env, check=check)

    def remote(self, *args: str) -> str:
        """A git command that talks to a remote (fetch, push): one whose server stalls fails instead of hanging
        (records/stall.py: the user's own settings come first)."""
        try:
            env = stall_env(lambda key: self._git("config", "--get", key, check=False).strip())
        except ValueError as exc:
            raise StoreError(str(exc)) from None
        return self._git(*args, env=env)

    def _git_proc(self, *args: str, input: bytes | None = None,
                  env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        """Every git process of the program starts here."""
        full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})}
        return subprocess.run(["git", "-c", "gc.auto=0", "-c", "core.hooksPath=/dev/null", *args],
                              cwd=self.root, input=input, capture_output=True, env=full_env)

    def _git_bytes(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None,
                   check: bool = True) -> bytes:
        proc = self._git_proc(*args, input=input, env=env)
        if check and proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            said = [line for line in err if line.startswith(("fatal:", "error:"))] or err[-1:]  # git's own reason
            raise StoreError(f"git {args[0]} failed: {said[0] if said else 'exit ' + str(proc.returncode)}")
        return proc.stdout

    def rev_parse(self, rev: str) -> str | None:
        out = self._git("rev-parse", "--verify", "--quiet", "--end-of-options", rev, check=False).strip()
        return out or None

    def head_commit(self) -> str:
        head = self.rev_parse("HEAD^{commit}")
        if head is None:
            raise StoreError("the repository has no commits yet; commit evolve.toml and the seeds first")
        return head

    def is_dirty(self) -> bool:
        return bool(self._git("status", "--porcelain", "--untracked-files=no").strip())

    def tree_entry(self, commit: str, path: str) -> str | None:
        """Object id of `path` in `commit` (a tree or blob), or None."""
        return self.rev_parse(f"{commit}:{path}")

    def read_files(self, commit: str, directory: str) -> dict[str, bytes]:
        """Files under `directory` in `commit`, keyed by path relative to `directory`."""
        listing = self._git("ls-tree", "-r", "-z", "--full-tree", commit, "--", directory + "/")
        entries: list[tuple[str, str]] = []
        for item in listing.split("\0"):
            if not item:
                continue
            meta, path = item.split("\t", 1)
            mode, kind, sha = meta.split()
            if kind == "blob":
                entries.append((path[len(directory) + 1:], sha))
        contents = self.cat_blobs([sha for _, sha in entries])
        return {rel: contents[sha] for rel, sha in entries}

    def cat_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Contents of many objects with one `cat-file --batch`."""
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        raw = self._git_bytes("cat-file", "--batch", input="".join(s + "\n" for s in wanted).encode())
        out: dict[str, bytes] = {}
        pos = 0
        for sha in wanted:
            end = raw.index(b"\n", pos)
            header = raw[pos:end].split()
            pos = end + 1
            if len(header) < 3 or header[1] == b"missing":
                continue
            size = int(header[2])
            out[sha] = raw[pos:pos + size]
            pos += size + 1
        return out

    def modes(self, commit: str, directory: str) -> dict[str, str]:
        """Git file modes (100644, 100755, 120000 for a symlink) of the files under `directory` in `commit`."""
        listing = self._git("ls-tree", "-r", "-z", "--full-tree", commit, "--", directory + "/")
        out = {}
        for item in listing.split("\0"):
            if item:
                meta, path = item.split("\t", 1)
                out[path[len(directory) + 1:]] = meta.split()[0]
        return out

    def write_tree(self, base: str, directory: str, files: dict[str, bytes],
                   modes_from: tuple[str, str] | None = None) -> tuple[str, str]:
        """`base`'s tree with `directory` replaced by `files`: (tree id, the id of `directory` in it, the
        cache key for the trailers). A file keeps the mode it has under `directory` in `base`, or under the
        (commit, directory) `modes_from` (a seed's own directory): executable bit, symlink; a new one is
        100644. A private index file keeps the user's index untouched."""
        index = self._work / f"index-{os.getpid()}"
        env = {"GIT_INDEX_FILE": str(index), **IDENTITY}
        modes = self.modes(*(modes_from or (base, directory)))
        try:
            self._git("read-tree", base, env=env)
            old = self._git("ls-files", "-z", "--", directory + "/", env=env).split("\0")
            lines = [f"0 {ZERO}\t{p}" for p in old if p]
            for rel, data in sorted(files.items()):
                sha = self._git("hash-object", "-w", "--stdin", input=data).strip()
                lines.append(f"{modes.get(rel, '100644')} {sha}\t{directory}/{rel}")
            self._git("update-index", "-z", "--index-info", input="\0".join(lines).encode() + b"\0", env=env)
            tree = self._git("write-tree", env=env).strip()
        finally:
            index.unlink(missing_ok=True)
        return tree, self.tree_entry(tree, directory) or ""

    def commit_tree(self, tree: str, parents: list[str], message: str) -> str:
        """A commit of `tree`, authored by evolve; the message travels on stdin."""
        parent_args = [a for p in parents for a in ("-p", p)]
        return self._git("commit-tree", tree, *parent_args, "-F", "-", input=message.encode(), env=IDENTITY).strip()

    def write_candidate(self, parents: list[str], base: str, directory: str, files: dict[str, bytes],
                        message: str) -> str:
        """`write_tree` and `commit_tree` in one: the new commit id."""
        return self.commit_tree(self.write_tree(base, directory, files)[0], parents, message)

    def merge_trees(self, a: str, b: str) -> tuple[bool, str]:
        """Three-way merge of commits `a` and `b` against their merge base, without a work tree:
        (clean, tree). A conflicted tree holds the conflict markers."""
        proc = self._git_proc("merge-tree", "--write-tree", "--no-messages", a, b)
        if proc.returncode not in (0, 1) or not proc.stdout:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise StoreError(f"git merge-tree failed: {err[-1] if err else proc.returncode} (needs git 2.38 or newer)")
        return proc.returncode == 0, proc.stdout.decode().split()[0]

    def merge_base(self, a: str, b: str) -> str | None:
        out = self._git("merge-base", a, b, check=False).strip()
        return out or None

    def create_branch(self, ref: str, commit: str) -> bool:
        """Create `ref` at `commit`; False if it exists already (compare-and-swap against the zero id)."""
        proc = self._git_proc("update-ref", "-m", "evolve: new candidate", ref, commit, ZERO)
        if proc.returncode != 0 and self.rev_parse(ref) is None:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise StoreError(f"git update-ref failed: {err[-1] if err else proc.returncode}")
        return proc.returncode == 0

    # -- the refs the engine owns ----------------------------------------------------------------------
    # While an engine runs, the notes ref and `best` change only through it. It records what it wrote
    # (`own_refs`), and before each write puts back anything else found there (`restore_owned`): an
    # evaluation without a sandbox can run git in the repository, but its notes and its `best` never last.

    def own_refs(self) -> None:
        self._owned = self._owned_now()

    def _owned_now(self) -> dict[str, str | None]:
        out = self._git("for-each-ref", "--format=%(refname) %(objectname)", NOTES_REF, BEST_REF)
        found = dict(line.split() for line in out.splitlines() if line)
        return {ref: found.get(ref) for ref in (NOTES_REF, BEST_REF)}

    def restore_owned(self) -> list[str]:
        """Put the owned refs back where the engine left them; the names of those that had moved."""
        if not self._owned:
            return []
        moved = []
        for ref, now in self._owned_now().items():
            mine = self._owned[ref]
            if now == mine:
                continue
            moved.append(ref)
            if mine is None:
                self._git("update-ref", "-d", ref, now or ZERO, check=False)
            else:
                self._git("update-ref", "-m", "evolve: restored", ref, mine, now or ZERO, check=False)
        return moved

    def append_note(self, commit: str, record: dict[str, Any]) -> None:
        """Append a JSON line to `commit`'s note. With owned refs, the new notes commit must sit on the one
        the engine left: if another process wrote in between, its commit is dropped and the line appended
        again."""
        line = json.dumps(record, sort_keys=True, separators=(",", ":"))
        for _ in range(3):
            self._git("notes", "--ref", NOTES_REF, "append", "-F", "-", commit, input=line.encode() + b"\n",
                      env=IDENTITY)
            if not self._owned:
                return
            tip = self.rev_parse(NOTES_REF)
            if self.rev_parse(f"{tip}^") == self._owned[NOTES_REF]:  # (a first note: both None)
                self._owned[NOTES_REF] = tip
                return
            self.restore_owned()
        raise StoreError("the notes ref keeps changing under evolve: another process writes to it")

    def add_replies(self, commit: str, replies: list[dict[str, Any]]) -> None:
        """Keep an attempt's LLM replies next to the child they made, one JSON line each (shown, never used)."""
        lines = "".join(json.dumps(r, sort_keys=True) + "\n" for r in replies)
        self._git("notes", "--ref", REPLIES_REF, "add", "-f", "-F", "-", commit, input=lines.encode(), env=IDENTITY)

    def note_lines(self, commit: str, ref: str = NOTES_REF) -> list[dict[str, Any]]:
        """The JSON lines of one commit's note in `ref` (none if it has no note)."""
        proc = self._git_proc("notes", "--ref", ref, "show", commit)
        return parse_note(proc.stdout.decode("utf-8", "replace"))[0] if proc.returncode == 0 else []

    def move_best(self, new: str, old: str | None) -> bool:
        """Compare-and-swap `best` from `old` to `new`. False when `best` is checked out or moved meanwhile."""
        head = self._git("symbolic-ref", "-q", "HEAD", check=False).strip()
        if head == BEST_REF:
            return False  # moving the checked-out branch would make the user's work tree look changed
        try:
            self._git("update-ref", "-m", "evolve: new best", BEST_REF, new, old or ZERO)
        except StoreError:
            return False
        if self._owned:
            self._owned[BEST_REF] = new
        return True

    def set_meta(self, ref: str, record: dict[str, Any]) -> None:
        """Store a small JSON record as a blob under a ref (run metadata survives restarts in git)."""
        sha = self._git("hash-object", "-w", "--stdin", input=json.dumps(record, sort_keys=True).encode()).strip()
        self._git("update-ref", ref, sha)

    def get_meta(self, ref: str) -> dict[str, Any] | None:
        sha = self.rev_parse(ref)
        return None if sha is None else (_json_dict(self.cat_blobs([sha]).get(sha)) or None)

    def runs(self, kernel_dir: str | None = None) -> list[str]:
        """The runs of this repository, oldest first: in the order their records were made (`created`; r10
        comes after r9); with `kernel_dir`, only the runs of that problem (the one whose kernel directory a run
        evolves)."""
        refs = [line.split(" ", 1) for line in self._git("for-each-ref", "--format=%(objectname) %(refname)",
                                                          RUN_REF.format(run="")).splitlines() if line]
        blobs, found = self.cat_blobs([sha for sha, _ in refs]), []
        for sha, ref in refs:
            record = _json_dict(blobs.get(sha))
            when, name = record.get("created"), ref.rsplit("/", 1)[-1]
            if kernel_dir is None or record.get("kernel_dir") == kernel_dir:
                order = [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]  # r2 before r10
                found.append((when if isinstance(when, (int, float)) else 0.0, order, name))
        return [name for *_, name in sorted(found)]

    def in_history(self, commit: str) -> bool:
        """Whether `commit` is in this clone's own history: reachable from HEAD or a local branch other than
        evolve's (candidates and `best`, which `evolve pull` brings from other clones)."""
        if self._git_proc("merge-base", "--is-ancestor", commit, "HEAD").returncode == 0:
            return True
        out = self._git("for-each-ref", "--contains", commit, "--format=%(refname)", "refs/heads/", check=False)
        return any(not ref.startswith(("refs/heads/evolve/", BEST_REF)) for ref in out.splitlines() if ref)

    def archive(self, commit: str, paths: list[str], dest: Path) -> None:
        """Write `paths` of `commit` under `dest` (a temporary directory; never the work tree)."""
        data = self._git_bytes("archive", "--format=tar", commit, "--", *paths)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(dest, filter="data")

    def pack_refs(self) -> None:
        """Pack loose refs into one file, as `git gc` would: listing 10,000 candidate branches then costs one
        file read instead of 10,000 (the TUI lists them on every poll). Best effort."""
        self._git("pack-refs", "--all", check=False)

    def add_worktree(self, commit: str, path: Path) -> None:
        """A separate, detached worktree of `commit` at `path` (the user's own work tree is not touched)."""
        self._git("worktree", "add", "--detach", "--", str(path), commit)

    def message(self, commit: str) -> str:
        return self._git("log", "-1", "--format=%B", commit, "--").strip()

    def diff(self, old: str, new: str, path: str) -> str:
        return self._git("diff", "--no-color", "--no-ext-diff", old, new, "--", path)

    # -- bulk reads -------------------------------------------------------------------------------------
    def snapshot(self, run: str) -> Snapshot:
        """Everything the run knows: candidates, their results, `best`. A few git processes, any size."""
        reader = RunReader(self, run)
        reader.refresh()
        return reader.snapshot

    def ref_listing(self, run: str) -> dict[str, str]:
        """refname -> object id for the run's candidates, `best` and the notes ref: one cheap call."""
        out = self._git("for-each-ref", "--format=%(objectname) %(refname)", f"refs/heads/evolve/{run}/",
                        NOTES_REF, BEST_REF)
        pairs = (line.split(" ", 1) for line in out.splitlines() if line)
        return {ref: obj for obj, ref in pairs}

    def note_listing(self, known: bool | None = None) -> dict[str, str]:
        """annotated commit -> note blob. `known`: whether the notes ref exists, if the caller knows."""
        if known is False or (known is None and self.rev_parse(NOTES_REF) is None):
            return {}
        listing = self._git("notes", "--ref", NOTES_REF, "list")
        return {obj: note for note, obj in (line.split() for line in listing.splitlines() if line.strip())}

    def note_changes(self, old: str, new: str) -> dict[str, str] | None:
        """annotated commit -> its note blob ("" where the note went) between two commits of the notes ref:
        a tree diff, which reads only what changed; None if it cannot be computed (say, `old` is gone)."""
        try:
            out = self._git("diff-tree", "-r", "--no-renames", "--no-commit-id", old, new)
        except StoreError:
            return None
        removed: dict[str, str] = {}
        written: dict[str, str] = {}
        for line in out.splitlines():
            meta, _, path = line.partition("\t")
            fields = meta.split()
            if len(fields) == 5 and path:  # ":100644 100644 <old blob> <new blob> M", the path fanned out
                (removed if fields[4] == "D" else written)[path.replace("/", "")] = "" if fields[4] == "D" \
                    else fields[3]
        return removed | written  # when git re-fans the tree, a note is removed at one path, added at another

    # -- the single writer ------------------------------------------------------------------------------
    def lock(self) -> None:
        """Take the repository's evolve lock (evolver/records/lock.py): one engine per repository."""
        self._lock_fd = lock.take(self.common_dir, self.git_dir)
        if self._lock_fd is None:
            raise StoreError("another `evolve start` is running in this repository")

    def unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

def _json_dict(data: bytes | None) -> dict[str, Any]:
    try:
        value = json.loads(data or b"")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
