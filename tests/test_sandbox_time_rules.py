"""Time limits and tolerances as the benchmark's own judge applies them.

EvalPlus 0.3.1 gives each test its own limit, max(1 s, 4 x that test's reference time); recode
gave every test of a task one limit from the slowest reference call, so a program that sleeps
on a tiny input passed here and failed there. Per-case `time_limit_s` (records.py) is each
test's own wall-clock deadline (zygote.Child.supervise), its own CPU-time check for stdio
(harness._run_stdio_case), and the judge's stall watchdog (pool.Worker.run) allows the largest.
The EvalPlus builder applies EvalPlus's rule and records which rule it used; MBPP+'s
set-equality oracle keeps EvalPlus's tolerance fallback. One property per test; no shared data.
"""

import pytest

from recode_lib.data.evalplus import (
    EVALPLUS_MIN_TIME_LIMIT_S,
    EVALPLUS_TIME_FACTOR,
    build_tests,
    evalplus_time_limits,
    oracle_checker,
)
from recode_lib.data.evalplus_script import script
from recode_lib.evaluation.summary import time_rule_counts
from recode_lib.sandbox import RecordError, SandboxConfig, execute
from recode_lib.sandbox.records import parse_record, time_rule_of
from recode_lib.sandbox.verdict import _compile_checker, default_equal

CFG = SandboxConfig(time_limit_s=5.0, memory_mb=512, workers=1)

# sleeps on the inputs named in SLEEP (seconds), returns its argument
SLEEPY = """
import time
SLEEP = {sleep!r}
def f(n):
    time.sleep(SLEEP.get(n, 0))
    return n
"""


def _call(cases, **rec):
    return {"id": "tr", "tests": {"kind": "call", "fn_name": "f", "cases": cases}, **rec}


def _statuses(res):
    return [t["status"] for t in res["tests"]]


# ---- per-test limits in the sandbox (call tests) ----------------------------------------------
def test_call_tight_limit_on_the_small_test_fails_it_where_one_record_limit_passes():
    code = SLEEPY.format(sleep={0: 1.5})
    cases = [{"args": [0], "expected": 0}, {"args": [12345], "expected": 12345}]
    one_limit = execute({**_call(cases, time_limit_s=4.0), "code": code}, config=CFG)
    assert one_limit["status"] == "passed", one_limit
    tight = [dict(cases[0], time_limit_s=0.5), dict(cases[1], time_limit_s=4.0)]
    res = execute({**_call(tight, time_limit_s=4.0), "code": code}, config=CFG)
    assert _statuses(res) == ["time_limit", "passed"], res
    assert res["status"] == "time_limit"
    assert res["tests"][0]["time_s"] == pytest.approx(0.5)  # reported at its own limit


def test_call_each_deadline_is_the_next_tests_own_not_the_previous_ones():
    # execution order is ascending input length: 1 (loose), 22 (tight), 333 (loose)
    code = SLEEPY.format(sleep={1: 0.1, 22: 1.5, 333: 1.2})
    cases = [
        {"args": [333], "expected": 333, "time_limit_s": 4.0},
        {"args": [1], "expected": 1, "time_limit_s": 4.0},
        {"args": [22], "expected": 22, "time_limit_s": 0.5},
    ]
    res = execute({**_call(cases, time_limit_s=4.0), "code": code}, config=CFG)
    assert _statuses(res) == ["passed", "passed", "time_limit"], res


def test_call_own_limit_above_the_records_is_honoured():
    code = SLEEPY.format(sleep={7: 1.5})
    res = execute(
        {
            **_call([{"args": [7], "expected": 7, "time_limit_s": 5.0}], time_limit_s=0.5),
            "code": code,
        },
        config=CFG,
    )
    assert res["status"] == "passed", res


def test_watchdog_allows_the_largest_per_test_limit():
    # the judge kills a worker silent for the job's limit + stall_grace_s: a test whose own
    # limit is above the record's must not look like a wedged worker
    cfg = CFG.replace(stall_grace_s=0.5)
    code = SLEEPY.format(sleep={7: 2.0})
    res = execute(
        {
            **_call([{"args": [7], "expected": 7, "time_limit_s": 5.0}], time_limit_s=0.5),
            "code": code,
        },
        config=cfg,
    )
    assert res["status"] == "passed", res


def test_record_without_case_limits_keeps_one_limit_for_every_test():
    spec = parse_record(
        _call(
            [{"args": [1], "expected": 1}, {"args": [2], "expected": 2}], code="", time_limit_s=3.0
        ),
        CFG,
    )
    assert "time_limits" not in spec.job and spec.job["time_limit_s"] == 3.0
    code = SLEEPY.format(sleep={1: 1.0, 2: 1.0})
    cases = [{"args": [1], "expected": 1}, {"args": [2], "expected": 2}]
    assert _statuses(execute({**_call(cases, time_limit_s=0.4), "code": code}, config=CFG)) == [
        "time_limit",
        "time_limit",
    ]
    assert (
        execute({**_call(cases, time_limit_s=3.0), "code": code}, config=CFG)["status"] == "passed"
    )


def test_cases_without_their_own_limit_get_the_records():
    spec = parse_record(
        _call(
            [{"args": [1], "expected": 1, "time_limit_s": 0.25}, {"args": [2], "expected": 2}],
            code="",
            time_limit_s=3.0,
        ),
        CFG,
    )
    assert spec.job["time_limits"] == [0.25, 3.0]


# ---- per-test limits for stdio ------------------------------------------------------------------
STDIO_SLEEPY = """
import time
n = int(input())
time.sleep({sleep!r}.get(n, 0))
print(n)
"""

STDIO_BURN = """
import time
n = int(input())
t0 = time.process_time()
while time.process_time() - t0 < {burn}:
    pass
print(n)
"""


def _stdio(cases, **rec):
    return {"id": "trs", "tests": {"kind": "stdio", "cases": cases}, **rec}


def test_stdio_tight_limit_on_the_small_test_fails_it():
    code = STDIO_SLEEPY.format(sleep={0: 1.5})
    cases = [{"input": "0\n", "output": "0\n"}, {"input": "123456\n", "output": "123456\n"}]
    assert (
        execute({**_stdio(cases, time_limit_s=4.0), "code": code}, config=CFG)["status"] == "passed"
    )
    tight = [dict(cases[0], time_limit_s=0.5), cases[1]]
    res = execute({**_stdio(tight, time_limit_s=4.0), "code": code}, config=CFG)
    assert _statuses(res) == ["time_limit", "passed"], res


def test_stdio_cpu_check_uses_the_tests_own_limit():
    # 1.2 s of CPU: over the record's 0.8 s, within the test's own 8 s (wall and CPU)
    code = STDIO_BURN.format(burn=1.2)
    res = execute(
        {
            **_stdio([{"input": "5\n", "output": "5\n", "time_limit_s": 8.0}], time_limit_s=0.8),
            "code": code,
        },
        config=CFG,
    )
    assert res["status"] == "passed", res


# ---- records.py validation ------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad",
    [0, -1.0, "1", True, {}, float("inf"), float("nan"), 1e10, 10**400, [1]],
    ids=lambda v: repr(v)[:12],
)
@pytest.mark.parametrize("kind", ["call", "stdio"])
def test_bad_case_limit_is_rejected_naming_the_field(bad, kind):
    good = {"args": [1], "expected": 1} if kind == "call" else {"input": "", "output": ""}
    rec = {
        "id": "bad",
        "code": "",
        "tests": {"kind": kind, "fn_name": "f", "cases": [good, dict(good, time_limit_s=bad)]},
    }
    with pytest.raises(RecordError, match=r"tests\.cases\[1\]\.time_limit_s"):
        parse_record(rec, CFG)


def test_bad_time_rule_is_rejected_naming_the_field():
    rec = _call([{"args": [1], "expected": 1}], code="")
    rec["tests"]["time_rule"] = 3
    with pytest.raises(RecordError, match=r"tests\.time_rule"):
        parse_record(rec, CFG)


# ---- the EvalPlus builder -------------------------------------------------------------------
def test_evalplus_builder_gives_each_test_evalplus_limit():
    times = [0.0001, 0.3, 2.0]
    spec, limit = build_tests("humaneval", "t/1", "f", [[1], [2], [3]], [1, 2, 3], times, 0.0)
    want = [max(EVALPLUS_MIN_TIME_LIMIT_S, EVALPLUS_TIME_FACTOR * t) for t in times]
    got = [c["time_limit_s"] for c in spec["cases"]]
    assert got == pytest.approx(want, abs=1e-3) and all(
        g >= w for g, w in zip(got, want, strict=True)
    )
    assert (EVALPLUS_MIN_TIME_LIMIT_S, EVALPLUS_TIME_FACTOR) == (1.0, 4.0)  # EvalPlus 0.3.1
    assert got == evalplus_time_limits(times) == [1.0, 1.2, 8.0]
    assert limit == 8.0  # the record's (loading the submission): the largest
    assert spec["time_rule"] == "evalplus" == time_rule_of(spec)


def test_recode_rule_stays_a_named_option():
    spec, limit = build_tests(
        "humaneval", "t/1", "f", [[1], [2]], [1, 2], [0.0001, 0.5], 0.0, time_rule="recode"
    )
    assert all("time_limit_s" not in c for c in spec["cases"])
    assert limit == 2.0 and spec["time_rule"] == "recode"
    with pytest.raises(ValueError, match="time_rule"):
        build_tests("humaneval", "t/1", "f", [[1]], [1], [0.1], 0.0, time_rule="fast")


def test_evalplus_rule_fails_a_sleep_on_a_tiny_input_the_recode_rule_passes():
    code = SLEEPY.format(sleep={0: 1.5})
    records = {}
    for rule in ("evalplus", "recode"):
        spec, limit = build_tests(
            "humaneval", "t/1", "f", [[0], [10**6]], [0, 10**6], [0.0001, 0.5], 0.0, time_rule=rule
        )
        records[rule] = {"id": rule, "code": code, "tests": spec, "time_limit_s": limit}
    assert execute(records["recode"], config=CFG)["status"] == "passed"
    res = execute(records["evalplus"], config=CFG)
    assert _statuses(res) == ["time_limit", "passed"], res


def test_summary_says_which_time_rule():
    rows = [{"time_rule": r} for r in ("evalplus", "evalplus", "recode", "per_record")] + [{}]
    assert time_rule_counts(rows) == {"evalplus": 2, "per_record": 1, "recode": 1, "unknown": 1}
    assert time_rule_of({"kind": "stdio", "cases": []}) == "per_record"  # other benchmarks
    assert time_rule_of(build_tests("mbpp", "t/2", "f", [[1]], [1], [0.1], 0.0)[0]) == "evalplus"


# ---- tolerances as EvalPlus applies them ------------------------------------------------------
def test_mbpp_set_equality_oracle_keeps_evalplus_float_tolerance():
    check = _compile_checker(oracle_checker("mbpp", "larg_nnum"))
    assert check([], [3.0000001, 2.0], [3.0, 2.0], 0.0)  # EvalPlus: allclose fallback
    assert check([], [2.0, 3.0], [3.0, 2.0], 0.0)  # the set equality itself
    assert not check([], [2.0, 3.1], [3.0, 2.0], 0.0)


def test_complex_values_compare_with_numpy_tolerance():
    assert default_equal(1 + 1j, 1 + 1.0000001j, 1e-6)  # numpy.allclose: modulus
    assert default_equal(complex("inf"), complex("inf"), 1e-6)
    assert not default_equal(1 + 1j, 1 + 1.1j, 1e-6)
    assert not default_equal({1.0}, {1.0000001}, 1e-6)  # sets: == only, as in EvalPlus


def test_the_find_zero_oracle_sums_left_to_right_on_every_python():
    """EvalPlus's poly is a sum(); Python 3.12 made sum() of floats compensated, under which
    three HumanEval+/32 inputs have no passable double at all. The oracle sums left to right on
    every version: 1e16 + 1*x - 1e16*x^2 at x = 1 is 0.0 that way (the 1 is absorbed), 1.0
    compensated."""
    check = _compile_checker(oracle_checker("humaneval", "find_zero"))
    assert check([[1e16, 1.0, -1e16]], 1.0, None, 1e-4)
    assert not check([[1e16, 1.0, -1e16]], 1.1, None, 1e-4)
    # the script tests' copy of the oracle (recode_lib.data.evalplus_script) sums alike
    src = script("humaneval", "find_zero", [[[1e16, 1.0, -1e16]]], [1.0], 1e-4)
    exec("def find_zero(xs):\n    return 1.0\n" + src, {"__name__": "__main__"})
