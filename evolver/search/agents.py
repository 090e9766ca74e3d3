"""The `agent` operator: a coding agent (Codex CLI, Claude Code, aider, a script) makes a child.

Agents are named in `evolve.toml`:

    [agents.codex]
    command = ["codex", "exec", "--full-auto", "Follow {prompt}"]   # an argument list, not a shell line
    timeout_s = 900
    usd_per_call = 0.5             # what one run costs (the bandit weighs agents by improvement per dollar)
    env = ["OPENAI_API_KEY"]       # the variables it may see besides PATH, HOME and LANG

For a child: the parent's kernel directory (and the guidance file) are copied into a temporary work
directory outside the user's tree, the prompt is written to a file there, the command runs there in its own
session with the timeout (and whatever it left running, found by a tag in its environment, killed after it), and
only the kernel directory's files are taken (what it changed elsewhere is named in the commit message and
dropped). The child is judged by the run's evaluator like any other: what the agent
saw in its own `evolve try` runs never counts. An agent that hangs, crashes, deletes the kernel or changes
nothing makes a recorded attempt (`llm_error` or `patch_failed`), and the run goes on.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from evolver.evaluation.processes import TAG, kill_group, kill_tagged
from evolver.records.candidates import Candidate
from evolver.records.config import Config, ConfigError
from evolver.records.store import Store
from evolver.search.llm import Usage
from evolver.search.operators import Proposal

OUTPUT_KEPT = 4000  # characters of the agent's last output kept in the child's commit message


@dataclass(frozen=True)
class AgentSpec:
    name: str
    command: tuple[str, ...]
    timeout_s: float = 900.0
    usd_per_call: float = 0.0
    env: tuple[str, ...] = ()


def agent_specs(config: Config) -> dict[str, AgentSpec]:
    """The `[agents.NAME]` tables of evolve.toml, checked; a one-line ConfigError names what is wrong."""
    raw = config.raw.get("agents") or {}
    where = f"{config.path}: [agents"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}]: must be tables, one per agent ([agents.NAME])")
    specs = {}
    for name, table in raw.items():
        if not isinstance(table, dict):
            raise ConfigError(f"{where}.{name}]: must be a table with a `command`")
        unknown = set(table) - {"command", "timeout_s", "usd_per_call", "env"}
        if unknown:
            raise ConfigError(f"{where}.{name}]: unknown key {sorted(unknown)[0]!r} (known: command, env, timeout_s, "
                              "usd_per_call)")
        command = table.get("command")
        if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
            raise ConfigError(f"{where}.{name}]: command must be a non-empty list of strings (an argument list)")
        timeout, price, env = table.get("timeout_s", 900), table.get("usd_per_call", 0.0), table.get("env", [])
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise ConfigError(f"{where}.{name}]: timeout_s must be a positive number of seconds")
        if not isinstance(price, (int, float)) or isinstance(price, bool) or price < 0:
            raise ConfigError(f"{where}.{name}]: usd_per_call must be a number >= 0")
        if not isinstance(env, list) or not all(isinstance(v, str) for v in env):
            raise ConfigError(f"{where}.{name}]: env must be a list of variable names")
        specs[name] = AgentSpec(name, tuple(command), float(timeout), float(price), tuple(env))
    return specs


def missing_program(spec: AgentSpec) -> str | None:
    """Why the agent cannot start on this machine (its program found on neither PATH nor its own path), else
    None; a path relative to somewhere else is the agent's business (it runs in its work directory)."""
    program = spec.command[0]
    if ("/" not in program or os.path.isabs(program)) and shutil.which(program) is None:
        return f"{program!r} is not a program on this machine (PATH has no such command)"
    return None


def _hashes(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


async def run_agent(spec: AgentSpec, parent: Candidate, config: Config, store: Store,
                    messages: list[dict[str, str]]) -> Proposal:
    """One run of the agent on a copy of `parent`'s kernel; a Proposal whatever happens."""
    kernel_dir = config.problem.kernel_dir
    proposal = Proposal("agent", parent, None, f"agent {spec.name}", trailers={"Agent": spec.name},
                        usage=Usage(cost_usd=spec.usd_per_call, calls=1))
    with tempfile.TemporaryDirectory(prefix="evolve-agent-") as tmp:
        work = Path(tmp) / "work"
        store.archive(parent.commit, [kernel_dir, *([config.problem.guidance] if config.problem.guidance else [])],
                      work)
        try_command = f"evolve try --repo {config.path.parent} {work / kernel_dir}"
        (work / "PROMPT.md").write_text(agent_prompt(messages, kernel_dir, try_command), encoding="utf-8")
        before = _hashes(work)
        values = {"{workdir}": str(work), "{prompt}": str(work / "PROMPT.md"), "{kernel_dir}": str(work / kernel_dir)}
        argv = [_fill(arg, values) for arg in spec.command]
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", *spec.env)}
        env[TAG] = tag = f"evolve-agent-{secrets.token_hex(8)}"  # how what it leaves running is found after it
        status, output = await _run(argv, work, env, spec.timeout_s)
        kill_tagged(tag)  # a process it detached (setsid) escapes its session's kill, not its environment
        proposal.rationale = output[-OUTPUT_KEPT:]
        if status:
            proposal.status, proposal.error = "llm_error", f"agent {spec.name}: {status}"
            return proposal
        after = _hashes(work) if (work / kernel_dir).is_dir() else {}
        mine = {p: h for p, h in after.items() if p.startswith(kernel_dir + "/")}
        elsewhere = sorted(p for p in set(before) | set(after) if not p.startswith(kernel_dir + "/")
                           and p != "PROMPT.md" and before.get(p) != after.get(p))
        if not mine:
            proposal.status, proposal.error = "patch_failed", f"agent {spec.name} deleted the kernel directory"
        elif mine == {p: h for p, h in before.items() if p.startswith(kernel_dir + "/")}:
            proposal.status, proposal.error = "patch_failed", f"agent {spec.name} changed nothing in {kernel_dir}/"
        else:
            proposal.merged = {p[len(kernel_dir) + 1:]: (work / p).read_bytes() for p in mine}
            first = next((line.strip() for line in output.splitlines() if line.strip()), "")
            proposal.summary = f"agent {spec.name}: {first[:80]}" if first else f"agent {spec.name}"
        if elsewhere:
            proposal.rationale += "\n\nChanged outside the kernel directory (dropped): " + ", ".join(elsewhere[:20])
    return proposal


def _fill(arg: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        arg = arg.replace(key, value)
    return arg


async def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float) -> tuple[str, str]:
    """('' or what went wrong, its output's tail): the agent in its own session, killed whole at the end."""
    try:
        proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.STDOUT, start_new_session=True)
    except OSError as exc:
        return f"cannot start {argv[0]!r}: {exc.strerror}", ""
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout_s)
    except asyncio.TimeoutError:
        return f"still running after {timeout_s:g} s; killed", ""
    finally:
        kill_group(proc.pid)  # the agent on a timeout, and whatever it left running in its session
        await proc.wait()
    text = out.decode("utf-8", "replace")[-64_000:]
    return ("" if proc.returncode == 0 else f"exited with code {proc.returncode}"), text


def agent_prompt(messages: list[dict[str, str]], kernel_dir: str, try_command: str) -> str:
    """What the agent reads (PROMPT.md): the mutation's context, and how to judge its own work."""
    user = next((m["content"] for m in messages if m["role"] == "user"), "")
    return (f"{user}\n\nWork in `{kernel_dir}/` only: nothing else you change is kept. Judge your kernel as evolve "
            f"will (exit code 0 means correct; lower scores are better):\n\n    {try_command}\n\nTo judge another "
            "value of a tunable (a line with `@tune`) without an edit, add `--set NAME=VALUE` to that command; only "
            "what you change in the files is kept. The run judges the final kernel again itself with a fresh secret "
            "input: scores you see are for guidance only.\n")
