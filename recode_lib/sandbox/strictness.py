"""Nested strictness rewards from one execution (paper B's R_k), and the first failing test.

    strictness(result, ks=(1, 2, 3, "inf")) -> {"1": 0|1, "2": 0|1, "3": 0|1, "inf": 0|1}
    first_failure(result) -> {"index", "status", "input_len", "time_s", "memory_mb",
                              "longest_passed_len"} | None   (the execution statistics a repair
                              prompt shows; None when every test passed or there are none)

The paper: "R_k(y) = 1 iff the solution passes every test whose input length is < 10^k;
R_inf(y) = 1 iff it passes the whole suite". Two cases the sentence leaves open are decided
here, once:
- A program that does not run (no code, a syntax error, no tests at all) scores 0 for every k:
  R_k is never vacuously 1.
- When a problem has no test with input length < 10^k, R_k is judged on its smallest tests
  (every test of the minimum input length), so each R_k asks for something.
`result` is a sandbox result (its "tests" list carries status and input_len per test). With
early stop the tests run in ascending input_len order and a skipped test counts as not
passed, so a first failure at length L leaves R_k = 1 exactly for 10**k <= L (or 0 when the
failure is among the smallest tests). This module executes nothing.
"""

from __future__ import annotations

NOT_RUN = ("no_code", "syntax_error", "env_missing")   # a program that does not (or cannot) run


def strictness(result: dict, ks=(1, 2, 3, 4, 5, "inf")) -> dict:
    tests = result.get("tests")
    if not isinstance(tests, list):
        raise ValueError(f"strictness: result {result.get('id')!r} has no 'tests' list")
    runs = bool(tests) and result.get("status") not in NOT_RUN and not any(
        t["status"] in NOT_RUN for t in tests)
    smallest = min((t["input_len"] for t in tests), default=0)
    out = {}
    for k in ks:
        key = str(k)
        if key == "inf":
            keep = tests
        else:
            try:
                bound = 10 ** int(k)
            except (TypeError, ValueError):
                raise ValueError(f"strictness: k must be an integer or 'inf', got {k!r}") from None
            keep = [t for t in tests if t["input_len"] < bound] or [
                t for t in tests if t["input_len"] == smallest]
        out[key] = int(runs and all(t["status"] == "passed" for t in keep))
    return out


def first_failure(result: dict) -> dict | None:
    """The first test (execution order) that did not pass, with the longest input passed
    before it; None when all passed or the result has no tests."""
    tests = result.get("tests")
    if not isinstance(tests, list):
        raise ValueError(f"first_failure: result {result.get('id')!r} has no 'tests' list")
    longest = None
    order = sorted(range(len(tests)), key=lambda j: tests[j].get("input_len") or 0)
    for i in order:  # the sandbox runs tests in ascending input length (stable)
        t = tests[i]
        if t["status"] != "passed":
            return {"index": i, "status": t["status"], "input_len": t.get("input_len"),
                    "time_s": t.get("time_s"), "memory_mb": t.get("memory_mb"),
                    "longest_passed_len": longest}
        if t.get("input_len") is not None:
            longest = max(longest or 0, t["input_len"])
    return None
