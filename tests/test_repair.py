"""Failure-conditioned repair: tasks from failed samples, feedback without answers, rates."""

from __future__ import annotations

import pytest

from recode_lib.data.schema import Problem
from recode_lib.training.repair import execution_feedback, repair_rates, repair_tasks
from recode_lib.sandbox import execute, first_failure

TESTS = {"kind": "stdio", "cases": [{"input": "1", "output": "SECRET-2", "input_len": 1},
                                    {"input": "7" * 50, "output": "SECRET-8", "input_len": 50}]}


def _problem(pid="t/p"):
    return Problem(id=pid, source="t", prompt="Print the answer.", tests=TESTS, time_limit_s=2.0)


def _sample(pid="t/p", i=0, outcome="correctness_failure", status="wrong_answer", code="print(1)",
            ff=None, finish_reason="stop"):
    return {"id": f"{pid}#{i}", "problem_id": pid, "sample": i, "code": code, "status": status,
            "outcome": outcome, "passed": 1, "total": 2, "finish_reason": finish_reason,
            "first_failure": ff or {"index": 1, "status": status, "input_len": 50,
                                    "time_s": 0.1, "memory_mb": 9, "longest_passed_len": 1}}


def test_first_failure_from_a_real_sandbox_result():
    res = execute({"id": "x", "code": "s = input()\nprint('SECRET-2' if s == '1' else 0)",
                   "tests": TESTS})
    ff = first_failure(res)
    assert (ff["index"], ff["status"], ff["input_len"], ff["longest_passed_len"]) == \
        (1, "wrong_answer", 50, 1)
    ok = execute({"id": "y", "code": "s = input()\nprint('SECRET-2' if s == '1' else 'SECRET-8')",
                  "tests": TESTS})
    assert first_failure(ok) is None


def test_feedback_gives_statistics_but_never_expected_outputs():
    text = execution_feedback(_sample(), time_limit_s=2.0)
    assert "wrong answer" in text and "test 2" in text and "50 characters" in text
    assert "1 of 2" in text and "SECRET" not in text
    slow = execution_feedback(_sample(outcome="optimization_failure", status="time_limit",
                                      ff={"index": 1, "status": "time_limit", "input_len": 50,
                                          "longest_passed_len": 1}), time_limit_s=2.0)
    assert "time limit is 2 s" in slow and "faster algorithm" in slow
    none = execution_feedback(_sample(outcome="format_error", status="no_code", code=None))
    assert "no parsable Python code block" in none
    hang = execution_feedback(_sample(outcome="correctness_failure", status="time_limit",
                                      ff={"index": 0, "status": "time_limit", "input_len": 3}),
                              time_limit_s=2.0)
    assert "infinite loop" in hang and "faster algorithm" not in hang
    cut = execution_feedback(_sample(outcome="format_error", status="no_code", code=None,
                                     finish_reason="length"))
    assert "cut off at the length limit" in cut


def test_tasks_keep_tests_and_limits_and_show_the_failed_code():
    tasks, rep = repair_tasks([_problem()], [_sample(code="print('attempt')")])
    (t,) = tasks
    assert t.tests == TESTS and t.time_limit_s == 2.0 and t.id.startswith("t/p~repair~0-")
    other, _ = repair_tasks([_problem()], [_sample(code="print('another attempt')")])
    assert other[0].id != t.id                  # another failed program is another task
    assert "print('attempt')" in t.prompt and "Execution feedback:" in t.prompt
    assert t.metadata["repair_of"] == "t/p#0" and t.metadata["failure"] == "correctness_failure"
    assert rep == {"eligible:correctness_failure": 1, "taken:correctness_failure": 1, "tasks": 1}


def test_passing_samples_are_not_tasks_and_distinct_failures_come_first():
    ss = [_sample(i=0), _sample(i=1), _sample(i=2, outcome="correct", status="passed"),
          _sample(i=3, outcome="optimization_failure", status="time_limit")]
    tasks, rep = repair_tasks([_problem(), _problem("t/q")], ss, max_per_problem=2, seed=3)
    assert sorted(t.metadata["failure"] for t in tasks) == ["correctness_failure",
                                                            "optimization_failure"]
    assert rep["not_eligible:correct"] == 1 and rep["problems_without_failure"] == 1


def test_a_sample_of_an_unknown_problem_raises_naming_it():
    with pytest.raises(ValueError, match="t/zzz"):
        repair_tasks([_problem()], [_sample(pid="t/zzz")])


def test_repair_rates_per_failure_class_and_a_missing_task_raises():
    ss = [_sample(i=0), _sample(i=1, outcome="optimization_failure", status="time_limit")]
    tasks, _ = repair_tasks([_problem()], ss)
    rows = [{"problem_id": tasks[0].id, "outcome": "correct"},
            {"problem_id": tasks[1].id, "outcome": "correctness_failure"}]
    rates = repair_rates(tasks, rows, n_boot=50)
    assert rates["all"]["repair_rate"] == 0.5 and rates["all"]["n"] == 2
    fixed = tasks[0].metadata["failure"]
    assert rates[fixed]["repair_rate"] == 1.0
    with pytest.raises(ValueError, match="no evaluated sample"):
        repair_rates(tasks, rows[:1])
