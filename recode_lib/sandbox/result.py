"""The sandbox's result type and its vocabulary, defined once: statuses, outcomes, outcome_of.

    from recode_lib.sandbox.result import Result, TestResult, STATUSES, OUTCOMES, outcome_of
    res: Result = execute(record)          # a plain dict typed as Result (json-ready)

A Result is what `execute`/`execute_many` return and what `recode sandbox` writes, one per
input record: {"id", "status", "outcome", "passed", "total", "time_s", "memory_mb", "tests"}
(+ "reason" when the judge rejected something the sandbox sent back). Every number in it is
finite, so the output file is always strict JSON. Test statuses are STATUSES plus "skipped"
(not run: early stop). The outcome folds a status into the four classes of the extrapolation
paper (`outcome_of`; the one place to change that definition). This module executes nothing.
"""

from __future__ import annotations

from typing import TypedDict

STATUSES = ("passed", "wrong_answer", "runtime_error", "time_limit", "memory_limit",
            "syntax_error", "no_code")
OUTCOMES = ("correct", "optimization_failure", "correctness_failure", "format_error")
TEST_STATUSES = STATUSES + ("skipped",)
CORRECTNESS = ("wrong_answer", "runtime_error")      # a wrong program, not a slow one
FORMAT = ("no_code", "syntax_error")


class TestResult(TypedDict):
    status: str                 # one of TEST_STATUSES
    time_s: float | None        # self-reported by the sandboxed process
    memory_mb: float | None
    input_len: int


class _ResultBase(TypedDict):
    id: object
    status: str                 # one of STATUSES
    outcome: str                # one of OUTCOMES
    passed: int
    total: int
    time_s: float
    memory_mb: float | None
    tests: list[TestResult]


class Result(_ResultBase, total=False):
    reason: str                 # why the judge rejected a message (protocol violation)


def outcome_of(status: str, tests: list) -> str:
    """correct | format_error | correctness_failure (some test wrong or crashed) |
    optimization_failure (every completed test right, some over time or memory)."""
    if status == "passed":
        return "correct"
    if status in FORMAT:
        return "format_error"
    if any(t["status"] in CORRECTNESS for t in tests):
        return "correctness_failure"
    return "optimization_failure"
