"""Nested strictness rewards from one execution (paper B's R_k), and the first failing test.

    strictness(result, ks=(1, 2, 3, "inf")) -> {"1": 0|1, "2": 0|1, "3": 0|1, "inf": 0|1}
    strictness(result, ks, rule="literal")          # the other reading (RK_RULES)
    rule_counts([p.tests for p in problems], ks)    # {"1": {"problems", "touched", "share"}, ...}
    first_failure(result) -> {"index", "status", "input_len", "time_s", "memory_mb",
                              "longest_passed_len"} | None   (the execution statistics a repair
                              prompt shows; None when every test passed or there are none)

The paper: "R_k(y) = 1 iff the solution passes every test whose input length is < 10^k;
R_inf(y) = 1 iff it passes the whole suite". Two cases the sentence leaves open:
- A program that does not run (no code, a syntax error, env_missing, no tests at all) scores 0
  for every k under either reading: R_k is never vacuously 1 for it.
- A problem with no test of input length < 10^k: two readings (RK_RULES), chosen by `rule`
  and recorded wherever R_k is (results' "strictness_rule", the strict rewards' `rule` option
  in a run's recipe, notebook 06's metrics):
  "smallest" (DEFAULT_RK_RULE, the project's choice): R_k is judged on the smallest tests
  (every test of the minimum input length), so each R_k asks for something;
  "literal" (the sentence as written): vacuously 1 — no test is below 10^k.
  The choice reshapes the k1 run (theta_low of every alpha, the frontier, the ensembles) on
  exactly the problems `rule_touches` names; `rule_counts` counts them per k (notebook 06
  prints it for its training and evaluation problems and keeps it in its metrics).
`result` is a sandbox result (its "tests" list carries status and input_len per test). With
early stop the tests run in ascending input_len order and a skipped test counts as not
passed, so a first failure at length L leaves R_k = 1 exactly for 10**k <= L (or 0 when the
failure is among the smallest tests). This module executes nothing.
"""

from __future__ import annotations

from recode_lib.sandbox.config import SandboxConfig
from recode_lib.sandbox.records import parse_record

NOT_RUN = ("no_code", "syntax_error", "env_missing")  # a program that does not (or cannot) run


RK_RULES = ("smallest", "literal")
DEFAULT_RK_RULE = "smallest"


def check_rule(rule: str) -> str:
    if rule not in RK_RULES:
        raise ValueError(f"the R_k rule must be one of {RK_RULES}, got {rule!r}")
    return rule


def strictness(result: dict, ks=(1, 2, 3, 4, 5, "inf"), rule: str = DEFAULT_RK_RULE) -> dict:
    """{"<k>": R_k} of one sandbox result under `rule` (module docstring: the two readings)."""
    check_rule(rule)
    tests = result.get("tests")
    if not isinstance(tests, list):
        raise ValueError(f"strictness: result {result.get('id')!r} has no 'tests' list")
    runs = (
        bool(tests)
        and result.get("status") not in NOT_RUN
        and not any(t["status"] in NOT_RUN for t in tests)
    )
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
            keep = [t for t in tests if t["input_len"] < bound]
            if not keep and rule == "smallest":
                keep = [t for t in tests if t["input_len"] == smallest]
        out[key] = int(runs and all(t["status"] == "passed" for t in keep))
    return out


def rule_touches(input_lens, k) -> bool:
    """True when the R_k rule decides this problem at k: it has tests, none of input length
    < 10^k (k an integer; R_inf never depends on the rule)."""
    lens = list(input_lens)
    return str(k) != "inf" and bool(lens) and min(lens) >= 10 ** int(k)


def input_lengths(tests) -> list[int]:
    """The input length of each test as the sandbox counts it (records.parse_record: a case's
    input_len, else the length of its input text or of its arguments' JSON; a script: [0])."""
    spec = parse_record(
        {"id": "rk", "code": None, "tests": tests}, SandboxConfig(), where="R_k rule count"
    )
    return list(spec.input_lens)


def rule_counts(tests_list, ks) -> dict:
    """Per finite k of `ks`: {"problems": how many, "touched": how many the R_k rule decides
    (rule_touches), "share": touched / problems} over `tests_list` (each problem's tests)."""
    lens = [input_lengths(t) for t in tests_list]
    out = {}
    for k in ks:
        if str(k) == "inf":
            continue
        touched = sum(rule_touches(x, k) for x in lens)
        out[str(k)] = {
            "problems": len(lens),
            "touched": touched,
            "share": touched / len(lens) if lens else 0.0,
        }
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
            return {
                "index": i,
                "status": t["status"],
                "input_len": t.get("input_len"),
                "time_s": t.get("time_s"),
                "memory_mb": t.get("memory_mb"),
                "longest_passed_len": longest,
            }
        if t.get("input_len") is not None:
            longest = max(longest or 0, t["input_len"])
    return None
