"""The sandbox's result type and its vocabulary, defined once: statuses, outcomes, outcome_of.

    from recode_lib.sandbox.result import Result, TestResult, STATUSES, OUTCOMES, outcome_of
    res: Result = execute(record)          # a plain dict typed as Result (json-ready)

The vocabulary only: no judging (verdict.py) and no I/O.
More: docs/modules/sandbox.md (recode_lib.sandbox.result).
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypedDict


class Status(StrEnum):
    """A result's status (the `recode sandbox` output contract; members equal their strings,
    so records read back from JSON compare equal to them)."""

    PASSED = "passed"
    WRONG_ANSWER = "wrong_answer"
    RUNTIME_ERROR = "runtime_error"
    TIME_LIMIT = "time_limit"
    MEMORY_LIMIT = "memory_limit"
    SYNTAX_ERROR = "syntax_error"
    NO_CODE = "no_code"
    ENV_MISSING = "env_missing"  # a module the problem needs is not in the sandbox (environment.py)


class Outcome(StrEnum):
    """Paper B's classification of an attempt: correct, optimization failure ("passes small
    tests but exceeds time/memory on larger ones"), correctness failure, format error."""

    CORRECT = "correct"
    OPTIMIZATION_FAILURE = "optimization_failure"
    CORRECTNESS_FAILURE = "correctness_failure"
    FORMAT_ERROR = "format_error"
    NOT_COUNTED = "not_counted"  # the problem cannot be judged here (env_missing): out of pass@k


# plain strings (error messages show them): the verdicts of a judged program and the paper's
# four outcome classes; env_missing / not_counted (a problem that cannot be judged here) are
# kept apart, so rates, plots and failure classes over these stay the paper's
STATUSES = tuple(s.value for s in Status if s is not Status.ENV_MISSING)
OUTCOMES = tuple(o.value for o in Outcome if o is not Outcome.NOT_COUNTED)
SKIPPED = "skipped"  # a test status only: not run after an early stop
TEST_STATUSES = STATUSES + (SKIPPED, Status.ENV_MISSING.value)
CORRECTNESS = (Status.WRONG_ANSWER, Status.RUNTIME_ERROR)  # a wrong program, not a slow one
RESOURCE = (Status.TIME_LIMIT, Status.MEMORY_LIMIT)
FORMAT = (Status.NO_CODE, Status.SYNTAX_ERROR)
INVALID_RECORD = "invalid_record"  # `recode sandbox` only: an input line that is not a valid
# record (not one of STATUSES: nothing ran; its outcome is format_error, cli/sandbox.py)
NOT_COUNTED = Outcome.NOT_COUNTED.value  # left out of pass@k averages (evaluation.summary)
HANG = "hang"  # a correctness failure made only of time/memory limits (failure_kind)
ISOLATED = "isolated"  # stdio, call, separate script tests (module docstring: Trust)
IN_PROCESS = "in_process"  # inline (unittest-style) script tests: forgeable by the submission
TRUST_LEVELS = (ISOLATED, IN_PROCESS)


class TestResult(TypedDict):
    status: str  # one of TEST_STATUSES
    time_s: float | None  # self-reported by the sandboxed process
    memory_mb: float | None
    input_len: int


class _ResultBase(TypedDict):
    id: object
    status: str  # one of STATUSES
    outcome: str  # one of OUTCOMES
    passed: int
    total: int
    time_s: float
    memory_mb: float | None
    tests: list[TestResult]
    trust: str  # one of TRUST_LEVELS: ISOLATED, or IN_PROCESS for inline script tests


class Result(_ResultBase, total=False):
    reason: str  # why it failed: the judge's refusal (protocol violation,
    #                             worker died), the missing modules (env_missing), or the first
    #                             failing test and what the sandbox reported for it
    #                             (verdict.failure_reason)
    strictness: dict  # {"1": 0|1, ..., "5": .., "inf": ..}: call and stdio tests
    strictness_rule: str  # how R_k reads a problem with no test below 10^k (strictness.RK_RULES)


def outcome_of(status: str, tests: list) -> str:
    """The outcome class of a result's status and tests (module docstring: the definitions)."""
    if status == Status.PASSED:
        return Outcome.CORRECT
    if status == Status.ENV_MISSING:
        return Outcome.NOT_COUNTED
    if status in FORMAT:
        return Outcome.FORMAT_ERROR
    failing = [t for t in tests if t["status"] not in (Status.PASSED, SKIPPED)]
    if not failing or any(t["status"] not in RESOURCE for t in failing):
        return Outcome.CORRECTNESS_FAILURE
    first = min(t.get("input_len") or 0 for t in failing)
    smaller = [t for t in tests if (t.get("input_len") or 0) < first]
    if smaller and all(t["status"] == Status.PASSED for t in smaller):
        return Outcome.OPTIMIZATION_FAILURE
    return Outcome.CORRECTNESS_FAILURE


def failure_kind(status: str, outcome: str) -> str:
    """The outcome, except that a correctness failure whose status is a time or memory limit
    (nothing passed, or a smaller test did not) is HANG: what summaries count separately."""
    if outcome == Outcome.CORRECTNESS_FAILURE and status in RESOURCE:
        return HANG
    return outcome
