"""The fixed judge of QR candidates (docs/QR_CONTRACT.md). Run as `python -m harness.qr`; never imported
by the engine. Modules: cases (inputs), checker (gates), guard (anti-cheat), timing, worker, qr (supervisor).
"""
