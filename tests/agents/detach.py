"""Changes the kernel and leaves a process behind in a session of its own (setsid), as a server an agent starts
would be: evolve must not leave it running. Its pid goes next to the kernel (PID.txt, dropped with the copy) and
into the file named by $DETACHED_PID_FILE, for the test."""
import os
import re
import subprocess
import sys
from pathlib import Path

kernel = Path(sys.argv[2])
source = kernel / "sort.py"
source.write_text(re.sub(r"^CUTOFF = \d+", "CUTOFF = 16", source.read_text(), count=1, flags=re.M))
stray = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
Path(os.environ["DETACHED_PID_FILE"]).write_text(str(stray.pid))
print("Set CUTOFF to 16 and started a server")
