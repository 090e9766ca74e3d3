from __future__ import annotations

from pathlib import Path

import pytest

from evolver.commands.cli import main
from evolver.records.config import ConfigError, find_config, load_config
from tests.conftest import ROOT, evolve, example_config, git, make_repo


def write(repo: Path, text: str) -> Path:
    path = repo / "examples" / "sort" / "evolve.toml"
    path.write_text(text)
    return path


def test_example_and_root_configs_load(repo: Path) -> None:
    config = load_config(repo / "examples/sort/evolve.toml", repo)
    assert config.problem.kernel_dir == "examples/sort/kernel"
    assert config.problem.seeds == ("examples/sort/seeds/mergesort",)
    assert config.problem_dir == "examples/sort"
    assert config.evaluation.gpus == () and config.evaluation.slots == 2
    root = load_config(ROOT / "evolve.toml", ROOT)
    assert root.evaluation.builtin == "qr"


def test_unknown_key_names_key_and_line(repo: Path) -> None:
    path = write(repo, example_config(evolution="islands = 2\npopulaton = 4"))
    with pytest.raises(ConfigError) as err:
        load_config(path, repo)
    message = str(err.value)
    assert "evolution.populaton" in message and "unknown key" in message
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.startswith("populaton"))
    assert f"evolve.toml:{line}:" in message


def test_wrong_type(repo: Path) -> None:
    path = write(repo, example_config(evaluation='command = "{python} check.py --kernel-dir {kernel_dir}"\n'
                                                 'timeout_s = "fast"'))
    with pytest.raises(ConfigError, match=r"evaluation.timeout_s: must be an integer or a number, not a string"):
        load_config(path, repo)
    path = write(repo, example_config(evolution="islands = true"))
    with pytest.raises(ConfigError, match=r"evolution.islands: must be an integer"):
        load_config(path, repo)


def test_min_gain_is_a_fraction(repo: Path) -> None:
    """`evaluation.min_gain`: how much a new best must beat the one before (a fraction of its score); the QR
    problem sets it above the judge's noise, the example leaves it at 0 (any gain)."""
    assert load_config(repo / "examples/sort/evolve.toml", repo).evaluation.min_gain == 0.0
    assert 0.0 < load_config(ROOT / "evolve.toml", ROOT).evaluation.min_gain < 0.05
    command = 'command = "{python} check.py --kernel-dir {kernel_dir}"\n'
    path = write(repo, example_config(evaluation=command + "min_gain = 0.005"))
    assert load_config(path, repo).evaluation.min_gain == 0.005
    for bad in ("1", "-0.01", "0.5"):
        path = write(repo, example_config(evaluation=command + f"min_gain = {bad}"))
        with pytest.raises(ConfigError, match=r"evaluation.min_gain: must be a fraction from 0"):
            load_config(path, repo)


@pytest.mark.parametrize("line,message", [
    ("temperature = 9", "llm.temperature: must be from 0 to 2, not 9"),
    ("temperature = -0.1", "llm.temperature: must be from 0 to 2"),
    ("timeout_s = 0", "llm.timeout_s: must be positive"),
    ('model = "m"\ninput_usd_per_mtok = -2.0', "llm.input_usd_per_mtok: a price cannot be negative"),
    ('model = "m"\noutput_usd_per_mtok = -8', "llm.output_usd_per_mtok: a price cannot be negative"),
    ('models = [{ name = "m", output_usd_per_mtok = -1 }]', "llm.models: a price cannot be negative"),
])
def test_llm_values_every_server_would_refuse_are_refused_here(repo: Path, line: str, message: str) -> None:
    """A temperature outside the API's 0 to 2 makes every request an error (an llm_error for every child of a
    night's run); a negative price or timeout makes no sense: all one line at load, naming the key."""
    path = write(repo, example_config(llm=f'base_url = "http://127.0.0.1:9/v1"\n{line}'))
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        load_config(path, repo)


def test_a_command_that_cannot_be_split_is_one_line(repo: Path) -> None:
    path = write(repo, example_config(evaluation='command = "{python} check.py --kernel-dir {kernel_dir} \\"open"'))
    with pytest.raises(ConfigError, match=r"evaluation\.command: cannot be split like a shell line: No closing "
                                          "quotation"):
        load_config(path, repo)


def test_a_run_name_git_would_refuse_is_refused_in_evolve_toml_too(repo: Path) -> None:
    path = write(repo, example_config() + '[run]\nname = "a..b"\n')
    with pytest.raises(ConfigError, match=r"run\.name: 'a\.\.b': a run name is up to 64 letters"):
        load_config(path, repo)


def test_missing_seed_dir(repo: Path) -> None:
    path = write(repo, example_config(problem='kernel_dir = "kernel"\nseeds = ["seeds/nope"]'))
    with pytest.raises(ConfigError, match=r"problem.seeds: 'seeds/nope' does not exist"):
        load_config(path, repo)


def test_paths_must_stay_inside_repository(repo: Path) -> None:
    path = write(repo, example_config(problem='kernel_dir = "../../../elsewhere"\nseeds = ["seeds/mergesort"]'))
    with pytest.raises(ConfigError, match="outside the repository"):
        load_config(path, repo)


def test_unknown_section_and_bad_toml(repo: Path) -> None:
    path = write(repo, example_config() + "[evolutoin]\nislands = 3\n")
    with pytest.raises(ConfigError, match=r"\[evolutoin\]: unknown section"):
        load_config(path, repo)
    path = write(repo, "[problem\nkernel_dir = 1\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path, repo)


def test_cli_reports_one_line_without_traceback(repo: Path) -> None:
    write(repo, example_config(evolution="islands = 2\nbogus = 1"))
    proc = evolve(repo / "examples" / "sort", "start", "--max-candidates", "3")
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("evolve: error: ") and "evolution.bogus" in proc.stderr
    assert "evolve/" not in subprocess_branches(repo)


def subprocess_branches(repo: Path) -> str:
    from tests.conftest import git
    return git(repo, "branch", "-a")


def test_init_writes_a_loadable_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    (repo / "seed_kernels" / "naive").mkdir(parents=True)
    assert main(["init", str(repo)]) == 0
    config = load_config(repo / "evolve.toml", repo)
    assert config.problem.kernel_dir == "kernel" and config.evaluation.builtin == "qr"
    assert main(["init", str(repo)]) == 1  # refuses to overwrite
    assert find_config(repo / "examples") == repo / "evolve.toml"


def test_no_config_found(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no evolve.toml"):
        find_config(tmp_path)


def test_init_example_sort_makes_a_problem_that_runs_in_an_empty_repository(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q")
    proc = evolve(repo, "init", "--example", "sort")
    assert proc.returncode == 0 and "evolve start --max-candidates 30" in proc.stdout, proc.stderr
    assert evolve(repo, "init", "--example", "sort").returncode == 1  # refuses to overwrite
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "the sort example")
    run = evolve(repo, "start", "--max-candidates", "4")
    assert run.returncode == 0 and "4 new candidate(s)" in run.stdout, run.stdout + run.stderr


def test_init_makes_its_directory_and_refuses_a_file(tmp_path: Path) -> None:
    """`evolve init DIR` makes DIR as `git init DIR` does (a FileNotFoundError traceback before); a file in its
    place is a one-line error."""
    proc = evolve(tmp_path, "init", "new/problem")
    assert proc.returncode == 0 and (tmp_path / "new" / "problem" / "evolve.toml").is_file(), proc.stderr
    proc = evolve(tmp_path, "init", "--example", "sort", "other")
    assert proc.returncode == 0 and (tmp_path / "other" / "check.py").is_file(), proc.stderr
    (tmp_path / "afile").write_text("x")
    proc = evolve(tmp_path, "init", "afile")
    assert proc.returncode == 1 and "afile: not a directory" in proc.stderr and "Traceback" not in proc.stderr
