"""README.md's CPU walk-through, verbatim, in a fresh clone with an empty home (no git identity, no config)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def readme_block(heading: str) -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index(heading):]
    match = re.search(r"```bash\n(.*?)```", section, re.S)
    assert match, f"no bash block under {heading!r}"
    return match.group(1)


def test_the_cpu_walk_through_runs_as_written(tmp_path: Path) -> None:
    clone, home = tmp_path / "clone", tmp_path / "home"
    home.mkdir()
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    (clone / ".venv").symlink_to(Path(sys.prefix))  # what `bash .ci/run` made (this interpreter's venv)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
           "LANG": "C.UTF-8"}
    if "EVOLVE_SANDBOX" in os.environ:  # conftest turns it off where no sandbox can be built
        env["EVOLVE_SANDBOX"] = os.environ["EVOLVE_SANDBOX"]
    script = readme_block("## Try it without a GPU")
    proc = subprocess.run(["bash", "-e", "-c", script], cwd=clone, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "best: " in proc.stdout and "Traceback" not in proc.stderr
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, env=env)
    best = subprocess.run(["git", "rev-parse", "best"], cwd=clone, capture_output=True, text=True, env=env)
    assert head.stdout == best.stdout  # `git checkout best` left the winner checked out
