"""The shared response format: parsing reasoning and code out of model replies."""

import pytest

from recode_lib.core.prompts import build_messages, extract_code, format_response, parse_response


def test_canonical_response_is_format_ok():
    p = parse_response(format_response("Add them.", "def f(a, b):\n    return a + b"))
    assert p.format_ok and p.reasoning == "Add them." and p.code.startswith("def f")


def test_last_parsable_block_wins_and_two_blocks_fail_the_format():
    text = "Plan.\n```python\ndef f(:\n```\nFixed:\n```python\ndef f():\n    return 1\n```"
    p = parse_response(text)
    assert p.code == "def f():\n    return 1" and not p.format_ok and "2 code blocks" in p.reason


def test_no_block_is_a_format_error():
    p = parse_response("I would loop over the list.")
    assert p.code is None and not p.format_ok and p.reason == "no code block"


def test_reply_starting_with_code_and_closing_the_fence_counts_as_code():
    text = "def f(x):\n    return x * 2\n```\n\nThis function doubles x."
    p = parse_response(text)
    assert p.code == "def f(x):\n    return x * 2"
    assert p.explanation == "This function doubles x."
    assert not p.format_ok and p.reason == "no reasoning before the code"


def test_prose_before_a_lone_closing_fence_is_not_code():
    assert extract_code("This is prose, not code at all.\n```") is None


def test_code_then_explanation_in_a_proper_block():
    p = parse_response("```python\ndef f():\n    return 1\n```\nIt returns one.")
    assert p.code and p.explanation == "It returns one." and p.reasoning == ""


def test_build_messages_has_system_and_user_turns():
    msgs = build_messages("Write f.")
    assert [m["role"] for m in msgs] == ["system", "user"] and "<think>" in msgs[0]["content"]


def test_a_closing_fence_after_leading_code_never_opens_a_block():
    # the prose after the fence happens to parse as Python ("Output: [2, 5]" is an annotation)
    p = parse_response("def f(n):\n    return n + 1\n\nprint(f(3))\n```\n\nOutput: [2, 5]")
    assert p.code.startswith("def f(n):") and p.explanation == "Output: [2, 5]"
    assert not p.format_ok


def test_canonical_trace_must_round_trip():
    from recode_lib.core.prompts import canonical_trace

    text, why = canonical_trace("Add the numbers.", "def f(a, b):\n    return a + b\n")
    assert why == "" and parse_response(text).format_ok
    assert canonical_trace("", "x = 1")[1] == "no reasoning"
    assert canonical_trace("why", None)[1] == "no code"
    bad, why = canonical_trace("First try:\n```python\nx = 0\n```\nthen", "x = 1")
    assert bad is None and "round-trip" in why


@pytest.mark.parametrize(
    "body",
    [
        "return 1",
        "yield 2",
        "break",
        "x = 1\nfrom __future__ import annotations",
        "nonlocal x",
        "def f():\n    x = 1\n    global x",
    ],
)
def test_a_block_that_parses_but_does_not_compile_is_not_code(body):
    """ast.parse accepts each of these; the sandbox's compile() refuses them, so a reply made of
    one would have had format credit for a program that can never run."""
    import ast

    ast.parse(body)  # parses ...
    parsed = parse_response(format_response("I return the answer.", body))
    assert parsed.code is None and not parsed.format_ok  # ... but is no code block
    assert parsed.reason == "code block does not parse"


def test_a_late_block_that_does_not_compile_leaves_the_earlier_one():
    text = "Reasoning.\n```python\ndef f():\n    return 1\n```\nor\n```python\nreturn 1\n```"
    parsed = parse_response(text)
    assert parsed.code == "def f():\n    return 1" and parsed.n_blocks == 2


def test_a_future_import_first_compiles():
    parsed = parse_response(
        format_response("Annotations.", "from __future__ import annotations\nx: int = 1")
    )
    assert parsed.format_ok
