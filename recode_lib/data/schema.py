"""The one problem schema every loader produces and every stage consumes.

A `Problem` is a plain dataclass; `problem.to_dict()` / `Problem.from_dict(d)` round-trip it
through JSON, and `problem.to_json()` / `Problem.from_json(text)` are the one conversion of a
problem to and from a dataset column (a GRPO training row's `problem`, which the code rewards
read back: recode_lib.training.grpo.code_row, recode_lib.rewards.base.row_problems).
`tests` uses the sandbox's test kinds (docs/sandbox.md, `recode sandbox`):

    {"kind": "stdio",  "cases": [{"input": str, "output": str, "input_len": int?}, ...]}
    {"kind": "call",   "fn_name": str,
                       "cases": [{"args": [...], "expected": ..., "input_len": int?}],
                       "atol": float?}
    {"kind": "script", "script": str, "entry_point": str?, "helpers": str?}

(helpers: the problem's own code whose definitions the tests use, e.g. HumanEval's prompt.)
`input_len` is the length of a test's input (characters of stdin, or of the JSON of the
arguments): the nested strictness rewards R_k keep the tests with input_len < 10**k.
from_dict validates and raises ProblemError naming the field; it does not fetch anything.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from recode_lib.core.errors import RecodeError

TEST_KINDS = ("stdio", "call", "script")


class ProblemError(RecodeError, ValueError):
    """A problem record that does not fit the schema; the message names the record and field."""


@dataclass
class Problem:
    id: str  # globally unique, "<source>/<native id>"
    source: str  # humaneval | humanevalplus | mbpp | mbppplus | bigcodebench | ...
    prompt: str  # the statement shown to the model (natural language and/or code)
    tests: dict  # sandbox test spec, see module docstring
    starter_code: str = ""  # code the answer must complete (function signature, class stub)
    entry_point: str | None = None  # function / method name the tests call
    time_limit_s: float = 10.0  # per test
    memory_mb: int = 1024
    difficulty: str | None = None  # easy | medium | hard (where the source says)
    release_date: str | None = None  # ISO date, for contamination windows
    reference_solution: str | None = None
    answer: str | None = None  # math problems: the normalised final answer
    metadata: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict, where: str = "") -> Problem:
        where = where or f"problem {d.get('id', '?')!r}"
        if not isinstance(d, dict):
            raise ProblemError(f"{where}: expected an object, got {type(d).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        for req in ("id", "source", "prompt", "tests"):
            if req not in d:
                raise ProblemError(f"{where}: missing field {req!r}")
        unknown = set(d) - names
        if unknown:
            raise ProblemError(f"{where}: unknown field(s) {sorted(unknown)}")
        validate_tests(d["tests"], where)
        return cls(**d)

    def to_json(self) -> str:
        """The problem as JSON text (to_dict's, keys sorted): a dataset column's value."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, value: Any, where: str = "") -> Problem:
        """The Problem of a dataset column value: to_json's text, a to_dict mapping, or a
        Problem (returned as is); ProblemError naming `where` (and the problem's id when it
        has one) for anything else or for a record that does not fit the schema."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError as exc:
                raise ProblemError(f"{where or 'problem'}: not JSON ({exc})") from None
        if not isinstance(value, dict):
            raise ProblemError(
                f"{where or 'problem'}: expected a problem (JSON text or an object), "
                f"got {type(value).__name__}"
            )
        if where and isinstance(value.get("id"), str):
            where = f"{where} (problem {value['id']!r})"
        return cls.from_dict(value, where)


def validate_tests(tests: Any, where: str = "") -> None:
    """Raise ProblemError unless `tests` is a well-formed sandbox test spec."""
    if not isinstance(tests, dict):
        raise ProblemError(f"{where}: field 'tests' must be an object")
    kind = tests.get("kind")
    if kind not in TEST_KINDS:
        raise ProblemError(f"{where}: tests.kind must be one of {TEST_KINDS}, got {kind!r}")
    if kind == "script":
        if not isinstance(tests.get("script"), str):
            raise ProblemError(f"{where}: tests.script must be a string")
        return
    cases = tests.get("cases")
    if not isinstance(cases, list):
        raise ProblemError(f"{where}: tests.cases must be a list")
    if kind == "call" and not isinstance(tests.get("fn_name"), str):
        raise ProblemError(f"{where}: tests.fn_name must be a string for kind 'call'")
    need = ("input", "output") if kind == "stdio" else ("args", "expected")
    for i, case in enumerate(cases):
        if not isinstance(case, dict):
            raise ProblemError(f"{where}: tests.cases[{i}] must be an object")
        for k in need:
            if k not in case:
                raise ProblemError(f"{where}: tests.cases[{i}] is missing {k!r}")
