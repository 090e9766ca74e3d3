"""The Textual TUI: the population, the lineage of the best, and progress, live from git.

It reads git only (through `RunReader`), so it works on a run in progress, a finished run, or a repository
fetched from another machine. `evolve tui` and `evolve start --tui` start it.
"""
