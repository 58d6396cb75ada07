"""The one builder of sandbox records (recode_lib.sandbox.record_builder): the GRPO rewards'
runner sends the record evaluation builds for the same problem and program, and an extra never
replaces the fields that decide the verdict."""

from __future__ import annotations

import sys

import pytest

from recode_lib.core import bench_env
from recode_lib.data.schema import Problem
from recode_lib.rewards.base import run_problems
from recode_lib.rewards.execution import SandboxRunner
from recode_lib.sandbox import sandbox_record, submission_record

TESTS = {"kind": "script", "script": "assert task_func([1, 3]) == 2.0\n"}


def bcb_problem() -> Problem:
    return Problem(
        id="bigcodebench/BigCodeBench/7",
        source="bigcodebench",
        prompt="Return the mean of xs.",
        entry_point="task_func",
        tests=TESTS,
        time_limit_s=60.0,
        memory_mb=2048,
        metadata={"libs": ["numpy"]},
    )


class Capturing(SandboxRunner):
    """A runner that keeps the records it would send the sandbox and runs none."""

    def _execute(self, records):
        self.sent = list(records)
        return {r["id"]: {"id": r["id"], "status": "passed", "outcome": "correct"} for r in records}


def test_the_rewards_runner_sends_the_record_evaluation_builds(tmp_path, monkeypatch):
    env = tmp_path / "bcb-env"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to(sys.executable)
    (env / bench_env.MARKER).write_text("")
    monkeypatch.setenv(bench_env.ENV_VAR, str(env))
    monkeypatch.setattr(SandboxRunner, "check_tests", lambda self, tests, where: None)
    runner, p, code = Capturing(), bcb_problem(), "def task_func(xs):\n    return 2.0\n"
    run_problems(runner, [p], [code], ["x#0"])
    (sent,) = runner.sent
    assert {**sent, "id": None} == {**sandbox_record("x#0", code, p), "id": None}
    assert sent["requires"] == ["numpy"] and sent["python"] == str(env / "bin" / "python")


@pytest.mark.parametrize("field", ["id", "code", "tests", "time_limit_s", "memory_mb"])
def test_an_extra_cannot_replace_a_record_field(field):
    with pytest.raises(ValueError, match=field):
        submission_record("a", "pass", TESTS, time_limit_s=1.0, extras={field: "forged"})


def test_a_limit_of_none_is_left_to_the_sandbox_default():
    rec = submission_record("a", None, TESTS)
    assert rec == {"id": "a", "code": None, "tests": TESTS}
