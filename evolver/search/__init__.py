"""Making children: parents (population), the choice of operator (bandit, breed), the operators (tune,
the LLM's mutate/fix/resolve, coding agents), their prompts and edits, and what a run's figures say."""
