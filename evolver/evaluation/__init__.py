"""Judging candidates: the evaluator's command, the sandbox, its processes, prestarted judges, GPU slots
and their health, Ray, and the built-in judge's files."""
