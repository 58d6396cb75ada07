"""Linear parsing (issue 39, item 4): think blocks, fences and the code block are found in time
linear in the response, and exactly where the former regexes found them.

The former patterns are kept here as the reference: on random texts over the characters that
matter (backticks, newlines, spaces, tabs, language words, think tags) the linear scanners
give the same blocks, offsets and think spans. The timing tests use inputs on which the regexes
took seconds to minutes (`<think>` x 50,000: 118 s; ``` and 32,000 spaces: 0.64 s, quadratic),
with bounds loose enough for a busy 2-core machine.
"""

from __future__ import annotations

import random
import re
import time

import pytest

from recode_lib.core.assemble import assemble
from recode_lib.core.math_answers import parse_math_response
from recode_lib.core.prompts import code_blocks, fences, parse_response, think_text, without_think
from recode_lib.data.schema import Problem

OLD_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.DOTALL)
OLD_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
PIECES = [
    "```",
    "`",
    "\n",
    " ",
    "\t",
    "python",
    "py",
    "x",
    "-",
    "<think>",
    "</think>",
    "a\n",
    "def f():\n    return 1\n",
    "```python\n",
    "\n```",
    "é",
    "\r",
]


def random_texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40))) for _ in range(n)]


def test_fences_are_where_the_former_regex_found_them():
    for text in random_texts(0, 4000):
        for pos in (0, len(text) // 2):
            old = [
                (m.group(1).lower(), m.group(2), m.start(), m.end())
                for m in OLD_FENCE.finditer(text, pos)
            ]
            new = [(f.lang, f.body, f.start, f.end) for f in fences(text, pos)]
            assert new == old, text


def test_think_blocks_are_where_the_former_regex_found_them():
    for text in random_texts(1, 4000):
        m = OLD_THINK.search(text)
        assert think_text(text) == (m.group(1) if m else None), text
        assert without_think(text) == OLD_THINK.sub("", text), text


def _seconds(fn, *args):
    """CPU seconds of this process for fn(*args): the parse's own work, which other processes
    on a loaded machine (or the other pytest-xdist worker) do not inflate as they do wall time
    (a quadratic parse of these inputs costs minutes of CPU either way)."""
    t0 = time.process_time()
    fn(*args)
    return time.process_time() - t0


ADVERSARIAL = {
    "50,000 <think> openers": "<think>" * 50_000,
    "50,000 <think> openers, then a block": "<think>" * 50_000 + "```python\nx = 1\n```",
    "``` and 1 MB of spaces": "```" + " " * 1_000_000 + "x",
    "1 MB of empty fences": "```\n" * 250_000,
    "1 MB of ```python openers": "```python\n" * 100_000,
    "1 MB of spaces after newlines": "```python\n" + ("\n" + " " * 999) * 1000,
}


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_adversarial_responses_parse_in_linear_time(name):
    text = ADVERSARIAL[name]
    assert _seconds(parse_response, text) < 2.0, name
    assert _seconds(parse_math_response, text) < 2.0, name
    assert _seconds(code_blocks, text) < 2.0, name


def test_assemble_of_50000_think_openers_is_fast():
    p = Problem(
        id="t/1",
        source="t",
        prompt="p",
        tests={"kind": "call", "fn_name": "f", "cases": []},
        starter_code="def f(x):\n",
        entry_point="f",
    )
    text = "<think>" * 50_000 + "```python\ndef f(x):\n    return x\n```"
    assert _seconds(assemble, p, text) < 2.0
    assert assemble(p, text).code.startswith("def f(x):")


def test_a_function_answer_followed_by_many_statements_assembles_in_linear_time():
    """sanitize took the source segment of each dropped statement by splitting the whole
    program again: 8,000 top-level prints after a right function cost 50 s of CPU."""
    p = Problem(
        id="t/1",
        source="t",
        prompt="p",
        tests={"kind": "call", "fn_name": "f", "cases": []},
        starter_code='def f(x):\n    """F."""\n',
        entry_point="f",
    )
    text = "<think>r</think>\n```python\ndef f(x):\n    return x\n" + "print(1)\n" * 8000 + "```"
    assert _seconds(assemble, p, text) < 2.0
    prog = assemble(p, text)
    assert prog.how == "function" and len(prog.dropped) == 8000 and "print" not in prog.code
