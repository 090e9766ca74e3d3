"""The git store: the only module that runs git.

Candidates are commits on branches `evolve/<run>/<id>`, built with plumbing (a private index file, never
the user's index or working tree). Results are JSON lines appended to notes in `refs/notes/evolve`.
`best` moves by compare-and-swap. Bulk reads use one `for-each-ref`, one `notes list` and one
`cat-file --batch`, so a snapshot of 10,000 candidates costs three git processes.

Strings that may come from an LLM reach git only on stdin, never as arguments.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import subprocess
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

NOTES_REF = "refs/notes/evolve"
BEST_REF = "refs/heads/best"
ZERO = "0" * 40
TRAILER_PREFIX = "Evolve-"
# evolve authors its commits and notes itself: no git identity needs to be configured, and none leaks
IDENTITY = {"GIT_AUTHOR_NAME": "evolve", "GIT_AUTHOR_EMAIL": "evolve@localhost",
            "GIT_COMMITTER_NAME": "evolve", "GIT_COMMITTER_EMAIL": "evolve@localhost"}
PROVENANCE_KEYS = ("Model", "Tokens", "Cost-USD", "Tune", "Edit", "Attempts")  # trailers worth showing a user


class StoreError(Exception):
    """A git problem a user can act on; str() is the message."""


@dataclass(frozen=True)
class Candidate:
    """One candidate as the store sees it: its commit, provenance trailers and result lines."""

    run: str
    id: str
    commit: str
    parents: tuple[str, ...]
    created: int  # committer time, unix seconds
    subject: str
    trailers: dict[str, str]
    results: tuple[dict[str, Any], ...] = ()  # parsed note lines, oldest first

    @property
    def op(self) -> str:
        return self.trailers.get("Op", "?")

    @property
    def kernel_tree(self) -> str:
        return self.trailers.get("Kernel-Tree", "")

    @property
    def parent_ids(self) -> tuple[str, ...]:
        value = self.trailers.get("Parent", "")
        return tuple(p for p in value.split(",") if p)

    @property
    def island(self) -> int:
        try:
            return int(self.trailers.get("Island", "0"))
        except ValueError:
            return 0

    @property
    def cost_usd(self) -> float:
        try:
            return float(self.trailers.get("Cost-USD", "0"))
        except ValueError:
            return 0.0

    @property
    def result(self) -> "dict[str, Any] | None":
        """The final result: the last well-formed result line, if any."""
        for line in reversed(self.results):
            if "status" in line and not line.get("confirm"):
                return line  # type: ignore[no-any-return]  # (mypy sees the tuple's items as Any)
        return None

    @property
    def confirmation(self) -> dict[str, Any] | None:
        """The last re-measurement in the thorough mode (`confirm` step), if any."""
        for line in reversed(self.results):
            if line.get("confirm") and "status" in line:
                return line  # type: ignore[no-any-return]
        return None

    @property
    def score(self) -> float | None:
        r = self.result
        if r is None or r.get("status") != "ok":
            return None
        score = r.get("score")
        return float(score) if isinstance(score, (int, float)) else None


@dataclass
class Snapshot:
    run: str
    candidates: dict[str, Candidate] = field(default_factory=dict)  # by id
    best_commit: str | None = None
    malformed_notes: int = 0
    bad_lines: dict[str, int] = field(default_factory=dict)  # commit -> malformed lines in its note

    def by_commit(self) -> dict[str, Candidate]:
        return {c.commit: c for c in self.candidates.values()}


# --- pure helpers --------------------------------------------------------------------------------------

def is_text(data: bytes) -> bool:
    """Whether a file is UTF-8 text (what an LLM may read and edit); anything else is kept as bytes."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\0" not in data


def git_blob_hash(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def git_tree_hash(files: dict[str, bytes]) -> str:
    """The hash git gives the tree of `files` (relative paths -> contents, mode 100644).

    Lets the engine recognise a duplicate kernel before writing anything.
    """
    entries: dict[str, tuple[bytes, bytes]] = {}
    subdirs: dict[str, dict[str, bytes]] = {}
    for path, data in files.items():
        head, _, rest = path.partition("/")
        if rest:
            subdirs.setdefault(head, {})[rest] = data
        else:
            entries[head] = (b"100644", bytes.fromhex(git_blob_hash(data)))
    for name, sub in subdirs.items():
        entries[name] = (b"40000", bytes.fromhex(git_tree_hash(sub)))
    # git sorts tree entries by name, with directories compared as if they ended in "/"
    ordered = sorted(entries.items(), key=lambda kv: kv[0] + ("/" if kv[1][0] == b"40000" else ""))
    body = b"".join(mode + b" " + name.encode() + b"\0" + sha for name, (mode, sha) in ordered)
    return hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()


def clean_text(text: str) -> str:
    """Text an LLM wrote, made safe for a commit message: no NUL or other control characters (tabs and
    newlines kept), no lone surrogates (git and UTF-8 refuse them)."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    return "".join(ch for ch in text if ch in "\n\t" or ch >= " " and ch != "\x7f")


def format_message(subject: str, body: str, trailers: dict[str, str]) -> str:
    subject, body = clean_text(subject), clean_text(body)
    trailers = {k: clean_text(str(v)) for k, v in trailers.items()}
    clean_body = body.strip().replace("\r", "")
    lines = [subject.strip().splitlines()[0][:120] if subject.strip() else "evolve candidate", ""]
    if clean_body:
        lines += [clean_body, ""]
    lines += [f"{TRAILER_PREFIX}{k}: {' '.join(str(v).split())}" for k, v in trailers.items()]
    return "\n".join(lines) + "\n"


def parse_note(text: str) -> tuple[list[dict[str, Any]], int]:
    """JSON lines of a note; blank lines (from `git notes append`) are skipped, bad lines counted."""
    out: list[dict[str, Any]] = []
    bad = 0
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if isinstance(value, dict):
            out.append(value)
        else:
            bad += 1
    return out, bad


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
            raise StoreError(f"git {args[0]} failed: {err[-1] if err else 'exit ' + str(proc.returncode)}")
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
        if sha is None:
            return None
        data = self.cat_blobs([sha]).get(sha)
        try:
            value = json.loads(data or b"")
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None

    def runs(self) -> list[str]:
        out = self._git("for-each-ref", "--sort=creatordate", "--format=%(refname)", "refs/evolve/runs/")
        return [line.rsplit("/", 1)[-1] for line in out.splitlines() if line]

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
        """Take the repository's evolve lock (one engine per repository, whichever worktree it runs in:
        the lock lives in the common git directory).

        flock dies with its process, so a `kill -9` leaves no stale lock; ref lock files such a kill
        may leave behind are removed here, which is safe because only a lock holder writes these refs.
        """
        common = self.common_dir / "evolve"
        common.mkdir(exist_ok=True)
        fd = os.open(common / "engine.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreError("another `evolve start` is running in this repository") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd
        self._remove_stale_ref_locks()

    def _remove_stale_ref_locks(self) -> None:
        for area in ("refs/heads/evolve", "refs/evolve", "refs/notes"):
            base = self.git_dir / area
            if base.is_dir():
                for lock in base.rglob("*.lock"):
                    lock.unlink(missing_ok=True)
        for single in ("refs/heads/best.lock",):
            (self.git_dir / single).unlink(missing_ok=True)
        packed_lock = self.git_dir / "packed-refs.lock"  # shared with the user's git: only if clearly stale
        if packed_lock.exists() and time.time() - packed_lock.stat().st_mtime > 60:
            packed_lock.unlink(missing_ok=True)
        for stale in self._work.glob("index-*"):
            stale.unlink(missing_ok=True)

    def unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def now() -> float:
    return round(time.time(), 3)


def parse_commit(raw: bytes) -> tuple[tuple[str, ...], int, str, dict[str, str]]:
    """(parents, committer time, subject, Evolve- trailers) of a raw commit object."""
    header, _, message = raw.decode("utf-8", "replace").partition("\n\n")
    parents: list[str] = []
    created = 0
    for line in header.splitlines():
        if line.startswith("parent "):
            parents.append(line[7:].strip())
        elif line.startswith("committer "):
            try:
                created = int(line.rsplit(" ", 2)[-2])
            except (ValueError, IndexError):
                created = 0
    paragraphs = message.strip().split("\n\n")
    subject = paragraphs[0].splitlines()[0] if paragraphs and paragraphs[0] else ""
    trailers: dict[str, str] = {}
    for line in paragraphs[-1].splitlines() if len(paragraphs) > 1 else []:
        key, sep, value = line.partition(": ")
        if sep and key.startswith(TRAILER_PREFIX):
            trailers[key[len(TRAILER_PREFIX):]] = value.strip()
    return tuple(parents), created, subject, trailers


class RunReader:
    """Reads one run from git and keeps it current cheaply: each `refresh` lists the refs (one call) and
    reads only commits that are new and notes that changed. Used by `evolve status` (one refresh) and the
    TUI (a refresh per poll), so its work per refresh is proportional to what changed, not to the run."""

    def __init__(self, store: Store, run: str) -> None:
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
                snap.candidates[cand.id] = by_commit[commit] = Candidate(**{**cand.__dict__,
                                                                           "results": tuple(results)})
                changed.add(cand.id)
        for commit in (c for c, blob in delta.items() if not blob):  # a note was removed
            self._set_bad(commit, 0)
            cand = by_commit.get(commit)
            if cand is not None:
                snap.candidates[cand.id] = by_commit[commit] = Candidate(**{**cand.__dict__, "results": ()})
                changed.add(cand.id)
        snap.best_commit = refs.get(BEST_REF)
        snap.bad_lines = {commit: bad for commit, bad in self._bad.items() if commit in by_commit}
        snap.malformed_notes = sum(snap.bad_lines.values())
        self._refs = refs
        return changed
