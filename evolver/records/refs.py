"""The refs evolve writes, by name: the results and replies notes, the winner, each run's record."""

NOTES_REF = "refs/notes/evolve"
REPLIES_REF = "refs/notes/evolve-replies"  # what the LLM answered, attempt by attempt (`evolve show --reply`)
BEST_REF = "refs/heads/best"
RUN_REF = "refs/evolve/runs/{run}"  # a run's record: its base commit, problem, creating clone
