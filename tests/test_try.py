"""Candidates from outside the loop: `evolve try` judges a kernel directory as a candidate would be judged and
writes nothing; `evolve add` records one (a directory or a ref) as a candidate and judges it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolver.records.store import Store
from tests.conftest import evolve, git, make_repo

pytestmark = pytest.mark.slow


def refs_and_notes(repo: Path) -> str:
    return git(repo, "for-each-ref") + git(repo, "status", "--porcelain")


def test_try_judges_a_directory_and_compares_it_with_best(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    sort = repo / "examples" / "sort"
    assert evolve(sort, "start", "--max-candidates", "3").returncode == 0
    before = refs_and_notes(repo)
    good = evolve(sort, "try", "seeds/mergesort")
    assert good.returncode == 0, good.stdout + good.stderr
    first = good.stdout.splitlines()[0]
    assert first.startswith("ok ") and " us (full mode, " in first
    assert good.stdout.splitlines()[1].startswith("against r1/")  # what `best` holds
    # at once on stderr: what is being judged and how, then the evaluator's own output as it comes
    assert good.stderr.startswith("judging ") and "in full mode" in good.stderr.splitlines()[0]
    assert "mean " in good.stderr and " us per list" in good.stderr  # examples/sort/check.py's progress
    data = json.loads(evolve(sort, "try", "seeds/mergesort", "--against", "1", "--json").stdout)
    assert data["status"] == "ok" and data["reference"]["id"] == "00001" and data["harness"]
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "sort.py").write_text("def sort_list(values) return values\n")
    bad = evolve(sort, "try", str(broken))
    assert bad.returncode == 1 and bad.stdout.startswith("compile_error") and "why: " in bad.stdout, bad.stdout
    seed = (sort / "seeds" / "mergesort" / "sort.py").read_text()
    tuned = evolve(sort, "try", "seeds/mergesort", "--set", "CUTOFF=12", "--json")  # a tunable set by hand
    assert tuned.returncode == 0, tuned.stdout + tuned.stderr
    assert tuned.stderr.startswith("with CUTOFF=12 (was 2)\njudging ") and json.loads(tuned.stdout)["settings"] == \
        ["CUTOFF=12 (was 2)"]
    assert "seeds/mergesort with CUTOFF=12 (a copy) in full mode" in tuned.stderr.splitlines()[1]
    assert (sort / "seeds" / "mergesort" / "sort.py").read_text() == seed  # judged in a copy
    held = evolve(sort, "try", "--ref", "best", "--set", "SKIP_ORDERED=1", "--json")  # best's kernel, no checkout
    assert held.returncode == 0, held.stdout + held.stderr
    assert [s.split(" (was ")[0] for s in json.loads(held.stdout)["settings"]] == ["SKIP_ORDERED=1"]
    assert "judging best's examples/sort/kernel/ with SKIP_ORDERED=1 (a copy)" in held.stderr
    both = evolve(sort, "try", "seeds/mergesort", "--ref", "best")
    assert both.returncode == 1 and "one kernel to judge, not two" in both.stderr and "Traceback" not in both.stderr
    unknown = evolve(sort, "try", "seeds/mergesort", "--set", "CUTOF=12")
    assert unknown.returncode == 1 and "Traceback" not in unknown.stderr
    assert "--set CUTOF=12: no tunable CUTOF is declared" in unknown.stderr and "CUTOFF" in unknown.stderr
    assert refs_and_notes(repo) == before  # no commit, branch, note or file of the user's changed


def test_try_without_a_directory_says_which(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    proc = evolve(repo / "examples" / "sort", "try")  # the kernel directory exists only once a run checks out
    assert proc.returncode == 1 and "no such directory" in proc.stderr and "Traceback" not in proc.stderr


def test_add_records_a_hand_made_kernel_and_judges_it(tmp_path: Path) -> None:

    repo = make_repo(tmp_path / "repo")
    sort = repo / "examples" / "sort"
    assert evolve(sort, "start", "--max-candidates", "2").returncode == 0
    made = len(Store(repo).snapshot("r1").candidates)
    hand = tmp_path / "hand"
    hand.mkdir()
    seed = (sort / "seeds" / "mergesort" / "sort.py").read_text()
    (hand / "sort.py").write_text(seed.replace("CUTOFF = ", "CUTOFF = 12  # was ", 1))
    added = evolve(sort, "add", str(hand), "--parent", "1", "-m", "a cutoff of 12, by hand")
    new_id = f"{made + 1:05d}"
    assert added.returncode == 0, added.stdout + added.stderr
    assert added.stdout.startswith(f"added r1/{new_id} (manual, a child of 00001): ok"), added.stdout
    c = Store(repo).snapshot("r1").candidates[new_id]
    assert c.op == "manual" and c.parent_ids == ("00001",) and c.status == "ok"
    assert "a cutoff of 12, by hand" in c.subject
    assert git(repo, "status", "--porcelain") == ""  # the user's tree untouched
    by_ref = evolve(sort, "add", "--ref", f"evolve/r1/{new_id}", "--parent", new_id)  # a branch's kernel
    next_id = f"{made + 2:05d}"
    assert by_ref.returncode == 0 and f"added r1/{next_id}" in by_ref.stdout, by_ref.stdout + by_ref.stderr
    assert Store(repo).snapshot("r1").candidates[next_id].result.cached_from is None  # judged, not copied
    tuned = evolve(sort, "add", "--ref", "evolve/r1/00001", "--parent", "1", "--set", "BINARY_INSERT=1")
    third = f"{made + 3:05d}"
    assert tuned.returncode == 0 and tuned.stdout.startswith("with BINARY_INSERT=1 (was 0)\n"), tuned.stdout
    assert f"added r1/{third}" in tuned.stdout
    c = Store(repo).snapshot("r1").candidates[third]
    assert "set by hand: BINARY_INSERT=1" in c.subject and c.parent_ids == ("00001",)
    assert "BINARY_INSERT = 1  # @tune" in git(repo, "show", f"{c.commit}:examples/sort/kernel/sort.py")
    nowhere = evolve(sort, "add", "--ref", "no-such-branch")
    assert nowhere.returncode == 1 and "--ref no-such-branch: no such commit" in nowhere.stderr, nowhere.stderr
    assert "Traceback" not in nowhere.stderr and "fatal" not in nowhere.stderr


def test_try_compares_with_best_in_its_own_mode() -> None:
    """`best`'s score is its confirmation's (`final`); a `full` try compared with it would be credited with the
    modes' difference (the H200's climb, 2026-12-04: a step 0.6% "faster" than best's final score was 0.3% slower
    than best's own full one). The try is compared with best's result in the try's mode, or not at all."""
    from evolver.commands.try_ import in_mode, report
    from evolver.records.candidates import Candidate, Result

    def line(score: float, mode: str, **more: object) -> dict[str, object]:
        return {"t": 1.0, "status": "ok", "score": score, "harness": "h1", "gpu": "g",
                "details": {"mode": mode, "unit": "us"}, **more}

    best = Candidate(run="r1", id="00002", commit="c" * 40, parents=(), created=1, subject="s",
                     trailers={"Op": "manual"},
                     results=(line(2730.4, "full"), line(2755.6, "final", confirm=True)))  # type: ignore[arg-type]
    tried = Result.of(line(2738.5, "full"))
    assert in_mode(best, "full", "h1").score == 2730.4  # type: ignore[union-attr]
    assert in_mode(best, "final", "h1").score == 2755.6  # type: ignore[union-attr]
    assert in_mode(best, "full", "h2") is None and in_mode(best, "quick", "h1") is None
    said = report(tried, best, "full", 12.0)
    assert said[1] == "against r1/00002 in full mode: 2730.4 us -> 0.997x (above 1: this one is faster)", said
    assert "not compared" in report(Result.of(line(2738.5, "quick")), best, "quick", None)[1]
