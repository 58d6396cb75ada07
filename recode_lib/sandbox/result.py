"""The sandbox's result type and its vocabulary, defined once: statuses, outcomes, outcome_of.

    from recode_lib.sandbox.result import Result, TestResult, STATUSES, OUTCOMES, outcome_of
    res: Result = execute(record)          # a plain dict typed as Result (json-ready)

A Result is what `execute`/`execute_many` return and what `recode sandbox` writes, one per
input record: {"id", "status", "outcome", "passed", "total", "time_s", "memory_mb", "tests",
"trust"} (+ "reason" on every failure: why — see Result.reason; + "strictness", R_k for
k = 1..5 and inf, for call and stdio tests, which carry input lengths). Every number in it is
finite, so the output file is always strict JSON. Test statuses are STATUSES plus "skipped"
(not run: early stop). The outcome folds the tests into the four classes of the extrapolation
paper (`outcome_of`; the one place to change that definition, used by the sandbox, evaluation
summaries, frontier, plots and repair). Paper B: an optimization failure "passes small tests,
exceeds time/memory on larger ones". Here:
- correct: every test passed.
- format_error: no code or a syntax error (`FORMAT`); evaluation also files a response that hit
  the token limit here (paper B: format errors at |alpha| > 2 are "token exhaustion").
- optimization_failure: every failing test is time_limit/memory_limit (`RESOURCE`), every test
  smaller (input length) than the first resource failure passed, and at least one of those
  smaller tests exists — the program is right on small inputs and fails only on larger ones.
- correctness_failure: anything else — a wrong answer or crash, and also a resource failure
  with no smaller test passed (an infinite loop on the smallest inputs, even when another
  test of that same length passed, is not slow, it is wrong). Summaries count these resource-only correctness failures separately
  as `HANG` (`failure_kind`) so they stay visible.
- not_counted: status env_missing — a module the problem needs (the record's "requires") is
  not installed for the sandbox's interpreter, so nothing ran and no answer can be judged
  (environment.py). Not a wrong answer: summaries leave it out of pass@k and count it.
Early stop: tests after the first failure are "skipped" and neither pass nor fail; since tests
run in ascending input length, the first failure decides — a first failure that is a resource
failure after a passed smaller test is an optimization failure, else a hang.
Trust (`trust`, one of TRUST_LEVELS): how far the verdict can be believed against a hostile
submission, decided from the record's tests alone (records.runs_in_process), never from what
the submission did:
- ISOLATED ("isolated"): stdio, call and separate script tests — the expected values never
  enter the sandbox and the judge compares plain outputs (or the tests run in a process that
  never runs submission code), so a submission can forge only its own outputs and timings.
- IN_PROCESS ("in_process"): inline script tests (unittest/mock style, BigCodeBench; tests.kind
  "script" and not separate) — they run in the submission's own interpreter, where arbitrary
  code can forge the pass (write protocol lines, patch unittest or the harness): a "passed"
  here is not proof of correctness. Evaluation summaries count results per level; GRPO rewards
  refuse such tests unless the recipe sets allow_in_process_tests.
A no-code result carries the level of its tests too. `recode sandbox` also writes
INVALID_RECORD ("invalid_record", outcome format_error) for an input line that is not a valid
record; the library never returns it. This module executes nothing.
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
    #                             failing test and what the sandbox reported for it (verdict.failure_reason)
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
