"""The trust tier of sandbox verdicts: every result says whether its tests ran isolated
from the submission or inside its process, summaries count the levels, and GRPO rewards refuse
in-process (forgeable) tests unless the recipe opts in. One property per test, real sandbox."""

from __future__ import annotations

import pytest

from recode_lib import sandbox
from recode_lib.cli import main
from recode_lib.core.jsonl import read_jsonl, write_jsonl_atomic
from recode_lib.core.prompts import format_response
from recode_lib.data.schema import Problem
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.evaluation.summary import summarize
from recode_lib.generation import Completion, Generator
from recode_lib.rewards import get_reward
from recode_lib.rewards.execution import InProcessTestsError, SandboxRunner
from recode_lib.sandbox.config import SandboxConfig
from recode_lib.sandbox.records import parse_record, runs_in_process
from recode_lib.sandbox.result import IN_PROCESS, ISOLATED, TRUST_LEVELS
from recode_lib.training.grpo import build_rewards, load_recipe, recipe_dict, train

DOUBLE = "def task_func(x):\n    return 2 * x\n"
WRONG = "def task_func(x):\n    return x + 1\n"
UNITTEST = """
import unittest
class TestCases(unittest.TestCase):
    def test_double(self):
        self.assertEqual(task_func(2), 4)
    def test_zero(self):
        self.assertEqual(task_func(0), 0)

import unittest as _unittest
_suite = _unittest.TestLoader().loadTestsFromTestCase(TestCases)
_result = _unittest.TextTestRunner(verbosity=0).run(_suite)
if not _result.wasSuccessful():
    raise SystemExit(1)
"""
INLINE = {"kind": "script", "script": UNITTEST, "entry_point": "task_func"}
SEPARATE = {
    "kind": "script",
    "script": "assert task_func(2) == 4\nassert task_func(0) == 0\n",
    "entry_point": "task_func",
}
CALL = {"kind": "call", "fn_name": "task_func", "cases": [{"args": [2], "expected": 4}]}
STDIO = {"kind": "stdio", "cases": [{"input": "2\n", "output": "4\n"}]}
STDIO_CODE = "print(2 * int(input()))\n"


@pytest.mark.parametrize(
    "tests, code, level",
    [
        (STDIO, STDIO_CODE, ISOLATED),
        (CALL, DOUBLE, ISOLATED),
        (SEPARATE, DOUBLE, ISOLATED),
        (INLINE, DOUBLE, IN_PROCESS),
    ],
    ids=["stdio", "call", "separate_script", "inline_unittest"],
)
def test_every_result_carries_the_trust_level_of_its_tests(tests, code, level):
    res = sandbox.execute({"id": "a", "code": code, "tests": tests})
    assert res["status"] == "passed" and res["trust"] == level


def test_a_no_code_result_carries_the_level_of_its_tests():
    res = sandbox.execute({"id": "a", "code": "", "tests": INLINE})
    assert (res["status"], res["trust"]) == ("no_code", IN_PROCESS)


@pytest.mark.parametrize(
    "tests",
    [
        INLINE,
        SEPARATE,
        CALL,
        STDIO,
        {**INLINE, "separate": True},
        {**SEPARATE, "separate": False},
        {"kind": "script", "script": "from unittest import mock\n"},
    ],
)
def test_the_reward_rule_is_the_sandbox_rule(tests):
    spec = parse_record({"id": "a", "code": "x = 1", "tests": tests}, SandboxConfig())
    in_process = spec.kind == "script" and not spec.job["separate"]
    assert runs_in_process(tests) is in_process


def test_recode_sandbox_output_records_carry_trust(tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_jsonl_atomic(
        src,
        [
            {"id": "call", "code": DOUBLE, "tests": CALL},
            {"id": "bcb", "code": DOUBLE, "tests": INLINE},
        ],
    )
    assert main(["sandbox", str(src), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    assert {r["id"]: r["trust"] for r in read_jsonl(out)} == {"call": ISOLATED, "bcb": IN_PROCESS}


class Fixed(Generator):
    """Returns RESPONSES[problem id] for every sample."""

    backend = model = "fixed"

    def __init__(self, problems, responses):
        self.problems, self.responses = problems, responses

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        out = []
        for j, r in enumerate(requests):
            pid = next(p.id for p in self.problems if p.prompt in r.messages[-1]["content"])
            out.append(Completion(self.responses[pid], n_tokens=5, finish_reason="stop"))
            if callback:
                callback(j, out[-1])
        return out


def test_evaluation_summary_counts_verdicts_per_trust_level(tmp_path):
    probs = [
        Problem(
            id="t/call", source="t", prompt="Double x (call).", entry_point="task_func", tests=CALL
        ),
        Problem(
            id="t/bcb",
            source="t",
            prompt="Double x (unittest).",
            entry_point="task_func",
            tests=INLINE,
        ),
        Problem(
            id="t/bcb_none",
            source="t",
            prompt="Double x (no answer).",
            entry_point="task_func",
            tests=INLINE,
        ),
    ]
    responses = {
        "t/call": format_response("Double.", DOUBLE),
        "t/bcb": format_response("Double.", DOUBLE),
        "t/bcb_none": "No code here.",
    }
    spec = EvalSpec(n=1, workers=1, progress=False)
    s = spec.evaluate("fixed", probs, tmp_path / "ev", generator=Fixed(probs, responses))
    assert s["trust"] == {ISOLATED: 1, IN_PROCESS: 2}
    rows = {r["problem_id"]: r["trust"] for r in read_jsonl(tmp_path / "ev" / "samples.jsonl")}
    assert rows == {"t/call": ISOLATED, "t/bcb": IN_PROCESS, "t/bcb_none": IN_PROCESS}


def test_summary_counts_rows_from_before_the_field_as_unknown():
    row = {
        "problem_id": "p",
        "status": "passed",
        "outcome": "correct",
        "passed": 1,
        "total": 1,
        "n_tokens": 3,
        "code": "x",
        "format_ok": True,
    }
    s = summarize([row, {**row, "trust": IN_PROCESS}])
    assert s["trust"] == {ISOLATED: 0, IN_PROCESS: 1, "unknown": 1}
    assert tuple(summarize([{**row, "trust": ISOLATED}])["trust"]) == TRUST_LEVELS


def _batch(tests, pid="BigCodeBench/7"):
    return (
        ["p", "p"],
        [format_response("Double.", DOUBLE), format_response("Off.", WRONG)],
        {
            "problem": [
                Problem(id=pid, source="t", prompt="Double.", tests=tests, entry_point="task_func")
            ]
            * 2
        },
    )


def test_reward_refuses_in_process_tests_without_opt_in_before_running_anything():
    runner = SandboxRunner(workers=1)
    prompts, comps, cols = _batch(INLINE)
    with pytest.raises(InProcessTestsError, match=r"BigCodeBench/7.*forge.*allow_in_process_tests"):
        get_reward("outcome", runner=runner)(prompts, comps, **cols)
    assert runner.stats.executed == 0


def test_reward_runs_in_process_tests_with_the_opt_in():
    runner = SandboxRunner(workers=1, allow_in_process_tests=True)
    prompts, comps, cols = _batch(INLINE)
    assert get_reward("outcome", runner=runner)(prompts, comps, **cols) == [1.0, 0.0]


def test_the_recipe_opt_in_reaches_the_reward():
    prompts, comps, cols = _batch(INLINE)
    (refusing,), _ = build_rewards(load_recipe("cg_grpo_smoke", rewards=[{"name": "outcome"}]))
    with pytest.raises(InProcessTestsError, match="BigCodeBench/7"):
        refusing(prompts, comps, **cols)
    (allowed,), _ = build_rewards(
        load_recipe("cg_grpo_smoke", rewards=[{"name": "outcome"}], allow_in_process_tests=True)
    )
    assert allowed(prompts, comps, **cols) == [1.0, 0.0]


def test_the_opt_in_left_unset_keeps_the_fingerprint_of_older_runs():
    assert "allow_in_process_tests" not in recipe_dict(load_recipe("cg_grpo_smoke"))
    assert (
        recipe_dict(load_recipe("cg_grpo_smoke", allow_in_process_tests=True))[
            "allow_in_process_tests"
        ]
        is True
    )


def test_train_refuses_in_process_problems_before_loading_the_model(tmp_path):
    probs = [
        Problem(
            id=f"bcb/{i}",
            source="t",
            prompt="Double x.",
            entry_point="task_func",
            tests=INLINE if i == 3 else CALL,
        )
        for i in range(8)
    ]
    recipe = load_recipe("cg_grpo_smoke", model=str(tmp_path / "no-such-model"))
    with pytest.raises(InProcessTestsError, match="problem 'bcb/3'"):
        train(recipe, probs, tmp_path / "run")
