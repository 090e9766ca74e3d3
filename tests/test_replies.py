"""Replies a strong model would write for the QR seed's real prompt (tests/data/qr_replies.json), kept in step
with the seed, and replayed over real HTTP through `evolve start` (the flagship's prompt, 33k tokens): every
reply accounted for in the funnel, a part asked for and shown in a second turn, a SEARCH that matched several
places and one that misquoted a line repaired on the retry. The same fixture drives the H200 run
(bench/llm_pass.sh), where the candidates are judged for real."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evolver.records.refs import REPLIES_REF
from evolver.records.store import Store
from evolver.search.edits import EditError, apply_reply
from tests.conftest import DATA, ROOT, evolve, git
from tests.fake_llm import FakeLLM

FIXTURE = DATA / "qr_replies.json"
SEED = ROOT / "seed_kernels" / "tsqr_wy"
PROPOSALS = json.loads(FIXTURE.read_text())["proposals"]


def seed_files() -> dict[str, str]:
    return {p.name: p.read_text() for p in SEED.iterdir() if p.suffix in (".py", ".cu")}


def test_the_fixture_is_what_its_notes_say() -> None:
    """At least ten proposals; tunables, thresholds and CUDA edits of several files; every proposal's last turn
    applies to the seed as it is (so the fixture follows the seed), and the first turn of each special one fails
    the way its note says."""
    assert len(PROPOSALS) >= 10
    touched = set()
    for p in PROPOSALS:
        fates = []
        for turn in p["turns"]:
            try:
                fates.append(apply_reply(turn, seed_files(), "kernel", truncated=False, allow_rewrite=True))
            except EditError as exc:
                fates.append(str(exc))
        assert not isinstance(fates[-1], str), (p["name"], fates[-1])
        touched |= set(fates[-1].changed)
        if "SEARCH that matches several" in p["note"]:
            assert "SEARCH matches" in fates[0]
        if "not in the parent" in p["note"]:
            assert "SEARCH does not match" in fates[0] and "Your SEARCH began:\nNB = 64" in fates[0]
        if "asks for a part" in p["note"]:
            assert "SHOW kernel/qr.cu:" in p["turns"][0] and "<<<<<<<" not in p["turns"][0]
    assert {"kernel.py", "qr.cu", "common.cu", "tf32x3.cu"} <= touched


SCRIPTED = """import hashlib, json, pathlib, sys
args = sys.argv[1:]
kernel = pathlib.Path(args[args.index("--kernel-dir") + 1])
text = "".join(p.read_text() for p in sorted(kernel.iterdir()) if p.is_file())
print(json.dumps({"status": "ok", "score": 2800 + int(hashlib.sha256(text.encode()).hexdigest(), 16) % 100,
                  "unit": "us"}))
"""


@pytest.mark.slow
def test_the_replies_replayed_through_evolve_start(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "seed_kernels").mkdir(parents=True)
    shutil.copytree(SEED, repo / "seed_kernels" / "tsqr_wy")
    (repo / "GUIDANCE.md").write_text((ROOT / "seed_kernels" / "GUIDANCE.md").read_text())
    (repo / "judge.py").write_text(SCRIPTED)  # every kernel ok: this test is about the replies, not the GPU
    with FakeLLM([], replay=FIXTURE) as llm:
        (repo / "evolve.toml").write_text(
            '[problem]\nkernel_dir = "kernel"\nseeds = ["seed_kernels/tsqr_wy"]\nguidance = "GUIDANCE.md"\n'
            '[evaluation]\ncommand = "{python} judge.py --kernel-dir {kernel_dir}"\nfiles = ["judge.py"]\n'
            'gpus = []\nslots = 2\ntimeout_s = 60\n'
            f'[llm]\nbase_url = "{llm.url}"\nmodel = "replayed-strong"\napi_key_env = ""\ntimeout_s = 20\n'
            'input_usd_per_mtok = 2.0\noutput_usd_per_mtok = 8.0\n'
            '[evolution]\noperators = { mutate = 1.0 }\nislands = 1\nexplore = 0.0\nseed = 5\n')
        git(tmp_path, "init", "-q", "-b", "main", str(repo))
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "the QR seed, replies replayed")
        proc = evolve(repo, "start", "--max-candidates", str(len(PROPOSALS) + 1))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        served = list(llm.replay.served) if llm.replay else []
    turns = sum(len(p["turns"]) for p in PROPOSALS)
    assert len(served) == turns, served  # every turn asked for, none twice
    status = json.loads(evolve(repo, "status", "--json").stdout)
    f = status["funnel"]["mutate@replayed-strong"]
    assert (f["made"], f["replies"], f["applied"]) == (len(PROPOSALS), turns, len(PROPOSALS)), f
    store = Store(repo)
    snap = store.snapshot("r1")
    shown = [r for c in snap.candidates.values() for r in store.note_lines(c.commit, REPLIES_REF) if r.get("shown")]
    assert [r["shown"] for r in shown] == [["qr.cu:135-160"]]
    prompts = [body["messages"][1]["content"] for _, body in llm.log if len(body["messages"]) == 2]
    assert all("kernel/reg_panel.cu\n```" in p and "not shown whole" not in p for p in prompts)
    text = evolve(repo, "status").stdout
    assert f"mutate@replayed-strong: {len(PROPOSALS)} made: {turns} replies -> {len(PROPOSALS)} applied" in text
