"""How long a remote may go silent before `evolve pull` or `push` gives up (`Store.remote`): git itself waits for
ever on an HTTP server that accepted the connection and says nothing, and on an SSH server that stopped answering.
A stall is STALL_S seconds (EVOLVE_GIT_STALL_S) without a byte over HTTP(S), or without an answer to SSH's
keep-alives; a slow transfer that still moves goes on. Settings of the user's own (http.lowSpeedTime,
core.sshCommand, GIT_SSH_COMMAND, GIT_SSH) come first.
"""

from __future__ import annotations

import os
from collections.abc import Callable

STALL_S = 60


def stall_env(configured: Callable[[str], str]) -> dict[str, str]:
    """The environment for one git command that talks to a remote; `configured(key)` is git's setting of `key`.
    ValueError (its message a one-line error) for a malformed EVOLVE_GIT_STALL_S."""
    said = os.environ.get("EVOLVE_GIT_STALL_S", str(STALL_S))
    if not said.isdigit() or int(said) < 1:
        raise ValueError(f"EVOLVE_GIT_STALL_S is {said!r}: a whole number of seconds, at least 1")
    stall = int(said)
    env: dict[str, str] = {}
    if not configured("http.lowSpeedTime"):
        env.update(_config_env({"http.lowSpeedLimit": "1", "http.lowSpeedTime": str(stall)}))
    if not (os.environ.get("GIT_SSH_COMMAND") or os.environ.get("GIT_SSH") or configured("core.sshCommand")):
        beats = -(-stall // 5)  # an answer to a keep-alive every 5 s, `beats` missed in a row
        env["GIT_SSH_COMMAND"] = f"ssh -o ConnectTimeout={stall} -o ServerAliveInterval=5 -o ServerAliveCountMax={beats}"
    return env


def _config_env(settings: dict[str, str]) -> dict[str, str]:
    """git settings for one command through its environment (GIT_CONFIG_COUNT), after any the caller's has."""
    said = os.environ.get("GIT_CONFIG_COUNT", "")
    first = int(said) if said.isdigit() else 0
    env = {"GIT_CONFIG_COUNT": str(first + len(settings))}
    for i, (key, value) in enumerate(settings.items(), start=first):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    return env
