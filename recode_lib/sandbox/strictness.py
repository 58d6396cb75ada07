"""Nested strictness rewards from one execution: R_k = 1 iff every test with input_len < 10**k passed.

    strictness(result, ks=(1, 2, 3, "inf")) -> {"1": 0|1, "2": 0|1, "3": 0|1, "inf": 0|1}
    first_failure(result) -> {"index", "status", "input_len", "time_s", "memory_mb",
                              "longest_passed_len"} | None   (the execution statistics a repair
                              prompt shows; None when every test passed or there are none)

`result` is a sandbox result (its "tests" list carries status and input_len per test); R_inf
is 1 iff every test passed. With early stop the tests run in ascending input_len order, so a
first failure at length L leaves R_k = 1 exactly for 10**k <= L: a skipped test counts as not
passed, and any skipped test is at least as long as the failure before it. A result without
tests (no code) gives 0 everywhere. This module executes nothing.
"""

from __future__ import annotations


def strictness(result: dict, ks=(1, 2, 3, 4, 5, "inf")) -> dict:
    tests = result.get("tests")
    if not isinstance(tests, list):
        raise ValueError(f"strictness: result {result.get('id')!r} has no 'tests' list")
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
            keep = [t for t in tests if t["input_len"] < bound]
        out[key] = int(bool(tests) and all(t["status"] == "passed" for t in keep))
    return out


def first_failure(result: dict) -> dict | None:
    """The first test (execution order) that did not pass, with the longest input passed
    before it; None when all passed or the result has no tests."""
    tests = result.get("tests")
    if not isinstance(tests, list):
        raise ValueError(f"first_failure: result {result.get('id')!r} has no 'tests' list")
    longest = None
    for i, t in enumerate(tests):
        if t["status"] != "passed":
            return {"index": i, "status": t["status"], "input_len": t.get("input_len"),
                    "time_s": t.get("time_s"), "memory_mb": t.get("memory_mb"),
                    "longest_passed_len": longest}
        if t.get("input_len") is not None:
            longest = max(longest or 0, t["input_len"])
    return None
