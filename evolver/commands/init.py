"""`evolve init`: a commented evolve.toml (the QR problem), or a whole example problem (`--example sort`)."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from evolver.commands.common import UserError, Verb
from evolver.records.config import CONFIG_NAME
from evolver.records.starter import STARTER


def add_verb(verb: Verb) -> None:
    p = verb("init", "write a commented evolve.toml (or a whole example)",
             "Write a commented starting evolve.toml in PATH (the QR problem; it needs a GPU), or with --example "
             "sort a small CPU problem that runs anywhere: its evolve.toml, evaluator and seed.")
    p.add_argument("path", nargs="?", default=".", help="directory to write into (default: here)")
    p.add_argument("--example", choices=("sort",), help="write this example problem instead")
    p.add_argument("--force", action="store_true", help="overwrite files that exist")
    p.set_defaults(func=cmd_init)


def cmd_init(args: argparse.Namespace) -> int:
    target = Path(args.path)
    try:
        target.mkdir(parents=True, exist_ok=True)  # as `git init DIR` makes DIR
        if args.example:
            return _init_example(args.example, target, args.force)
        config = target / CONFIG_NAME
        if config.exists() and not args.force:
            raise UserError(f"{config} exists; use --force to overwrite it")
        config.write_text(STARTER, encoding="utf-8")
    except (FileExistsError, NotADirectoryError) as exc:
        raise UserError(f"{target}: not a directory ({exc.strerror})") from None
    except OSError as exc:
        raise UserError(f"cannot write into {target}: {exc.strerror or exc}") from None
    print(f"wrote {config}: the QR problem on a GPU. Edit [problem] and [evaluation], commit, then `evolve start`.\n"
          "For a problem that runs on any machine first: `evolve init --example sort`.")
    return 0


def _init_example(name: str, target: Path, force: bool) -> int:
    """The example's evaluator, seed and evolve.toml, copied into `target`."""
    source = example_dir(name)
    files = [f for f in source.rglob("*") if f.is_file() and "__pycache__" not in f.parts]
    clashes = [str(target / f.relative_to(source)) for f in files if (target / f.relative_to(source)).exists()]
    if clashes and not force:
        raise UserError(f"{clashes[0]} exists; use --force to overwrite it")
    for f in files:
        (target / f.relative_to(source)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target / f.relative_to(source))
    print(f"wrote the {name} example into {target}: {CONFIG_NAME}, its evaluator and its seed. Next:\n"
          "  git add -A && git commit -m 'evolve: the sort example'   (evolve reads seeds and evaluator from HEAD)\n"
          "  evolve start --max-candidates 30")
    return 0


def example_dir(name: str) -> Path:
    """An example shipped with evolve: inside the installed package, or in the clone it was installed from."""
    package = Path(__file__).resolve().parents[1]  # evolver/
    for candidate in (package / "examples" / name, package.parent / "examples" / name):
        if (candidate / CONFIG_NAME).is_file():
            return candidate
    raise UserError(f"the {name!r} example is not part of this installation")
