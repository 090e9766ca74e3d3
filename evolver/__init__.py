"""evolve: a git-native evolutionary optimizer for GPU kernels.

Everything a run knows lives in git: candidates are branches, results are notes, the winner is `best`.
"""

__version__ = "0.1.0"
