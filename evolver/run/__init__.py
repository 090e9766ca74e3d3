"""A run: opening it (the lock, the evaluator, the record) and the loop that breeds, judges and records."""
