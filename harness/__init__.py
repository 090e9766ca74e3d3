"""The fixed judge of QR candidates (docs/QR_CONTRACT.md). Run as `python -m harness.qr`; never imported
by the engine. Three processes: qr (the supervisor, no torch), judge (trusted: inputs, checks, verdict) and
runner (untrusted: runs the candidate). Modules: specs and cases (inputs), checker (gates), guard (static
scan and runtime guard), integrity (the runner's first-line tamper check), arena (buffers shared with the
runner), isolation (process hardening), timing (plans, flush, floor).
"""
