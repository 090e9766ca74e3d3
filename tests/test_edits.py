from __future__ import annotations

import json

import pytest

from evolver.search.edits import EditError, apply_reply, parse_blocks
from tests.conftest import DATA

SOURCE = {"sort.py": "A = 1\ndef f(x):\n    return x + A\n\ndef g(x):\n    return x + A\n",
          "util.py": "B = 2\n"}


def reply(path: str, search: str, replace: str, marker: str = "<<<<<<< SEARCH") -> str:
    return f"Rationale.\n\n{path}\n```python\n{marker}\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n```\n"


def apply(text: str, truncated: bool = False, files: dict[str, str] = SOURCE) -> dict[str, str]:
    return apply_reply(text, files, "pkg/kernel", truncated=truncated, allow_rewrite=True).files


def test_exact_edit_and_paths() -> None:
    assert apply(reply("sort.py", "A = 1", "A = 3"))["sort.py"].startswith("A = 3\n")
    assert apply(reply("pkg/kernel/util.py", "B = 2", "B = 5"))["util.py"] == "B = 5\n"
    assert apply(reply("**`util.py`**", "B = 2", "B = 5"))["util.py"] == "B = 5\n"


def test_several_blocks_in_one_reply() -> None:
    text = reply("sort.py", "A = 1", "A = 4") + reply("util.py", "B = 2", "B = 7")
    out = apply(text)
    assert out["sort.py"].startswith("A = 4") and out["util.py"] == "B = 7\n"


def test_ambiguous_search_is_rejected() -> None:
    with pytest.raises(EditError, match="matches 2 places"):
        apply(reply("sort.py", "    return x + A", "    return x - A"))


def test_whitespace_tolerant_second_try_is_recorded() -> None:
    result = apply_reply(reply("sort.py", "def f(x):\n  return x + A", "def f(x):\n    return 2 * x"),
                         SOURCE, "k", truncated=False, allow_rewrite=True)
    assert result.mode == "fuzzy" and "return 2 * x" in result.files["sort.py"]


def test_miss_quotes_closest_lines() -> None:
    with pytest.raises(EditError) as err:
        apply(reply("sort.py", "def f(y):\n    return y + A", "x"))
    assert "does not match" in str(err.value) and "2| def f(x):" in str(err.value)


def test_outside_kernel_dir_is_rejected() -> None:
    for path in ("../qrjudge/supervisor.py", "/etc/passwd", "qrjudge/supervisor.py"):
        with pytest.raises(EditError, match="outside the kernel directory"):
            apply(reply(path, "B = 2", "B = 3"))


def test_noop_is_rejected() -> None:
    with pytest.raises(EditError, match="change nothing"):
        apply(reply("util.py", "B = 2", "B = 2"))


def test_wrong_marker_and_unterminated_block() -> None:
    with pytest.raises(EditError, match="not a valid opening marker"):
        apply(reply("util.py", "B = 2", "B = 3", marker=">>>>>>> SEARCH"))
    with pytest.raises(EditError, match="no `>>>>>>> REPLACE`"):
        apply("util.py\n<<<<<<< SEARCH\nB = 2\n=======\nB = 3\n")


def test_whole_file_rewrite_only_when_not_cut_off() -> None:
    text = "Here it is:\n\nutil.py\n```python\nB = 9\n```\n"
    assert apply(text)["util.py"] == "B = 9\n"
    with pytest.raises(EditError, match="cut off"):
        apply(text, truncated=True)
    with pytest.raises(EditError, match="no edit"):
        apply_reply(text, SOURCE, "k", truncated=False, allow_rewrite=False)


def test_single_file_blocks_need_no_path() -> None:
    files = {"qr.cu": "int x = 1;\n"}
    out = apply("<<<<<<< SEARCH\nint x = 1;\n=======\nint x = 2;\n>>>>>>> REPLACE\n", files=files)
    assert out["qr.cu"] == "int x = 2;\n"


def test_real_small_model_replies_are_all_rejected_with_a_reason() -> None:
    """Real replies of Qwen2.5-Coder-0.5B (shared/data/llm_replies): none is a usable edit."""
    source = {"qr.cu": (DATA / "prompt_source_qr.cu").read_text()}
    expected = {  # what each reply gets wrong
        ("freeform", 0): "no edit",
        ("freeform", 1): "no edit",  # a rewrite cut off mid-fence
        ("search_replace", 0): "does not match",  # the placeholder echoed as SEARCH
        ("search_replace", 1): "does not match",
        ("search_replace", 2): "not a valid opening marker",
        ("search_replace", 3): "no edit",  # a whole file with no fence, cut off
    }
    for (kind, index), reason in expected.items():
        item = json.loads((DATA / f"qwen2.5-coder-0.5b_{kind}.json").read_text())[index]
        with pytest.raises(EditError, match=reason):
            apply_reply(item["content"], source, "kernel", truncated=item.get("finish_reason") == "length",
                        allow_rewrite=True)


def test_parse_blocks_keeps_order() -> None:
    blocks = parse_blocks(reply("a.py", "1", "2") + reply("b.py", "3", "4"))
    assert [(b.path, b.search, b.replace) for b in blocks] == [("a.py", "1", "2"), ("b.py", "3", "4")]


def test_the_formats_example_echoed_is_named_as_such() -> None:
    """A small model's real habit (Qwen2.5-Coder-0.5B on the sort example, 2026-12-05): the system message's example
    block echoed under a `SEARCH/REPLACE:` heading, which is the format's name, not a file outside the kernel."""
    from evolver.search.prompts import system_message

    shown = system_message(None)["content"]
    example = shown[shown.index("<<<<<<< SEARCH"):shown.index(">>>>>>> REPLACE") + len(">>>>>>> REPLACE")]
    with pytest.raises(EditError, match="repeats the format's example"):
        apply(f"Faster this way.\nSEARCH/REPLACE:\n```\n{example}\n```\n")
    one = {"sort.py": SOURCE["sort.py"]}  # the heading is no path: a one-file kernel's block is its file's
    assert apply(reply("SEARCH/REPLACE:", "A = 1", "A = 2"), files=one)["sort.py"].startswith("A = 2\n")
    with pytest.raises(EditError, match="not headed by a file path"):
        apply(reply("path/of/file.ext", "A = 1", "A = 2"))


def test_a_whole_file_after_a_sentence_that_names_it() -> None:
    """"... update the `examples/sort/kernel/sort.py` file with:" and the whole file in a fence (a real reply): the
    file it names, if the block could be all of it; a snippet, or a sentence naming two files, is no rewrite."""
    whole = "A = 5\ndef f(x):\n    return x * A\n\ndef g(x):\n    return x + A\n"
    said = "Then we can update the `pkg/kernel/sort.py` file with the new implementation:\n\n```python\n{}```\n"
    assert apply("Rationale.\n\n" + said.format(whole))["sort.py"] == whole
    with pytest.raises(EditError, match="no edit"):
        apply(said.format("A = 5\n"))  # a snippet: not half the file
    with pytest.raises(EditError, match="no edit"):
        apply(said.replace("`pkg/kernel/sort.py`", "`sort.py` and `util.py`").format(whole))


def test_search_and_replace_as_two_labelled_fences() -> None:
    """Another real form: "Search:" over one fence and "REPLACE:" over the next (or ```search / ```replace), the
    SEARCH still matched strictly; written at another depth than the file's lines, REPLACE moves with them."""
    said = "Faster.\n\nSearch:\n```python\nreturn x + A\n```\n\nREPLACE:\n```python\nreturn x * A\n```\n"
    with pytest.raises(EditError, match="matches 2 places"):
        apply(said, files={"sort.py": SOURCE["sort.py"]})
    one = "sort.py\n```search\ndef g(x):\n    return x + A\n```\n```replace\ndef g(x):\n    return x - A\n```\n"
    assert apply(one)["sort.py"].endswith("def g(x):\n    return x - A\n")
    for alone in ("```search\nB = 2\n```\n", "Search:\n```\nB = 2\n```\nThen:\n```replace\nB = 3\n```\n"):
        with pytest.raises(EditError, match="no edit"):
            apply(alone)  # a SEARCH with no REPLACE right after it is no edit
    nested = {"k.py": "def f(x):\n    if x:\n        return 1\n    return 0\n"}
    shifted = "k.py\nSearch:\n```\nif x:\n    return 1\n```\nReplace:\n```\nif x > 0:\n    return 2\n```\n"
    deeper = apply(shifted, files=nested)
    assert deeper["k.py"] == "def f(x):\n    if x > 0:\n        return 2\n    return 0\n"


def test_the_prompts_path_with_a_slash_before_it() -> None:
    out = apply(reply("/pkg/kernel/util.py", "B = 2", "B = 3"))
    assert out["util.py"] == "B = 3\n"
    with pytest.raises(EditError, match="outside the kernel directory"):
        apply(reply("/etc/util.py", "B = 2", "B = 3"))


def test_real_small_model_replies_on_the_sort_example() -> None:
    """Qwen2.5-Coder-0.5B's 45 distinct replies in a real run on examples/sort
    (tests/data/qwen2.5-coder-0.5b_sort.json): none applied then. Now its whole file after a sentence naming it and its labelled fence pair apply and compile,
    its echoes of the format's example are named as such, and none is sent back as an edit outside the kernel."""
    data = json.loads((DATA / "qwen2.5-coder-0.5b_sort.json").read_text())
    applied, errors = [], []
    for item in data["replies"]:
        try:
            applied.append(apply_reply(item["content"], data["source"], data["kernel_dir"], truncated=item["truncated"],
                                       allow_rewrite=True))
        except EditError as exc:
            errors.append(str(exc))
    assert {r.mode for r in applied} >= {"rewrite", "fuzzy"}, [r.mode for r in applied]
    for result in applied:
        compile(result.files["sort.py"], "sort.py", "exec")  # the reply's Python, at the file's depth
    assert sum("repeats the format's example" in e for e in errors) >= 5
    assert not [e for e in errors if "outside the kernel directory" in e]
