"""A scripted coding agent: changes a tunable in the kernel, judges it with `evolve try`, reports."""
import re
import subprocess
import sys
from pathlib import Path

prompt, kernel = Path(sys.argv[1]), Path(sys.argv[2])
source = kernel / "sort.py"
text = source.read_text()
source.write_text(re.sub(r"^CUTOFF = \d+", "CUTOFF = 12", text, count=1, flags=re.M))
command = next(line.strip() for line in prompt.read_text().splitlines() if line.strip().startswith("evolve try"))
argv = [sys.executable, "-m", "evolver", *command.split()[1:]]
tried = subprocess.run(argv, capture_output=True, text=True)
print(f"Set CUTOFF to 12; evolve try said: {tried.stdout.splitlines()[0] if tried.stdout else tried.stderr}")
sys.exit(0 if tried.returncode == 0 else 3)
