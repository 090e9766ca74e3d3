"""The refs evolve writes, by name: the results and replies notes, the winner, each run's record; what a run's
name may be."""

import re

NOTES_REF = "refs/notes/evolve"
REPLIES_REF = "refs/notes/evolve-replies"  # what the LLM answered, attempt by attempt (`evolve show --reply`)
BEST_REF = "refs/heads/best"
RUN_REF = "refs/evolve/runs/{run}"  # a run's record: its base commit, problem, creating clone


def bad_run_name(name: str) -> str | None:
    """Why `name` cannot name a run (it is a component of its refs: evolve/NAME/ID, refs/evolve/runs/NAME), else
    None: the command line's --run and evolve.toml's [run] name alike."""
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name) and ".." not in name and \
            not name.endswith((".", ".lock")):
        return None
    return (f"{name!r}: a run name is up to 64 letters, digits, '.', '_' and '-', starting with a letter or digit "
            "(no '/', no '..', not ending in '.' or '.lock')")
