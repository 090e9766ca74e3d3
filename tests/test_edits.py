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
