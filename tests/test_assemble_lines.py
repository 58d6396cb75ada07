"""One line model, Python's own (issue 39, item 5): assemble splits code at \\n, \\r\\n and \\r
only, as Python's tokenizer does, never at the other characters str.splitlines() takes for line
ends (\\v, \\f, \\x1c-\\x1e, NEL U+0085, U+2028, U+2029), which Python allows inside strings and
comments. Each test puts one of them inside a string or a comment of a right answer and checks
the program keeps it exactly (ast reads the program back; nothing is executed)."""

from __future__ import annotations

import ast

import pytest

from recode_lib.core.assemble import assemble, code_lines, dedent_code, indent_code
from recode_lib.data.schema import Problem

SEPARATORS = ["\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e"]
IDS = ["U+2028", "U+2029", "NEL", "form-feed", "vtab", "x1c", "x1d", "x1e"]


def _problem(starter='def add(a, b):\n    """Add a and b."""\n', prelude="", kind="call"):
    tests = (
        {"kind": "call", "fn_name": "add", "cases": [{"args": [1, 2], "expected": 3}]}
        if kind == "call"
        else {"kind": "stdio", "cases": [{"input": "", "output": "3\n"}]}
    )
    return Problem(
        id="t/add",
        source="t",
        prompt="Add.",
        tests=tests,
        starter_code=starter,
        entry_point="add" if kind == "call" else None,
        metadata={"prelude": prelude} if prelude else {},
    )


def _block(code):
    return f"<think>\nAdd them.\n</think>\n```python\n{code}\n```"


def _strings(code):
    return [
        n.value
        for n in ast.walk(ast.parse(code))
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


@pytest.mark.parametrize("ch", SEPARATORS, ids=IDS)
def test_a_full_function_with_the_character_in_a_string_is_kept_whole(ch):
    code = (
        f'def add(a, b):\n    s = "x{ch}y"  # and{ch}here\n    return a + b\n\nprint(add(1, 2))\n'
    )
    prog = assemble(_problem(), _block(code))
    assert prog.how == "function" and prog.dropped == ["print(add(1, 2))"]
    assert f"x{ch}y" in _strings(prog.code)  # not cut at the character
    assert f"# and{ch}here" in prog.code and "print(" not in prog.code


@pytest.mark.parametrize("ch", SEPARATORS, ids=IDS)
def test_a_body_only_answer_with_the_character_in_a_string_keeps_it(ch):
    body = f"    s = 'a{ch}b'  # c{ch}d\n    return a + b"
    prog = assemble(_problem(), _block(body))
    assert prog.how == "starter+body"
    assert f"a{ch}b" in _strings(prog.code)  # no indentation pushed into it


@pytest.mark.parametrize("ch", SEPARATORS, ids=IDS)
def test_a_function_after_a_docstring_holding_the_character_gets_the_prelude_in_place(ch):
    code = (
        f'"""Adder.{ch}from here on, still the docstring."""\n'
        "from __future__ import annotations\n\n"
        "def add(a: List[int], b):\n    return a + b\n"
    )
    prog = assemble(_problem(prelude="from typing import *"), _block(code))
    tree = ast.parse(prog.code)  # the docstring is dropped (sanitized), not cut
    assert [
        (type(n).__name__, getattr(n, "module", getattr(n, "name", None))) for n in tree.body
    ] == [("ImportFrom", "__future__"), ("ImportFrom", "typing"), ("FunctionDef", "add")]


@pytest.mark.parametrize("ch", SEPARATORS, ids=IDS)
def test_the_prelude_goes_after_a_docstring_holding_the_character(ch):
    code = f'"""Reads nothing.{ch}Prints 3."""\nprint(3)\n'
    prog = assemble(_problem(starter="", prelude="import sys", kind="stdio"), _block(code))
    tree = ast.parse(prog.code)
    assert ast.get_docstring(tree) == f"Reads nothing.{ch}Prints 3."
    assert isinstance(tree.body[1], ast.Import)


def test_code_lines_splits_as_python_numbers_lines():
    src = "a = 1\r\nb = '\u2028\x0c\x85'\rc = 3\n# \u2029\n"
    assert code_lines(src) == ["a = 1", "b = '\u2028\x0c\x85'", "c = 3", "# \u2029"]
    tree = ast.parse(src)
    assert [n.lineno for n in tree.body] == [1, 2, 3]  # what ast says, line by line
    assert code_lines("") == [] and code_lines("x") == ["x"] and code_lines("x\n\n") == ["x", ""]


def test_dedent_and_indent_match_textwrap_on_plain_newlines():
    import textwrap

    samples = [
        "    a\n    b\n",
        "  a\n\n    b\n  c",
        "\ta\n\t\tb\n",
        "    a\n  \n    b",
        "  x\n \ty\n",
        "a\n  b\n",
        "",
        "\n\n",
        "    def f():\n        return 1\n",
    ]
    for s in samples:
        assert dedent_code(s) == textwrap.dedent(s), s
        assert indent_code(s, "    ") == textwrap.indent(s, "    "), s


def test_a_body_with_carriage_return_line_ends_completes_the_starter():
    body = "    x = a\r    return x + b"
    prog = assemble(_problem(), _block(body))
    assert prog.how == "starter+body"
    assert [type(n).__name__ for n in ast.parse(prog.code).body[0].body] == [
        "Expr",
        "Assign",
        "Return",
    ]


def test_the_prelude_shortcut_agrees_with_parsing_every_program():
    """put_in_front parses the program only when its first statement may be a docstring or a
    __future__ import (may_have_head); wherever it skips, parsing finds no such head."""
    from recode_lib.core.assemble import may_have_head, put_in_front

    heads = ["", "\n", "# c\n", "  \n\f# c\r\n", "#!x\n\n"]
    firsts = [
        '"""d"""',
        "'d'",
        'r"d"',
        'Rb"d"',
        'f"d"',
        "u'd'",
        '("d")',
        "from __future__ import annotations",
        "from  __future__ import annotations",
        "from\t__future__ import annotations",
        "from typing import List",
        "from . import x",
        "from.x import y",
        "fromx = 1",
        "import os",
        "def f(): pass",
        "class A: pass",
        "x = 1",
        "rb = 1",
        "f(1)",
        "\\\n'd'",
        "é = 1",
        " x = 1",
        "from \\\n __future__ import annotations",
        "_ = 2",
    ]
    tails = ["", "\nfrom __future__ import division\ny = 2\n", "\n'not a docstring'\n"]
    for h in heads:
        for f in firsts:
            for t in tails:
                code = h + f + t
                got = put_in_front("import sys", code)
                try:
                    tree = ast.parse(code)
                except SyntaxError:
                    tree = None
                first = tree.body[0] if tree is not None and tree.body else None
                has_head = first is not None and (
                    (
                        isinstance(first, ast.Expr)
                        and isinstance(first.value, ast.Constant)
                        and isinstance(first.value.value, str)
                    )
                    or (isinstance(first, ast.ImportFrom) and first.module == "__future__")
                )
                assert may_have_head(code) or not has_head, code
                if has_head:  # the prelude after the head, a statement of its own
                    assert "\nimport sys\n" in got and not got.startswith("import sys"), code
                else:
                    assert got == "import sys\n\n" + code, code
