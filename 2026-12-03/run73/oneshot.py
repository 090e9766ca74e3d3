import sys; sys.path.insert(0, "/work/main")
from pathlib import Path
import tempfile
from tests.test_judge_cpu import judge, candidate, CHEATS, HONEST
t = Path(tempfile.mkdtemp()); (t/"h").mkdir()
h = judge(candidate(t/"h", HONEST)); c = judge(candidate(t, CHEATS/"frames_clock.py"))
print("honest", h["status"], h["score"], [ (s["shape"], s["mean_us"], s["unexplained_us"]) for s in h["shapes"]])
print("cheat", c["status"], c["score"], [ (s["shape"], s["mean_us"], s["unexplained_us"], s["wall_median_us"]) for s in c["shapes"]])
