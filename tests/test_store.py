from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from evolver.records.candidates import format_message, git_tree_hash, parse_note
from evolver.records.refs import BEST_REF, NOTES_REF
from evolver.records.store import Store, StoreError
from tests.conftest import git


def index_digest(repo: Path) -> str:
    return hashlib.sha1((repo / ".git" / "index").read_bytes()).hexdigest()


def test_tree_hash_matches_git(repo: Path) -> None:
    store = Store(repo)
    files = {"a.py": b"x = 1\n", "sub/b.cu": b"int y;\n", "sub/deeper/c.txt": b"", "a-b": b"1", "sub.x": b"2"}
    head = store.head_commit()
    commit = store.write_candidate([head], head, "k", files, "m\n")
    assert store.tree_entry(commit, "k") == git_tree_hash(files)


def test_candidates_never_touch_work_tree_or_index(repo: Path) -> None:
    (repo / "README.md").write_text("dirty, unstaged\n")
    (repo / "new.txt").write_text("untracked\n")
    git(repo, "add", "new.txt")
    status, index = git(repo, "status", "--porcelain"), index_digest(repo)
    store = Store(repo)
    head = store.head_commit()
    commit = store.write_candidate([head], head, "examples/sort/kernel", {"sort.py": b"pass\n"},
                                   format_message("s", "body from an LLM\n--force", {"Op": "tune"}))
    store.create_branch("refs/heads/evolve/r1/00001", commit)
    store.append_note(commit, {"status": "ok", "score": 1.5})
    assert store.move_best(commit, None)
    assert git(repo, "status", "--porcelain") == status and index_digest(repo) == index
    assert (repo / "README.md").read_text() == "dirty, unstaged\n"
    assert not (repo / "examples/sort/kernel").exists()
    # the candidate holds the user's committed files, not the dirty ones
    assert git(repo, "show", f"{commit}:README.md") == "user's project\n"


def test_branch_creation_and_best_are_compare_and_swap(repo: Path) -> None:
    store = Store(repo)
    head = store.head_commit()
    a = store.write_candidate([head], head, "k", {"f": b"1"}, "a\n")
    b = store.write_candidate([head], head, "k", {"f": b"2"}, "b\n")
    assert store.create_branch("refs/heads/evolve/r/00001", a)
    assert not store.create_branch("refs/heads/evolve/r/00001", b)  # taken: refused, not moved
    assert store.move_best(a, None)
    assert not store.move_best(b, None)  # stale expectation: refused
    assert store.move_best(b, a)
    assert store.rev_parse(BEST_REF) == b


def test_best_is_left_alone_when_checked_out(repo: Path) -> None:
    store = Store(repo)
    head = store.head_commit()
    a = store.write_candidate([head], head, "k", {"f": b"1"}, "a\n")
    assert store.move_best(head, None)
    git(repo, "checkout", "-q", "best")
    assert not store.move_best(a, head)
    assert store.rev_parse(BEST_REF) == head


def test_snapshot_reads_trailers_and_appended_notes(repo: Path) -> None:
    store = Store(repo)
    head = store.head_commit()
    msg = format_message("evolve r/00001: tune", "why:\nbecause", {"Id": "00001", "Op": "tune", "Parent": "00000",
                                                                  "Island": "1", "Cost-USD": "0.25"})
    c = store.write_candidate([head], head, "k", {"f": b"1"}, msg)
    store.create_branch("refs/heads/evolve/r/00001", c)
    store.append_note(c, {"status": "crash", "score": None})
    store.append_note(c, {"status": "ok", "score": 2.0})
    snap = store.snapshot("r")
    cand = snap.candidates["00001"]
    assert cand.op == "tune" and cand.island == 1 and cand.cost_usd == 0.25 and cand.parent_ids == ("00000",)
    assert [r.status for r in cand.results] == ["crash", "ok"] and cand.score == 2.0
    assert cand.parents == (head,)


def test_malformed_note_lines_are_counted_not_fatal(repo: Path) -> None:
    store = Store(repo)
    head = store.head_commit()
    c = store.write_candidate([head], head, "k", {"f": b"1"}, "m\n")
    store.create_branch("refs/heads/evolve/r/00001", c)
    git(repo, "notes", "--ref", NOTES_REF, "add", "-m", "not json {", c)
    git(repo, "notes", "--ref", NOTES_REF, "append", "-m", '{"status": "ok", "score": 3}', c)
    snap = store.snapshot("r")
    assert snap.malformed_notes == 1 and snap.candidates["00001"].score == 3.0
    assert parse_note('\n{"a": 1}\n[1]\n') == ([{"a": 1}], 1)


def test_engine_lock_is_exclusive_and_cleans_stale_ref_locks(repo: Path) -> None:
    first, second = Store(repo), Store(repo)
    stale = repo / ".git" / "refs" / "notes" / "evolve.lock"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text("")
    first.lock()
    assert not stale.exists()
    with pytest.raises(StoreError, match="another `evolve start`"):
        second.lock()
    first.unlock()
    second.lock()
    second.unlock()


def test_discover_outside_a_repository(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not inside a git repository"):
        Store.discover(tmp_path)


def test_run_reader_reads_only_what_changed(repo: Path) -> None:
    from evolver.records.reader import RunReader

    store = Store(repo)
    head = store.head_commit()
    commits = []
    for i in (1, 2):
        c = store.write_candidate([head], head, "k", {"f": str(i).encode()},
                                  format_message(f"c{i}", "", {"Id": f"0000{i}", "Op": "tune"}))
        store.create_branch(f"refs/heads/evolve/r/0000{i}", c)
        commits.append(c)
    reader = RunReader(store, "r")
    assert reader.refresh() == {"00001", "00002"}
    assert reader.refresh() == set()  # nothing moved: one ref listing, nothing read
    store.append_note(commits[1], {"status": "ok", "score": 4.0})
    assert reader.refresh() == {"00002"} and reader.snapshot.candidates["00002"].score == 4.0
    c3 = store.write_candidate([commits[0]], commits[0], "k", {"f": b"3"}, format_message("c3", "", {"Op": "tune"}))
    store.create_branch("refs/heads/evolve/r/00003", c3)
    store.append_note(c3, {"status": "crash", "score": None})
    assert reader.refresh() == {"00003"}
    assert reader.snapshot.candidates["00003"].parents == (commits[0],)
    assert reader.snapshot.candidates["00003"].result.line == {"status": "crash", "score": None}
    assert store.move_best(commits[1], None)
    reader.refresh()
    assert reader.snapshot.best_commit == commits[1]


def test_run_reader_follows_notes_through_tree_diffs(repo: Path) -> None:
    """Past a few hundred notes git fans the notes tree out into directories; the reader follows additions,
    rewrites, malformed notes and removals through diffs of that tree, and always agrees with a reader that
    reads everything afresh."""
    import random

    from evolver.records.reader import RunReader
    from evolver.records.refs import NOTES_REF

    store = Store(repo)
    head = store.head_commit()
    commits = []
    for i in range(1, 301):
        c = store.write_candidate([head], head, "k", {"f": str(i).encode()},
                                  format_message(f"c{i}", "", {"Id": f"{i:05d}", "Op": "tune"}))
        store.create_branch(f"refs/heads/evolve/r/{i:05d}", c)
        commits.append(c)
    reader = RunReader(store, "r")
    reader.refresh()
    rng = random.Random(3)

    def same_as_fresh() -> None:
        fresh = RunReader(store, "r")
        fresh.refresh()
        assert reader.snapshot == fresh.snapshot

    for round_ in range(4):
        picked = rng.sample(commits, 40)
        for c in picked[:30]:
            store.append_note(c, {"status": "ok", "score": float(rng.randint(1, 99))})
        for c in picked[30:35]:
            git(repo, "notes", "--ref", NOTES_REF, "add", "-f", "-m", "not json", c)
        for c in picked[35:]:
            subprocess.run(["git", "notes", "--ref", NOTES_REF, "remove", "--ignore-missing", c], cwd=repo,
                           check=True, capture_output=True)
        changed = reader.refresh()
        assert changed <= {f"{commits.index(c) + 1:05d}" for c in picked}
        same_as_fresh()
    assert len(git(repo, "ls-tree", NOTES_REF).splitlines()) < 300  # the notes tree did fan out
