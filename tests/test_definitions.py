"""The scoring definitions, each pinned once (docs/definitions.md): R_k without vacuous truth,
optimization failure vs hang, truncated answers as format errors (evaluation and rewards)."""

from __future__ import annotations

import pytest

from recode_lib.data.schema import Problem
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.evaluation.summary import summarize
from recode_lib.generation import Completion, Generator
from recode_lib.rewards import get_reward
from recode_lib.rewards.base import RewardFunction, truncated_flags
from recode_lib.rewards.execution import SandboxRunner
from recode_lib.sandbox import execute, strictness
from recode_lib.sandbox.result import HANG, OUTCOMES, failure_kind, outcome_of
from tests.test_evaluation import PROBLEMS, _block


def _res(status, *tests):
    """A result with tests given as (status, input_len) pairs."""
    return {
        "id": "r",
        "status": status,
        "tests": [
            {"status": s, "input_len": n, "time_s": None, "memory_mb": None} for s, n in tests
        ],
    }


# ---- 1. R_k ---------------------------------------------------------------------------------


def test_rk_is_zero_everywhere_for_a_program_that_does_not_run():
    for status in ("syntax_error", "no_code"):
        r = _res(status, (status, 50), (status, 500))  # no test below 10: was vacuously 1
        assert strictness(r, (1, 2, 3, "inf")) == {"1": 0, "2": 0, "3": 0, "inf": 0}
    assert strictness(_res("runtime_error"), (1, "inf")) == {"1": 0, "inf": 0}  # no tests


def test_rk_without_tests_below_the_bound_is_judged_on_the_smallest_tests():
    r = _res("wrong_answer", ("passed", 50), ("passed", 50), ("wrong_answer", 500))
    assert strictness(r, (1, 2, 3, "inf")) == {"1": 1, "2": 1, "3": 0, "inf": 0}
    r = _res("wrong_answer", ("wrong_answer", 50), ("passed", 500))
    assert strictness(r, (1, 2, 3, "inf")) == {"1": 0, "2": 0, "3": 0, "inf": 0}


def test_rk_with_early_stop_counts_skipped_tests_as_not_passed():
    r = _res("time_limit", ("passed", 5), ("time_limit", 50), ("skipped", 500))
    assert strictness(r, (1, 2, 3, "inf")) == {"1": 1, "2": 0, "3": 0, "inf": 0}


def test_sandbox_results_carry_strictness_and_a_syntax_error_scores_zero():
    cases = [{"args": ["a" * n], "expected": n, "input_len": n} for n in (20, 200)]
    rec = {
        "id": "s",
        "code": "def f(s) return 1",
        "tests": {"kind": "call", "fn_name": "f", "cases": cases},
    }
    r = execute(rec)
    assert r["status"] == "syntax_error"
    assert set(r["strictness"]) == {"1", "2", "3", "4", "5", "inf"}
    assert not any(r["strictness"].values())
    ok = execute({**rec, "code": "def f(s):\n    return len(s) if len(s) < 100 else 0\n"})
    assert ok["strictness"] == {"1": 1, "2": 1, "3": 0, "4": 0, "5": 0, "inf": 0}
    script = execute(
        {"id": "x", "code": "x = 1", "tests": {"kind": "script", "script": "assert x == 1\n"}}
    )
    assert "strictness" not in script  # no input lengths


def test_partial_discrete_reward_inherits_the_fix():
    tests = {
        "kind": "call",
        "fn_name": "f",
        "cases": [{"args": ["a" * 30], "expected": 30, "input_len": 30}],
    }
    bad = _block("def f(s) return len(s)")  # a syntax error, every test >= 10
    got = get_reward("partial_discrete", ks=[1, 2], runner=SandboxRunner(workers=1))(
        ["p"], [bad], problem=[Problem(id="t/f", source="t", prompt="f", tests=tests)]
    )
    assert got == [0.0]


# ---- 2. outcomes ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "status,tests,outcome",
    [
        ("passed", [("passed", 5)], "correct"),
        ("syntax_error", [("syntax_error", 5)], "format_error"),
        ("time_limit", [("passed", 5), ("time_limit", 500)], "optimization_failure"),
        (
            "memory_limit",
            [("passed", 5), ("passed", 50), ("memory_limit", 500), ("time_limit", 5000)],
            "optimization_failure",
        ),
        ("time_limit", [("time_limit", 5), ("time_limit", 500)], "correctness_failure"),  # hang
        ("time_limit", [("time_limit", 5)], "correctness_failure"),
        (
            "wrong_answer",
            [("passed", 5), ("wrong_answer", 50), ("time_limit", 500)],
            "correctness_failure",
        ),
        # early stop: the first failure decides, skipped tests neither pass nor fail
        (
            "time_limit",
            [("passed", 5), ("time_limit", 50), ("skipped", 500)],
            "optimization_failure",
        ),
        ("time_limit", [("time_limit", 5), ("skipped", 50)], "correctness_failure"),
        # a resource failure on the smallest inputs is never "exceeds on larger ones": no smaller
        # test passed (even when a larger one did, or one of the same length did)
        (
            "time_limit",
            [("time_limit", 5), ("passed", 50), ("time_limit", 500)],
            "correctness_failure",
        ),
        ("time_limit", [("passed", 5), ("time_limit", 5)], "correctness_failure"),
        ("runtime_error", [("passed", 5), ("skipped", 50)], "correctness_failure"),
    ],
)
def test_outcome_definition(status, tests, outcome):
    r = _res(status, *tests)
    assert outcome_of(status, r["tests"]) == outcome


def test_hang_is_a_correctness_failure_counted_apart():
    assert failure_kind("time_limit", "correctness_failure") == HANG
    assert failure_kind("wrong_answer", "correctness_failure") == "correctness_failure"
    assert failure_kind("time_limit", "optimization_failure") == "optimization_failure"
    rows = [
        {
            "problem_id": "a",
            "sample": i,
            "status": s,
            "outcome": o,
            "passed": 0,
            "total": 1,
            "n_tokens": 3,
            "finish_reason": f,
            "code": "x",
            "format_ok": True,
        }
        for i, (s, o, f) in enumerate(
            [
                ("time_limit", "correctness_failure", "stop"),
                ("wrong_answer", "correctness_failure", "stop"),
                ("time_limit", "optimization_failure", "stop"),
                ("no_code", "format_error", "length"),
            ]
        )
    ]
    s = summarize(rows, ks=(1,))
    assert s["outcomes"]["correctness_failure"] == 0.5
    assert s["failure_kinds"][HANG] == 0.25 and s["failure_kinds"]["correctness_failure"] == 0.25
    assert s["truncation"] == {"count": 1, "rate": 0.25}


def test_infinite_loop_on_the_smallest_input_is_not_an_optimization_failure():
    code = "def f(n):\n    while True:\n        pass\n"
    rec = {
        "id": "h",
        "code": code,
        "time_limit_s": 0.5,
        "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [1], "expected": 1}]},
    }
    r = execute(rec)
    assert (r["status"], r["outcome"]) == ("time_limit", "correctness_failure")
    assert failure_kind(r["status"], r["outcome"]) == HANG


def test_one_outcome_vocabulary():
    import recode_lib.analysis.frontier as frontier
    import recode_lib.analysis.plots as plots
    import recode_lib.evaluation.summary as summary
    import recode_lib.training.repair as repair

    for mod in (frontier, plots, summary, repair):
        assert mod.OUTCOMES is OUTCOMES


# ---- 3. truncation --------------------------------------------------------------------------


class Truncating(Generator):
    """Every response parses, but the odd samples hit the token limit."""

    backend = model = "truncating"

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        out = []
        for j, r in enumerate(requests):
            comp = Completion(
                _block("def add(a, b):\n    return a + b"),
                n_tokens=7,
                finish_reason="length" if r.index % 2 else "stop",
            )
            out.append(comp)
            if callback:
                callback(j, comp)
        return out


def test_a_truncated_response_is_a_format_error_even_if_its_code_parses(tmp_path):
    spec = EvalSpec(temperature=0.8, n=2, k=(1,), workers=1, progress=False)
    s = spec.evaluate("t", PROBLEMS[:1], tmp_path / "ev", generator=Truncating())
    from recode_lib.core.jsonl import read_jsonl

    rows = {r["sample"]: r for r in read_jsonl(tmp_path / "ev" / "samples.jsonl")}
    assert rows[0]["outcome"] == "correct"
    assert (rows[1]["outcome"], rows[1]["finish_reason"], rows[1]["format_ok"]) == (
        "format_error",
        "length",
        False,
    )
    assert rows[1]["code"] is None and "truncated" in rows[1]["format_reason"]
    assert s["truncation"] == {"count": 1, "rate": 0.5}
    assert s["outcomes"]["format_error"] == 0.5


def test_truncated_flags_follow_trl():
    stops = [2, 0]  # eos, pad
    assert truncated_flags([[5, 6, 2], [5, 6, 7], [5, 0], []], stops, 4) == [
        False,
        True,
        False,
        False,
    ]
    assert truncated_flags(None, stops, 2) == [False, False]
    assert truncated_flags([[5]], None, 1) == [False]


def test_a_truncated_completion_gets_no_format_or_outcome_credit():
    tests = {"kind": "call", "fn_name": "f", "cases": [{"args": [1], "expected": 1}]}
    good = _block("def f(x):\n    return x")
    fn: RewardFunction = get_reward("outcome", runner=SandboxRunner(workers=1))
    fmt: RewardFunction = get_reward("format")
    p = Problem(id="t/f", source="t", prompt="f", tests=tests)
    kw = {"problem": [p, p], "completion_ids": [[7, 8, 2], [7, 8, 9]]}
    assert fn(["p", "p"], [good, good], **kw) == [1.0, 1.0]  # no stop ids: nothing truncated
    fn.stop_token_ids = fmt.stop_token_ids = [2]
    try:
        assert fn(["p", "p"], [good, good], **kw) == [1.0, 0.0]
        assert fmt(["p", "p"], [good, good], **kw) == [1.0, 0.0]
        rows = fn.details(["p", "p"], [good, good], **kw)
        assert [r["truncated"] for r in rows] == [False, True] and rows[1]["fmt"] == 0.0
    finally:
        fn.stop_token_ids = fmt.stop_token_ids = None


# ---- the best single checkpoint (ensemble baseline) -----------------------------------------


def test_best_single_ties_follow_its_docstring():
    """Equal mean pass@k: the smaller distance outside [0, 1] first (a run counts as inside),
    then an alpha before a run, then the lowest alpha; between runs the last name."""
    from recode_lib.analysis.ensemble import best_single

    c = {"p": (4, 2)}
    assert best_single({1.5: c, "k2": c}, 1) == "k2"  # a run beats a tied extrapolated alpha
    assert best_single({0.5: c, "k2": c}, 1) == 0.5  # an alpha in [0, 1] beats a run
    assert best_single({-0.5: c, 1.5: c, -1.0: c}, 1) == -0.5  # equally far outside: the lowest
    assert best_single({0.25: c, 0.75: c}, 1) == 0.25
    assert best_single({"k1": c, "k2": c}, 1) == "k2"  # runs: the last name
    assert best_single({3.0: {"p": (4, 3)}, 0.5: c}, 1) == 3.0  # the score decides first
    assert best_single({3.0: {"p": (4, 3)}, 0.5: c}, 1, candidates=[0.5]) == 0.5
