"""`evolve.toml` to frozen dataclasses.

Owns the schema of the configuration file. Every error names the file, the key and (where the key is
written in the file) its line, so a user can fix it without reading a traceback. Called by the CLI;
nothing here runs git or touches the network.
"""

from __future__ import annotations

import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolver.records.refs import bad_run_name
from evolver.records.tomlread import ConfigError as ConfigError  # raised by config readers everywhere
from evolver.records.tomlread import TomlReader

CONFIG_NAME = "evolve.toml"
LLM_OPERATORS = ("mutate", "fix")
BUILTIN_OPERATORS = ("tune", "cross", "agent")  # no LLM endpoint needed (agents: evolver/search/agents.py)
OPERATORS = LLM_OPERATORS + BUILTIN_OPERATORS
BUILTIN_EVALUATORS = ("qr",)


@dataclass(frozen=True)
class ModelSpec:
    name: str
    weight: float = 1.0
    input_usd_per_mtok: float = 0.0
    output_usd_per_mtok: float = 0.0


@dataclass(frozen=True)
class ProblemConfig:
    kernel_dir: str  # repo-relative POSIX path: the only directory candidates may change
    seeds: tuple[str, ...]  # repo-relative seed directories, copied into kernel_dir for each seed
    guidance: str | None  # repo-relative file shown to the LLM, optional


@dataclass(frozen=True)
class EvaluationConfig:
    builtin: str | None  # "qr": the harness shipped with evolve
    command: str | None  # any command that prints one JSON result line last
    files: tuple[str, ...]  # repo-relative paths the command needs, taken from the run's base commit
    mode: str  # passed as {mode}; the QR harness knows quick|full|final
    confirm_mode: str  # "": off; else a new best is re-evaluated in this mode before `best` moves
    min_gain: float  # `best` moves only to a candidate that beats it by more than this fraction of its score
    slots: int  # concurrent evaluations
    per_gpu: int  # the built-in judge's evaluations sharing one GPU (untimed work together, timed alone)
    gpus: tuple[int, ...] | None  # None: one slot per visible GPU (or one CPU slot without GPUs)
    timeout_s: float
    prestart: bool = False  # start the next evaluator process while one runs; it waits for a line on stdin
    sandbox: bool = True  # every evaluation in a namespace sandbox (evolver/evaluation/sandbox.py); off only if asked for
    network: bool = False  # inside the sandbox: the network (off: only a private loopback)
    backend: str = "local"  # "ray": each evaluation a task on a Ray cluster (evolver/evaluation/cluster.py)
    address: str = "auto"  # the Ray cluster's address (ray.init)


@dataclass(frozen=True)
class LLMConfig:
    base_url: str | None
    models: tuple[ModelSpec, ...]
    api_key_env: str
    temperature: float
    max_tokens: int
    timeout_s: float
    max_concurrent: int
    max_retries: int
    context_tokens: int
    edit_retries: int
    full_rewrite: bool

    @property
    def configured(self) -> bool:
        return bool(self.base_url) and bool(self.models)


@dataclass(frozen=True)
class EvolutionConfig:
    operators: dict[str, float]
    islands: int
    population: int  # elite size per island that parents are drawn from
    explore: float  # probability of drawing a parent uniformly rather than from the elite
    seed: int
    pipeline_depth: int  # 0: automatic (slots without an LLM, twice the slots with one)
    migrate_every: int = 16  # children between migrations of each island's best to the next island (0: never)
    bandit: bool = True  # learn the (operator, model) choice from improvement per dollar
    eval_usd: float = 0.01  # what one evaluation is taken to cost, for the bandit's per-dollar rewards


@dataclass(frozen=True)
class BudgetConfig:
    max_candidates: int | None
    max_usd: float | None
    max_hours: float | None


@dataclass(frozen=True)
class Config:
    path: Path  # the evolve.toml that was read
    root: Path  # repository top level
    problem_dir: str  # repo-relative directory of evolve.toml ("" at the top level)
    run: str | None
    problem: ProblemConfig
    evaluation: EvaluationConfig
    llm: LLMConfig
    evolution: EvolutionConfig
    budget: BudgetConfig
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)


# --- schema ------------------------------------------------------------------------------------------
# section -> key -> (accepted python types, default). `...` marks a required key.
_NUM = (int, float)
SCHEMA: dict[str, dict[str, tuple[tuple[type, ...], Any]]] = {
    "run": {"name": ((str,), None)},
    "problem": {
        "kernel_dir": ((str,), ...),
        "seeds": ((list,), ...),
        "guidance": ((str,), None),
    },
    "evaluation": {
        "builtin": ((str,), None),
        "command": ((str,), None),
        "files": ((list,), []),
        "mode": ((str,), "full"),
        "confirm_mode": ((str,), ""),
        "min_gain": (_NUM, 0.0),
        "slots": ((int,), 0),
        "per_gpu": ((int,), 1),
        "gpus": ((list, str), "auto"),
        "timeout_s": (_NUM, 600),
        "prestart": ((bool,), None),  # default: on for the built-in harness, off for commands
        "sandbox": ((str,), "on"),
        "network": ((bool,), False),
        "backend": ((str,), "local"),
        "address": ((str,), "auto"),
    },
    "llm": {
        "base_url": ((str,), None),
        "model": ((str,), None),
        "models": ((list,), None),
        "api_key_env": ((str,), "OPENAI_API_KEY"),
        "temperature": (_NUM, 0.7),
        "max_tokens": ((int,), 8192),
        "timeout_s": (_NUM, 120),
        "max_concurrent": ((int,), 4),
        "max_retries": ((int,), 4),
        "context_tokens": ((int,), 128000),  # today's coding models hold 128k tokens and more
        "edit_retries": ((int,), 2),
        "full_rewrite": ((bool,), True),
        "input_usd_per_mtok": (_NUM, 0.0),
        "output_usd_per_mtok": (_NUM, 0.0),
    },
    "evolution": {
        "operators": ((dict,), {"mutate": 0.7, "tune": 0.3}),
        "islands": ((int,), 2),
        "population": ((int,), 8),
        "explore": (_NUM, 0.2),
        "seed": ((int,), 0),
        "pipeline_depth": ((int,), 0),
        "migrate_every": ((int,), 16),
        "bandit": ((bool,), True),
        "eval_usd": (_NUM, 0.01),
    },
    "budget": {
        "max_candidates": ((int,), None),
        "max_usd": (_NUM, None),
        "max_hours": (_NUM, None),
    },
}
MODEL_KEYS = {"name": (str,), "weight": _NUM, "input_usd_per_mtok": _NUM, "output_usd_per_mtok": _NUM}


def find_config(start: Path) -> Path:
    """The nearest evolve.toml at or above `start`, as git finds its repository."""
    for directory in [start, *start.parents]:
        candidate = directory / CONFIG_NAME
        if candidate.is_file():
            return candidate
    raise ConfigError(f"no {CONFIG_NAME} in {start} or any parent directory; `evolve init` writes one")


def load_config(path: Path, root: Path) -> Config:
    """Parse and validate `path`; `root` is the repository top level that paths must stay inside."""
    text, data = _read_toml(path)
    reader = TomlReader(path, text, SCHEMA)
    for name in data:
        if name not in SCHEMA and name != "agents":  # [agents.NAME] tables: evolver/search/agents.py
            line = reader.locate.line_of(name)
            at = f"{path}:{line}" if line else str(path)
            raise ConfigError(f"{at}: [{name}]: unknown section (known: {', '.join(sorted(SCHEMA))})")
    sections = {name: reader.section(data, name) for name in SCHEMA}
    paths = _Paths(reader, path.parent.resolve(), root.resolve())
    try:
        problem_dir = paths.base.relative_to(paths.root).as_posix()
    except ValueError:
        raise ConfigError(f"{path}: not inside the git repository {paths.root}") from None
    b = sections["budget"]
    for key in ("max_candidates", "max_usd", "max_hours"):
        if b[key] is not None and b[key] <= 0:
            raise reader.error("budget", key, "must be positive")
    run = sections["run"]["name"]
    why = bad_run_name(run) if run is not None else None
    if why:
        raise reader.error("run", "name", why)
    return Config(path=path, root=paths.root, problem_dir="" if problem_dir == "." else problem_dir, run=run,
                  problem=_problem_config(reader, sections["problem"], paths),
                  evaluation=_evaluation_config(reader, sections["evaluation"], paths),
                  llm=_llm_config(reader, sections["llm"]), evolution=_evolution_config(reader, sections["evolution"]),
                  budget=BudgetConfig(max_candidates=b["max_candidates"], max_usd=b["max_usd"],
                                      max_hours=b["max_hours"]), raw=data)


def _read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        bad_line = path.read_bytes()[:exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{bad_line}: not UTF-8 text (byte {exc.object[exc.start]:#04x}); TOML files are "
                          "UTF-8") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


class _Paths:
    """Paths in evolve.toml: relative to its directory, never outside the repository."""

    def __init__(self, reader: TomlReader, base: Path, root: Path) -> None:
        self.reader, self.base, self.root = reader, base, root

    def __call__(self, section: str, key: str, value: Any, must_exist: bool = True, kind: str = "any") -> str:
        if not isinstance(value, str) or not value:
            raise self.reader.error(section, key, f"must be a non-empty path string, not {value!r}")
        full = (self.base / value).resolve()
        try:
            rel = full.relative_to(self.root).as_posix()
        except ValueError:
            raise self.reader.error(section, key, f"{value!r} points outside the repository") from None
        if must_exist and not full.exists():
            raise self.reader.error(section, key, f"{value!r} does not exist ({full})")
        if must_exist and kind == "dir" and not full.is_dir():
            raise self.reader.error(section, key, f"{value!r} is not a directory")
        return "" if rel == "." else rel


def _problem_config(reader: TomlReader, p: dict[str, Any], repo_path: _Paths) -> ProblemConfig:
    kernel_dir = repo_path("problem", "kernel_dir", p["kernel_dir"], must_exist=False)
    if not kernel_dir:
        raise reader.error("problem", "kernel_dir", "must be a subdirectory, not the repository root")
    if not p["seeds"]:
        raise reader.error("problem", "seeds", "needs at least one seed directory")
    seeds = tuple(repo_path("problem", "seeds", s, kind="dir") for s in p["seeds"])
    guidance = repo_path("problem", "guidance", p["guidance"]) if p["guidance"] else None
    return ProblemConfig(kernel_dir=kernel_dir, seeds=seeds, guidance=guidance)


def _evaluation_config(reader: TomlReader, e: dict[str, Any], repo_path: _Paths) -> EvaluationConfig:
    if bool(e["builtin"]) == bool(e["command"]):
        raise reader.error("evaluation", "command", "set exactly one of `builtin` (\"qr\") and `command`")
    if e["builtin"] and e["builtin"] not in BUILTIN_EVALUATORS:
        raise reader.error("evaluation", "builtin", f"unknown evaluator {e['builtin']!r} (known: qr)")
    if e["command"] and "{kernel_dir}" not in e["command"]:
        raise reader.error("evaluation", "command", "must contain {kernel_dir}, where the candidate lies")
    try:
        shlex.split(e["command"] or "")  # as evolver/evaluation/command.py splits it, every evaluation
    except ValueError as exc:
        raise reader.error("evaluation", "command", f"cannot be split like a shell line: {exc}") from None
    files = tuple(repo_path("evaluation", "files", f) for f in e["files"])
    gpus: tuple[int, ...] | None
    if isinstance(e["gpus"], str):
        if e["gpus"] != "auto":
            raise reader.error("evaluation", "gpus", 'must be "auto" or a list of GPU indices')
        gpus = None
    else:
        if not all(isinstance(g, int) and not isinstance(g, bool) and g >= 0 for g in e["gpus"]):
            raise reader.error("evaluation", "gpus", "must list GPU indices (integers >= 0)")
        gpus = tuple(e["gpus"])
    if e["slots"] < 0 or e["timeout_s"] <= 0:
        raise reader.error("evaluation", "slots" if e["slots"] < 0 else "timeout_s", "must be positive")
    if not 1 <= e["per_gpu"] <= 8:
        raise reader.error("evaluation", "per_gpu", "must be 1 (one evaluation a GPU) to 8 (evaluations sharing "
                           "a GPU test side by side and are timed one at a time)")
    if not 0 <= e["min_gain"] < 0.5:
        raise reader.error("evaluation", "min_gain", "must be a fraction from 0 (any gain) to below 0.5, "
                           "e.g. 0.005: `best` moves only on a gain of more than 0.5%")
    if e["sandbox"] not in ("on", "off"):
        raise reader.error("evaluation", "sandbox", f'must be "on" or "off", not {e["sandbox"]!r}')
    if e["backend"] not in ("local", "ray"):
        raise reader.error("evaluation", "backend", f'must be "local" or "ray", not {e["backend"]!r}')
    return EvaluationConfig(builtin=e["builtin"], command=e["command"], files=files, mode=e["mode"],
                            confirm_mode=e["confirm_mode"], min_gain=float(e["min_gain"]), slots=e["slots"],
                            per_gpu=e["per_gpu"], gpus=gpus,
                            timeout_s=float(e["timeout_s"]),
                            prestart=bool(e["builtin"]) if e["prestart"] is None else e["prestart"],
                            sandbox=e["sandbox"] == "on", network=e["network"], backend=e["backend"],
                            address=e["address"])


def _llm_config(reader: TomlReader, s: dict[str, Any]) -> LLMConfig:
    if s["model"] and s["models"]:
        raise reader.error("llm", "models", "set either `model` or `models`, not both")
    models: list[ModelSpec] = []
    if s["model"]:
        models.append(ModelSpec(s["model"], 1.0, float(s["input_usd_per_mtok"]),
                                float(s["output_usd_per_mtok"])))
    for i, entry in enumerate(s["models"] or []):
        if not isinstance(entry, dict) or "name" not in entry:
            raise reader.error("llm", "models", f"entry {i + 1} must be a table with at least `name`")
        for key, value in entry.items():
            if key not in MODEL_KEYS:
                raise reader.error("llm", "models", f"entry {i + 1}: unknown key {key!r}")
            if not isinstance(value, MODEL_KEYS[key]) or isinstance(value, bool):
                raise reader.error("llm", "models", f"entry {i + 1}: {key} has the wrong type ({value!r})")
        models.append(ModelSpec(entry["name"], float(entry.get("weight", 1.0)),
                                float(entry.get("input_usd_per_mtok", 0.0)),
                                float(entry.get("output_usd_per_mtok", 0.0))))
    if any(m.weight <= 0 for m in models):
        raise reader.error("llm", "models", "weights must be positive")
    for key in ("max_tokens", "max_concurrent", "context_tokens", "timeout_s"):
        if s[key] <= 0:
            raise reader.error("llm", key, "must be positive")
    if not 0 <= s["temperature"] <= 2:  # the API's range: a server answers anything else with an error, every call
        raise reader.error("llm", "temperature", f"must be from 0 to 2, not {s['temperature']!r}")
    for m in models:
        for key in ("input_usd_per_mtok", "output_usd_per_mtok"):
            if getattr(m, key) < 0:
                raise reader.error("llm", "models" if s["models"] else key, "a price cannot be negative")
    if s["context_tokens"] <= s["max_tokens"]:
        raise reader.error("llm", "context_tokens", "must exceed max_tokens (the reply needs room too)")
    return LLMConfig(base_url=s["base_url"], models=tuple(models), api_key_env=s["api_key_env"],
                     temperature=float(s["temperature"]), max_tokens=s["max_tokens"],
                     timeout_s=float(s["timeout_s"]), max_concurrent=s["max_concurrent"],
                     max_retries=max(0, s["max_retries"]), context_tokens=s["context_tokens"],
                     edit_retries=max(0, s["edit_retries"]), full_rewrite=s["full_rewrite"])


def _evolution_config(reader: TomlReader, s: dict[str, Any]) -> EvolutionConfig:
    operators: dict[str, float] = {}
    for name, weight in s["operators"].items():
        if name not in OPERATORS:
            raise reader.error("evolution", "operators", f"unknown operator {name!r} (known: "
                               f"{', '.join(OPERATORS)})")
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or weight < 0:
            raise reader.error("evolution", "operators", f"weight of {name!r} must be a number >= 0")
        operators[name] = float(weight)
    if not any(operators.values()):
        raise reader.error("evolution", "operators", "at least one operator needs a positive weight")
    if s["islands"] < 1 or s["population"] < 1:
        raise reader.error("evolution", "islands" if s["islands"] < 1 else "population", "must be >= 1")
    if not 0 <= s["explore"] <= 1:
        raise reader.error("evolution", "explore", "must be between 0 and 1")
    if s["migrate_every"] < 0:
        raise reader.error("evolution", "migrate_every", "must be >= 0 (0: islands never exchange)")
    if not s["eval_usd"] > 0:
        raise reader.error("evolution", "eval_usd", "must be a positive number of dollars")
    return EvolutionConfig(operators=operators, islands=s["islands"], population=s["population"],
                           explore=float(s["explore"]), seed=s["seed"], pipeline_depth=s["pipeline_depth"],
                           migrate_every=s["migrate_every"], bandit=s["bandit"], eval_usd=float(s["eval_usd"]))
