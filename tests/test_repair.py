"""Failure-conditioned repair: tasks from failed samples, feedback without answers, rates."""

from __future__ import annotations

import pytest

from recode_lib.data.schema import Problem
from recode_lib.sandbox import execute, first_failure
from recode_lib.training.repair import execution_feedback, repair_rates, repair_tasks

TESTS = {
    "kind": "stdio",
    "cases": [
        {"input": "1", "output": "SECRET-2", "input_len": 1},
        {"input": "7" * 50, "output": "SECRET-8", "input_len": 50},
    ],
}


def _problem(pid="t/p"):
    return Problem(id=pid, source="t", prompt="Print the answer.", tests=TESTS, time_limit_s=2.0)


def _sample(
    pid="t/p",
    i=0,
    outcome="correctness_failure",
    status="wrong_answer",
    code="print(1)",
    ff=None,
    finish_reason="stop",
):
    return {
        "id": f"{pid}#{i}",
        "problem_id": pid,
        "sample": i,
        "code": code,
        "status": status,
        "outcome": outcome,
        "passed": 1,
        "total": 2,
        "finish_reason": finish_reason,
        "first_failure": ff
        or {
            "index": 1,
            "status": status,
            "input_len": 50,
            "time_s": 0.1,
            "memory_mb": 9,
            "longest_passed_len": 1,
        },
    }


def test_first_failure_from_a_real_sandbox_result():
    res = execute(
        {"id": "x", "code": "s = input()\nprint('SECRET-2' if s == '1' else 0)", "tests": TESTS}
    )
    ff = first_failure(res)
    assert (ff["index"], ff["status"], ff["input_len"], ff["longest_passed_len"]) == (
        1,
        "wrong_answer",
        50,
        1,
    )
    ok = execute(
        {
            "id": "y",
            "code": "s = input()\nprint('SECRET-2' if s == '1' else 'SECRET-8')",
            "tests": TESTS,
        }
    )
    assert first_failure(ok) is None


def test_feedback_gives_statistics_but_never_expected_outputs():
    text = execution_feedback(_sample(), time_limit_s=2.0)
    assert "wrong answer" in text and "test 2" in text and "50 characters" in text
    assert "1 of 2" in text and "SECRET" not in text
    slow = execution_feedback(
        _sample(
            outcome="optimization_failure",
            status="time_limit",
            ff={"index": 1, "status": "time_limit", "input_len": 50, "longest_passed_len": 1},
        ),
        time_limit_s=2.0,
    )
    assert "time limit is 2 s" in slow and "faster algorithm" in slow
    none = execution_feedback(_sample(outcome="format_error", status="no_code", code=None))
    assert "no parsable Python code block" in none
    hang = execution_feedback(
        _sample(
            outcome="correctness_failure",
            status="time_limit",
            ff={"index": 0, "status": "time_limit", "input_len": 3},
        ),
        time_limit_s=2.0,
    )
    assert "infinite loop" in hang and "faster algorithm" not in hang
    cut = execution_feedback(
        _sample(outcome="format_error", status="no_code", code=None, finish_reason="length")
    )
    assert "cut off at the length limit" in cut


def test_tasks_keep_tests_and_limits_and_show_the_failed_code():
    tasks, rep = repair_tasks([_problem()], [_sample(code="print('attempt')")])
    (t,) = tasks
    assert t.tests == TESTS and t.time_limit_s == 2.0 and t.id.startswith("t/p~repair~0-")
    other, _ = repair_tasks([_problem()], [_sample(code="print('another attempt')")])
    assert other[0].id != t.id  # another failed program is another task
    assert "print('attempt')" in t.prompt and "Execution feedback:" in t.prompt
    assert t.metadata["repair_of"] == "t/p#0" and t.metadata["failure"] == "correctness_failure"
    assert rep == {"eligible:correctness_failure": 1, "taken:correctness_failure": 1, "tasks": 1}


def test_passing_samples_are_not_tasks_and_distinct_failures_come_first():
    ss = [
        _sample(i=0),
        _sample(i=1),
        _sample(i=2, outcome="correct", status="passed"),
        _sample(i=3, outcome="optimization_failure", status="time_limit"),
    ]
    tasks, rep = repair_tasks([_problem(), _problem("t/q")], ss, max_per_problem=2, seed=3)
    assert sorted(t.metadata["failure"] for t in tasks) == [
        "correctness_failure",
        "optimization_failure",
    ]
    assert rep["not_eligible:correct"] == 1 and rep["problems_without_failure"] == 1


def test_a_sample_of_an_unknown_problem_raises_naming_it():
    with pytest.raises(ValueError, match="t/zzz"):
        repair_tasks([_problem()], [_sample(pid="t/zzz")])


def test_repair_rates_per_failure_class_and_a_missing_task_raises():
    ss = [_sample(i=0), _sample(i=1, outcome="optimization_failure", status="time_limit")]
    tasks, _ = repair_tasks([_problem()], ss)
    rows = [
        {"problem_id": tasks[0].id, "outcome": "correct"},
        {"problem_id": tasks[1].id, "outcome": "correctness_failure"},
    ]
    rates = repair_rates(tasks, rows, n_boot=50)
    assert rates["all"]["repair_rate"] == 0.5 and rates["all"]["n"] == 2
    fixed = tasks[0].metadata["failure"]
    assert rates[fixed]["repair_rate"] == 1.0
    with pytest.raises(ValueError, match="no evaluated sample"):
        repair_rates(tasks, rows[:1])


def test_repair_ci_is_a_cluster_bootstrap_over_original_problems():
    """Four problems, eight repair samples each, perfectly correlated within a problem (two
    always repaired, two never): the samples are four draws, not 32."""
    from recode_lib.metrics import bootstrap_ci

    probs = [_problem(f"t/p{i}") for i in range(4)]
    tasks, _ = repair_tasks(probs, [_sample(pid=p.id) for p in probs])
    rows = [
        {"problem_id": t.id, "outcome": "correct" if i < 2 else "wrong_answer"}
        for i, t in enumerate(tasks)
        for _ in range(8)
    ]
    flat = bootstrap_ci([int(r["outcome"] == "correct") for r in rows], n_boot=2000, seed=0)
    got = repair_rates(tasks, rows, n_boot=2000, seed=0)["all"]
    assert got["repair_rate"] == flat[0] == 0.5  # the point estimate is unchanged
    assert flat[1:] == pytest.approx((0.34375, 0.6875))  # resampling the 32 samples (before)
    assert (got["ci_low"], got["ci_high"]) == (0.0, 1.0)  # resampling the 4 problems (now)
    assert (got["n"], got["n_tasks"], got["n_problems"]) == (32, 4, 4)


def test_tasks_of_one_problem_are_resampled_together():
    ss = [_sample(i=0), _sample(i=1, outcome="optimization_failure", status="time_limit")]
    tasks, _ = repair_tasks([_problem()], ss, max_per_problem=2)
    rows = [
        {"problem_id": tasks[0].id, "outcome": "correct"},
        {"problem_id": tasks[1].id, "outcome": "correctness_failure"},
    ]
    got = repair_rates(tasks, rows, n_boot=200)["all"]
    # one original problem: every resample is that problem, so the interval is the point
    assert got["repair_rate"] == got["ci_low"] == got["ci_high"] == 0.5
    assert (got["n_tasks"], got["n_problems"]) == (2, 1)


def test_repair_prompt_shows_the_measured_time_against_the_limit():
    """The sandbox's measured times (the failing test's and the run's total) stand beside
    the limit; before, the prompt named only the limit."""
    from recode_lib.training.repair import repair_prompt

    slow = "s = input()\nif len(s) > 10:\n    while True:\n        pass\nprint('SECRET-2')"
    res = execute({"id": "x", "code": slow, "tests": TESTS, "time_limit_s": 1.0})
    assert res["status"] == "time_limit"
    sample = {
        "id": "t/p#0",
        "problem_id": "t/p",
        "sample": 0,
        "code": slow,
        **{f: res[f] for f in ("status", "outcome", "passed", "total", "time_s")},
        "first_failure": first_failure(res),
    }
    problem = Problem(
        id="t/p", source="t", prompt="Print the answer.", tests=TESTS, time_limit_s=1.0
    )
    prompt = repair_prompt(problem, sample)
    ff_time = sample["first_failure"]["time_s"]
    assert ff_time == pytest.approx(1.0, abs=0.05) and res["time_s"] > ff_time
    assert (
        f"The time limit is 1 s per test; test 2 ran {ff_time:.3g} s (stopped at the "
        f"limit) and the tests run took {res['time_s']:.3g} s in all."
    ) in prompt
    assert "faster algorithm" in prompt and "SECRET-8" not in prompt  # no expected output
    wrong = execution_feedback(
        _sample(
            ff={
                "index": 1,
                "status": "wrong_answer",
                "input_len": 50,
                "time_s": 0.0123,
                "longest_passed_len": 1,
            }
        ),
        2.0,
    )
    assert "The time limit is 2 s per test; test 2 ran 0.0123 s." in wrong
    assert "Measured time: test 2 ran 0.0123 s." in execution_feedback(
        _sample(ff={"index": 1, "status": "wrong_answer", "input_len": 50, "time_s": 0.0123})
    )


class _ScriptedSpec:
    """An EvalSpec stand-in: `start` fails every held-out problem and repairs nothing;
    `trained` fails only t/b (with another program) and repairs exactly the tasks of t/a."""

    def __init__(self):
        self.calls = []

    def evaluate_with_samples(self, model, problems, out_dir):
        self.calls.append((model, out_dir.name))
        rows = []
        for p in problems:
            pid = p.id
            if "~repair~" in pid:
                ok = model == "trained" and pid.startswith("t/a~")
                code = "print(2)"
            else:
                ok = model == "trained" and pid == "t/a"
                code = f"print('{model}')"
            rows.append(
                {
                    **_sample(pid=pid, code=code),
                    "outcome": "correct" if ok else "correctness_failure",
                    "status": "passed" if ok else "wrong_answer",
                }
            )
        n_ok = sum(r["outcome"] == "correct" for r in rows)
        return (
            {
                "pass@1": n_ok / len(rows),
                "pass@1_ci": [0.0, 1.0],
                "outcomes": {"correct": n_ok / len(rows)},
            },
            rows,
        )


def test_each_model_is_scored_on_its_own_failures_beside_the_start_models(tmp_path):
    from recode_lib.training.repair_rounds import compare_repair, repair_table

    probs = [_problem("t/a"), _problem("t/b")]
    spec = _ScriptedSpec()
    _, start_attempts = spec.evaluate_with_samples("start", probs, tmp_path / "original")
    eval_tasks, _ = repair_tasks(probs, start_attempts, max_per_problem=1, seed=0)
    spec.calls.clear()
    rows = compare_repair(
        {"start": "start", "trained": "trained"},
        probs,
        eval_tasks,
        spec,
        tmp_path,
        max_per_problem=1,
        n_boot=50,
        seed=0,
    )
    start, trained = rows
    assert trained["repair"]["all"]["repair_rate"] == 0.5  # on the start model's t/a and t/b
    assert trained["repair_own"]["all"]["repair_rate"] == 0.0  # its own failure: t/b only
    assert trained["repair_own"]["all"]["n_tasks"] == 1 and trained["own_tasks"]["tasks"] == 1
    assert start["repair_own"] == start["repair"]  # the same tasks, evaluated once
    assert ("start", "repair_own") not in spec.calls and ("trained", "repair_own") in spec.calls
    table = {r["model"]: r for r in repair_table(rows)}
    assert table["trained"]["repair (start's failures)"] == 0.5
    assert table["trained"]["repair (own failures)"] == 0.0
    assert table["trained"]["n (own failures)"] == 1 and table["start"]["n (own failures)"] == 2
    assert table["trained"]["repair correctness_failure (own failures)"] == 0.0


def test_the_second_protocol_refuses_an_empty_problem_set_and_an_unknown_start():
    """09's paper-B comparison: no held-out problem of the difficulty is an error naming it,
    not an empty table beside the first protocol's."""
    from recode_lib.training.repair_rounds import compare_repair_protocol

    with pytest.raises(ValueError, match="difficulty"):
        compare_repair_protocol({"start": "m"}, [], spec=None, out_dir="/nonexistent")
    with pytest.raises(KeyError, match="no start model"):
        compare_repair_protocol({"trained": "m"}, ["p"], spec=None, out_dir="/nonexistent")


def test_the_paper_profile_evaluates_repair_under_paper_bs_protocol_too():
    """The paper profile's 09 runs the comparison twice: its own protocol and paper B's (the
    anchors 06, 07 and 11 use: T 1.0, 8,192 tokens, hard problems), and the plan counts both."""
    from recode_lib.plan.stages import notebook_stages
    from recode_lib.runner.pipeline import profile_parameters

    pp = profile_parameters("paper")
    p9, p6 = pp["09_repair"], pp["06_strictness_sweep"]
    assert p9["PAPER_B_EVAL"] is True
    assert (
        (p9["PAPER_B_TEMPERATURE"], p9["PAPER_B_MAX_NEW_TOKENS"], p9["PAPER_B_DIFFICULTY"])
        == (p6["EVAL_TEMPERATURE"], p6["EVAL_MAX_NEW_TOKENS"], p6["EVAL_DIFFICULTY"])
        == (1.0, 8192, "hard")
    )
    assert (p9["EVAL_TEMPERATURE"], p9["EVAL_MAX_NEW_TOKENS"]) != (
        1.0,
        8192,
    )  # the first protocol differs
    stages = {st.name: st for st in notebook_stages("09_repair", p9, pp)}
    b = stages["comparison under paper B's protocol (original + repair)"]
    assert b.engine.seq_len >= 8192 and b.work.gen_out_tokens > 0
