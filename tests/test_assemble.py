"""From response text to the program the sandbox runs (recode_lib.core.assemble)."""

from __future__ import annotations

import ast

from recode_lib.core.assemble import assemble
from recode_lib.data.schema import Problem

STARTER = (
    'import math\n\n\ndef poly(xs, x):\n    """helper"""\n'
    "    return sum(c * x ** i for i, c in enumerate(xs))\n\n\n"
    'def find_root(xs):\n    """Return a root of poly."""\n'
)


def _problem(kind="script", starter=STARTER, entry="find_root"):
    tests = (
        {"kind": "script", "script": "assert True"}
        if kind == "script"
        else {"kind": "stdio", "cases": [{"input": "1\n", "output": "1\n"}]}
        if kind == "stdio"
        else {"kind": "call", "fn_name": entry, "cases": [{"args": [1], "expected": 1}]}
    )
    return Problem(
        id="t/1",
        source="t",
        prompt=starter or "task",
        tests=tests,
        starter_code=starter,
        entry_point=None if kind == "stdio" else entry,
    )


def _block(code, think="I reason."):
    return f"<think>\n{think}\n</think>\n```python\n{code}\n```"


def test_full_function_is_sanitized_and_gets_the_starter_helpers():
    code = (
        "def find_root(xs):\n    return -xs[0] / xs[1] if poly(xs, 0) else 0.0\n\n"
        "print(find_root([1, 2]))\nassert find_root([0, 1]) == 0\n"
        "if __name__ == '__main__':\n    input()\n"
    )
    prog = assemble(_problem(), _block(code))
    assert prog.how == "function" and prog.parsed.format_ok
    tree = ast.parse(prog.code)
    names = [getattr(n, "name", None) for n in tree.body]
    assert names == [None, "poly", "find_root"]  # import math, helper, answer
    assert "print(" not in prog.code and "__main__" not in prog.code and "assert" not in prog.code
    assert len(prog.dropped) == 3


def test_answer_redefining_a_helper_keeps_its_own():
    code = "def poly(xs, x):\n    return 0\n\n\ndef find_root(xs):\n    return 1.0\n"
    prog = assemble(_problem(), _block(code))
    assert prog.code.count("def poly") == 1 and "return 0" in prog.code


def test_indented_body_only_answer_completes_the_starter():
    prog = assemble(_problem(kind="call"), _block("    return -xs[0] / xs[1]"))
    assert prog.parsed.code is None  # alone it does not parse
    assert prog.how == "starter+body"
    ns = {}
    exec(prog.code, ns)
    assert ns["find_root"]([2, 4]) == -0.5


def test_unindented_body_only_answer_completes_the_starter():
    prog = assemble(_problem(kind="call"), _block("r = -xs[0] / xs[1]\nreturn r"))
    ns = {}
    exec(prog.code, ns)
    assert prog.how == "starter+body" and ns["find_root"]([1, 1]) == -1.0


def test_no_code_block_is_a_format_error():
    for text in ["I think the answer is 4.", "```python\ndef f(:\n```", ""]:
        prog = assemble(_problem(), text)
        assert prog.code is None and prog.how == "none"


def test_wrong_function_name_runs_as_written():
    prog = assemble(_problem(kind="call"), _block("def other(xs):\n    return 1"))
    assert prog.how == "as_is" and "def other" in prog.code


def test_method_of_solution_class_counts_as_the_entry_point():
    code = "class Solution:\n    def find_root(self, xs):\n        return 0\n\nprint(1)\n"
    prog = assemble(_problem(kind="call", starter=""), _block(code))
    assert prog.how == "function" and "print" not in prog.code


def test_stdio_program_runs_as_is_and_a_lone_main_gets_called():
    as_is = "n = int(input())\nprint(n)"
    assert assemble(_problem("stdio", starter=""), _block(as_is)).code == as_is
    lone = "def main():\n    print(int(input()))"
    assert assemble(_problem("stdio", starter=""), _block(lone)).code.rstrip().endswith("main()")


def test_prelude_goes_in_front_of_the_program_and_makes_typing_names_resolve():
    problem = _problem(kind="call", starter="")
    problem.metadata["prelude"] = "from typing import *"
    code = "class Solution:\n    def find_root(self, xs: List[int]) -> int:\n        return 0\n"
    prog = assemble(problem, _block(code))
    assert prog.code.startswith("from typing import *")
    exec(compile(prog.code, "<prog>", "exec"), {})  # List resolves: no NameError


def test_a_future_import_stays_first_when_the_prelude_and_starter_go_in_front():
    # a correct answer opening with `from __future__ import annotations` must still compile:
    # Python accepts future imports only at the top of a module
    problem = _problem(kind="call", starter="import math\n\ndef f(x):\n    pass", entry="f")
    problem.metadata["prelude"] = "from typing import *"
    code = (
        '"""doc"""\nfrom __future__ import annotations\n\n'
        "def f(x: List[int]) -> int:\n    return math.floor(sum(x))\n"
    )
    prog = assemble(problem, _block(code))
    ns = {}
    exec(compile(prog.code, "<prog>", "exec"), ns)  # no SyntaxError, List and math resolve
    assert ns["f"]([1, 2]) == 3
    assert prog.code.index("from __future__") < prog.code.index("from typing import *")


def test_no_prelude_no_change_and_format_error_stays_none():
    problem = _problem(kind="call", starter="")
    problem.metadata["prelude"] = "from typing import *"
    assert assemble(problem, "no code here").code is None
