"""A demonstration run of the CPU example with a scripted LLM (tests/fake_llm.py, real HTTP): a mix of good
edits, broken builds, wrong answers, malformed replies and real small-model replies, plus `tune`.
Used for the TUI captures in docs/tui/. Usage: python bench/demo_run.py DIR [N]"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fake_llm import FakeLLM  # noqa: E402

STEPS = ["good"] * 6 + ["break_build", "break_answer", "malformed", "noop", "rewrite",
                         "real:search_replace:2", "real:freeform:0", "http500"]


def main() -> int:
    target = Path(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    rng = random.Random(3)
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(ROOT / "examples" / "sort", target / "examples" / "sort", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "GIT_AUTHOR_NAME": "demo", "GIT_AUTHOR_EMAIL": "demo@x", "GIT_COMMITTER_NAME": "demo",
           "GIT_COMMITTER_EMAIL": "demo@x", "EVOLVE_DEMO_KEY": "sk-demo"}
    with FakeLLM([rng.choice(STEPS) for _ in range(4 * n)]) as llm:
        config = (target / "examples/sort/evolve.toml").read_text()
        config = config.replace('# base_url = "http://127.0.0.1:8081/v1"   # e.g. ../../shared/tools/local-llm.sh',
                                f'base_url = "{llm.url}"').replace('# model = "qwen2.5-coder-0.5b"', 'model = "fake-coder"')
        config = config.replace('api_key_env = ""', 'api_key_env = "EVOLVE_DEMO_KEY"\ninput_usd_per_mtok = 0.5\n'
                                'output_usd_per_mtok = 1.5\ntimeout_s = 2\nmax_retries = 1')
        (target / "examples/sort/evolve.toml").write_text(config)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=target, check=True, env=env)
        subprocess.run(["git", "add", "-A"], cwd=target, check=True, env=env)
        subprocess.run(["git", "commit", "-qm", "demo"], cwd=target, check=True, env=env)
        subprocess.run([sys.executable, "-m", "evolver", "start", "--max-candidates", str(n)],
                       cwd=target / "examples/sort", check=True, env=env)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
