"""A scripted coding agent: judges a tunable's value with `evolve try --set` (as PROMPT.md says it may), then makes
the change in the kernel, judges it with `evolve try`, reports."""
import json
import re
import subprocess
import sys
from pathlib import Path

prompt, kernel = Path(sys.argv[1]), Path(sys.argv[2])
text = prompt.read_text()
assert "add `--set NAME=VALUE` to that command" in text, text
command = next(line.strip() for line in text.splitlines() if line.strip().startswith("evolve try"))
argv = [sys.executable, "-m", "evolver", *command.split()[1:]]
swept = subprocess.run([*argv, "--set", "CUTOFF=12", "--json"], capture_output=True, text=True)
first = json.loads(swept.stdout)["status"] if swept.stdout else swept.stderr
source = kernel / "sort.py"
source.write_text(re.sub(r"^CUTOFF = \d+", "CUTOFF = 12", source.read_text(), count=1, flags=re.M))
tried = subprocess.run(argv, capture_output=True, text=True)
print(f"--set CUTOFF=12 judged {first}; set CUTOFF to 12; evolve try said: "
      f"{tried.stdout.splitlines()[0] if tried.stdout else tried.stderr}")
sys.exit(0 if tried.returncode == 0 else 3)
