# expect: compile_error | seen: \[\]
# expect-cpu: compile_error | seen: \[\]
# The judge's secret seed, looked for wherever another process's arguments and environment can be read:
# every /proc/<pid>/cmdline and environ this process can open. With it, every input and every sampled row
# could be predicted. Whatever it finds is raised, so the verdict shows it: it must find nothing.
from pathlib import Path

seen = []
for entry in Path("/proc").iterdir():
    for name in ("cmdline", "environ"):
        try:
            text = (entry / name).read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "--seed" in text or '"seed"' in text or "SEED=" in text:
            seen.append(f"{entry.name}/{name}")
raise RuntimeError(f"seeds seen: {seen}")
