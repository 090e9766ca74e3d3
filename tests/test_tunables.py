import random
import re

import pytest

from evolver.records.candidates import Candidate
from evolver.search import tunables
from evolver.search.operators import tune
from tests.conftest import DATA

CU = (DATA / "prompt_source_qr.cu").read_text()


def test_finds_cuda_and_python_annotations() -> None:
    files = {"qr.cu": CU, "k.py": "BLOCK = 64  # @tune BLOCK: 16 32 64 128\nx = 1\n"}
    found = {t.name: t for t in tunables.find_tunables(files)}
    assert found["NT"].value == "256" and found["NT"].choices == ("128", "256", "512")
    assert found["BLOCK"].value == "64" and found["BLOCK"].path == "k.py"


def test_set_value_changes_only_the_value() -> None:
    files = {"qr.cu": CU}
    t = tunables.find_tunables(files)[0]
    out = tunables.set_value(files, t, "512")["qr.cu"]
    assert "#define NT 512  // @tune NT: 128 256 512" in out
    assert out.replace("NT 512", "NT 256") == CU


def test_tune_avoids_trees_already_tried() -> None:
    files = {"k.py": "A = 1  # @tune A: 1 2 3\n"}
    parent = Candidate("r", "00001", "c" * 40, (), 0, "s", {})
    seen: set[str] = set()
    rng = random.Random(0)
    values = []
    for _ in range(2):
        p = tune(parent, files, seen, rng)
        assert p is not None and p.files is not None
        from evolver.search.operators import tree_of
        seen.add(tree_of(p.files))
        values.append(p.trailers["Tune"])
    assert sorted(values) == ["A=2 (was 1)", "A=3 (was 1)"]
    seen.add(tree_of(files))
    assert tune(parent, files, seen, rng) is None


def test_settings_by_name_set_every_declaration_and_say_what_changed() -> None:
    """`evolve try --set` and `evolve add --set`: a tunable set by hand, by its name."""
    files = {"qr.cu": CU, "k.py": "BLOCK = 64  # @tune BLOCK: 16 32 64 128\nx = 1\n",
             "two.cu": "#define NT 256  // @tune NT: 128 256 512\n"}
    out, changes = tunables.apply_settings(files, ["BLOCK=32", "NT = 128"])
    assert out["k.py"].startswith("BLOCK = 32  # @tune BLOCK: 16 32 64 128\n")
    assert "#define NT 128  // @tune NT" in out["qr.cu"] and out["two.cu"].startswith("#define NT 128 ")
    assert changes == ["BLOCK=32 (was 64)", "NT=128 (was 256 in 2 places)"]
    beyond, said = tunables.apply_settings(files, ["BLOCK=48"])  # outside the list: allowed, and said
    assert beyond["k.py"].startswith("BLOCK = 48 ")
    assert said == ["BLOCK=48 (was 64; not among its choices 16 32 64 128)"]
    assert files["k.py"].startswith("BLOCK = 64")  # the input as it was
    for bad, why in (("BLOCKS=32", "no tunable BLOCKS is declared (@tune) in the kernel (declared: BLOCK, NT)"),
                     ("BLOCK", "NAME=VALUE, VALUE a number"), ("BLOCK=big", "NAME=VALUE, VALUE a number"),
                     ("=3", "NAME=VALUE, VALUE a number")):
        with pytest.raises(ValueError, match=re.escape(why)):
            tunables.apply_settings(files, [bad])
