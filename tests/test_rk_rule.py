"""The R_k rule for a problem with no test below 10^k, visible (issue 41): both readings, the
choice recorded, and how many problems it decides per k (notebook 06's print and metrics)."""

import pytest

from recode_lib.data.schema import Problem
from recode_lib.orchestration.sweep import StrictnessSweep, rk_rule_lines, rk_rule_report
from recode_lib.rewards.strict import levels, strict_reward, sweep_rewards
from recode_lib.sandbox import SandboxConfig, execute
from recode_lib.sandbox.rk import rule_counts, rule_touches, strictness


def result(statuses_by_len, status="wrong_answer"):
    return {
        "id": "r",
        "status": status,
        "tests": [{"status": s, "input_len": n} for n, s in statuses_by_len],
    }


# every test is at least 10 long: R_1 has no test of its own; the smallest one fails
NO_SMALL = result([(12, "wrong_answer"), (500, "passed")])


def test_the_default_reading_judges_r1_on_the_smallest_tests():
    assert strictness(NO_SMALL, (1, 2, "inf")) == {"1": 0, "2": 0, "inf": 0}


def test_the_literal_reading_makes_r1_vacuously_true():
    assert strictness(NO_SMALL, (1, 2, "inf"), rule="literal") == {"1": 1, "2": 0, "inf": 0}


def test_a_program_that_does_not_run_scores_zero_under_either_reading():
    dead = result([(12, "no_code"), (500, "no_code")], status="no_code")
    assert strictness(dead, (1,), rule="literal") == {"1": 0}


def test_an_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="literal"):
        strictness(NO_SMALL, (1,), rule="vacuous")


def test_rule_touches_only_problems_without_a_test_below_10_to_the_k():
    assert rule_touches([12, 500], 1) and not rule_touches([9, 500], 1)
    assert not rule_touches([12, 500], 2) and not rule_touches([], 1)
    assert not rule_touches([12], "inf")


def stdio(*inputs):
    return {"kind": "stdio", "cases": [{"input": i, "output": ""} for i in inputs]}


def test_rule_counts_per_k():
    tests = [
        stdio("1\n"),
        stdio("x" * 15, "y" * 150),
        {"kind": "script", "script": "pass"},
        {
            "kind": "call",
            "fn_name": "f",
            "cases": [{"args": [1], "expected": 1, "input_len": 2000}],
        },
    ]
    assert rule_counts(tests, [1, 2, 3, "inf"]) == {
        "1": {"problems": 4, "touched": 2, "share": 0.5},
        "2": {"problems": 4, "touched": 1, "share": 0.25},
        "3": {"problems": 4, "touched": 1, "share": 0.25},
    }


def test_the_strict_rewards_take_the_rule_and_the_sweep_records_it_in_each_runs_recipe():
    assert levels(NO_SMALL, [1], "literal")["1"] == 1 and levels(NO_SMALL, [1])["1"] == 0
    assert sweep_rewards([1, "inf"], ["discrete"], rule="literal") == {
        "k1": {"name": "strict_1", "rule": "literal"},
        "kinf": {"name": "strict_inf"},
        "partial_discrete": {"name": "partial_discrete", "ks": [1], "rule": "literal"},
    }
    assert sweep_rewards([1]) == {"k1": {"name": "strict_1"}, "kinf": {"name": "strict_inf"}}
    with pytest.raises(ValueError, match="R_k rule"):
        strict_reward(k=1, rule="vacuous")


def test_results_and_rows_record_the_rule():
    from recode_lib.evaluation.rows import result_fields

    res = execute(
        {"id": "a", "code": "print(input())", "tests": stdio("5\n")},
        config=SandboxConfig(workers=1),
    )
    assert res["strictness_rule"] == "smallest"
    assert result_fields(res)["strictness_rule"] == "smallest"


def problem(pid, tests):
    return Problem(id=pid, source="t", prompt="p", tests=tests)


def test_the_sweeps_report_is_printed_and_kept_in_its_metrics(tmp_path):
    train = [problem("a", stdio("x" * 15)), problem("b", stdio("1"))]
    report = rk_rule_report("smallest", [1, 2, "inf"], train, [problem("c", stdio("y" * 20))])
    assert report == {
        "rule": "smallest",
        "train": {
            "1": {"problems": 2, "touched": 1, "share": 0.5},
            "2": {"problems": 2, "touched": 0, "share": 0.0},
        },
        "eval": {
            "1": {"problems": 1, "touched": 1, "share": 1.0},
            "2": {"problems": 1, "touched": 0, "share": 0.0},
        },
    }
    assert rk_rule_lines(report)[1] == "  k=1: training 1/2 (50.0%), evaluation 1/1 (100.0%)"
    sweep = StrictnessSweep(tmp_path, None, {}, {}, None, {}, {}, {}, {"rows": []}, 1, 1, report)
    assert sweep.metrics["rk_rule"] == report
