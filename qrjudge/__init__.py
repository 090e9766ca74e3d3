"""The fixed judge of QR candidates (docs/QR_CONTRACT.md). Run as `python -m qrjudge`; never imported by the
engine. Three processes: the supervisor (supervisor.py, no torch), the judge (judge.py, trusted: inputs, checks,
verdict) and the runner (runner.py, untrusted: runs the candidate, confined by isolation.py). Modules: specs and
cases (inputs), checker (gates), guard (the static scan and the runtime refusal of library factorisations),
integrity (the runner's first-line tamper check), arena (buffers shared with the runner), timing (plans, flush,
floor), wire (the pipes' JSON lines), hostwatch (what the host did while a shape was timed).
"""
