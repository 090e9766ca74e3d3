"""Changes the kernel, and a file outside it (which evolve must drop)."""
import re
import sys
from pathlib import Path

kernel = Path(sys.argv[2])
(kernel.parent / "NOTES.txt").write_text("mine\n")
source = kernel / "sort.py"
source.write_text(re.sub(r"^CUTOFF = \d+", "CUTOFF = 16", source.read_text(), count=1, flags=re.M))
print("Set CUTOFF to 16 and left a note")
