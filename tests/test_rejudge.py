"""`evolve rejudge`: a candidate judged again by today's judge; its result joins its note and `best` follows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evolver.commands.rejudge import rejudge
from evolver.evaluation.evaluate import Evaluator
from evolver.records.config import find_config, load_config
from evolver.records.store import Store
from tests.conftest import COUNTING, counting_repo, evolve, example_config

pytestmark = pytest.mark.slow


def evolved(tmp_path: Path, evaluation: str = COUNTING) -> Path:
    repo = counting_repo(tmp_path / "repo", example_config(
        evaluation=evaluation, evolution="operators = { tune = 1.0 }\nislands = 1\npopulation = 4\nseed = 3"))
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "5")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return repo


def test_rejudge_best_appends_a_confirmation_and_keeps_best(tmp_path: Path) -> None:
    repo = evolved(tmp_path, COUNTING + '\nconfirm_mode = "final"')
    before = Store(repo).snapshot("r1")
    best = before.by_commit()[before.best_commit or ""]
    proc = evolve(repo / "examples" / "sort", "rejudge", "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{best.id}: judged again in final mode: ok" in proc.stdout, proc.stdout
    assert f"best: {best.id}, score" in proc.stdout, proc.stdout
    after = Store(repo).snapshot("r1")
    again = after.candidates[best.id]
    assert len(again.results) == len(best.results) + 1
    assert again.results[-1].line["rejudged"] is True and again.results[-1].confirm is True
    assert again.results[-1].score == best.score  # the counting evaluator is deterministic
    assert after.best_commit == before.best_commit
    others = {c.id: c.results for c in after.candidates.values() if c.id != best.id}
    assert others == {c.id: c.results for c in before.candidates.values() if c.id != best.id}


def test_a_best_the_new_judge_rejects_loses_best(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = evolved(tmp_path)
    store = Store(repo)
    snap = store.snapshot("r1")
    old = snap.by_commit()[snap.best_commit or ""]
    runner_up = min((c for c in snap.candidates.values() if c.id != old.id and c.score is not None),
                    key=lambda c: (c.score, c.id))

    async def stronger(self: Evaluator, commit: str, slot: Any, mode: str | None = None) -> dict[str, Any]:
        return {"status": "rejected", "score": None, "error": "timed call 7 returned a wrong result",
                "harness": self.version_for(mode or "full"), "gpu": slot.fingerprint}

    monkeypatch.setattr(Evaluator, "evaluate", stronger)
    config = load_config(find_config(repo / "examples" / "sort"), repo)
    done = rejudge(config, store, "r1", lambda s: s.candidates[old.id], None, say=lambda line: None)
    assert done.result.status == "rejected" and done.best_before == old.id
    assert done.best is not None and done.best.id == runner_up.id
    after = Store(repo).snapshot("r1")
    assert after.best_commit == runner_up.commit
    assert after.candidates[old.id].result is not None and after.candidates[old.id].result.status == "rejected"


def test_rejudge_names_a_missing_candidate_in_one_line(tmp_path: Path) -> None:
    repo = evolved(tmp_path)
    proc = evolve(repo / "examples" / "sort", "rejudge", "99999")
    assert proc.returncode == 1
    assert proc.stderr.strip() == "evolve: error: no candidate '99999' in run 'r1'", proc.stderr
