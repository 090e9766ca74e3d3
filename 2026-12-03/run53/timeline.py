import json, subprocess, sys
repo = sys.argv[1]
out = subprocess.run(["git", "-C", repo, "log", "--all", "--notes=evolve", "--format=%N"], capture_output=True, text=True).stdout
rows = []
for line in out.splitlines():
    line = line.strip()
    if not line.startswith("{"): continue
    r = json.loads(line)
    d = r.get("details") or r
    g = d.get("gpu_lock")
    if not g: continue
    w = g["wall"]
    held = [(h, a + w, b + w) for h, a, b in g["held"]]
    rows.append((held, r.get("id", "?"), d.get("mode")))
rows.sort(key=lambda x: x[0][0][1])
t0 = rows[0][0][0][1]
tot = {}
for held, cid, mode in rows:
    ex = [(a, b) for h, a, b in held if h in ("exclusive", "relaxed")]
    span = ex[-1][1] - ex[0][0]
    rel = [(a, b) for h, a, b in held if h == "relaxed"]
    exs = [(a,b) for h,a,b in held if h=="exclusive"]
    tighten = exs[1][0] - rel[0][1] if rel and len(exs) > 1 else 0
    s = " ".join(f"{h[0]}{a - t0:6.2f}-{b - t0:6.2f}" for h, a, b in held)
    print(f"{cid:>6} {str(mode):6} timed-span {span:5.2f} tighten-wait {tighten:5.2f} | {s}")
    tot.setdefault("span", []).append(span); tot.setdefault("tw", []).append(tighten)
import statistics as st
print("mean timed span", st.fmean(tot["span"]), "mean tighten wait", st.fmean(tot["tw"]))
# fraction of wall time covered by timed spans
ivs = sorted((h[0][1] if False else [x for x in held if x[0] in ("exclusive","relaxed")][0][1], [x for x in held if x[0] in ("exclusive","relaxed")][-1][2]) for held,_,_ in rows)
cov = 0; cur = None
for a, b in ivs:
    if cur is None or a > cur[1]:
        if cur: cov += cur[1] - cur[0]
        cur = [a, b]
    else: cur[1] = max(cur[1], b)
cov += cur[1] - cur[0]
end = max(x[2] for held,_,_ in rows for x in held)
print(f"timed spans cover {cov:.1f} s of {end - t0:.1f} s")
