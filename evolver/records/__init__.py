"""What a run is: its configuration (evolve.toml) and its record in git (candidates, results, runs);
the only place git runs (store)."""
