"""BigCodeBench's own interpreter (recode_lib.core.bench_env), with a tiny fake env: the record
builder
carries it, the sandbox runs the record with it (its module set decides env_missing), an answer
importing scipy is then judged on its merits, and evaluating BigCodeBench without it refuses
outside the smoke profile."""

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from recode_lib.core import bench_env
from recode_lib.data.bigcodebench import RUNNER
from recode_lib.data.schema import Problem
from recode_lib.rewards.execution import SandboxRunner
from recode_lib.sandbox import SandboxConfig, execute_many, sandbox_record
from recode_lib.sandbox.records import RecordError, parse_record

FAKE = "recode_fake_bcb_lib"  # a module only the fake env has (whatever the project's has)
SCRIPT = (
    f"""
import unittest
import scipy
import {FAKE}

class TestCases(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(task_func([1, 2, 3]), 2)
        self.assertEqual(scipy.__file__.split("/")[-2], "scipy")
"""
    + RUNNER
)
RIGHT = "from scipy import stats\n\ndef task_func(xs):\n    return stats.mean(xs)\n"
WRONG = "from scipy import stats\n\ndef task_func(xs):\n    return stats.mean(xs) + 1\n"
CFG = SandboxConfig(workers=1)


class Recording(SandboxRunner):
    """A real runner that also keeps the extras each record was given."""

    def run(self, codes, tests, *, extras=None, **kw):
        self.extras = list(extras or [])
        return super().run(codes, tests, extras=extras, **kw)


@pytest.fixture(scope="module")
def fake_env(tmp_path_factory):
    """A venv (no pip) whose site-packages holds a tiny `scipy` (stats.mean) and FAKE."""
    root = tmp_path_factory.mktemp("bcb") / "env"
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", "--without-pip", str(root)], check=True)
    py = root / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (site / "scipy").mkdir()
    (site / "scipy" / "__init__.py").write_text("")
    (site / "scipy" / "stats.py").write_text("def mean(xs):\n    return sum(xs) / len(xs)\n")
    (site / f"{FAKE}.py").write_text("")
    (root / bench_env.MARKER).write_text("scipy==0.0 (fake)\n")
    return root


def problem():
    return Problem.from_dict(
        dict(
            id="bigcodebench/x",
            source="bigcodebench",
            prompt="p",
            entry_point="task_func",
            tests={"kind": "script", "script": SCRIPT},
            time_limit_s=60.0,
            memory_mb=1024,
            metadata={"libs": ["scipy"], "requires": ["scipy", FAKE]},
        )
    )


def test_the_record_builder_carries_the_built_env_interpreter(fake_env, monkeypatch):
    monkeypatch.setenv(bench_env.ENV_VAR, str(fake_env))
    rec = sandbox_record("bigcodebench/x#0", RIGHT, problem())
    assert rec["python"] == str(fake_env.absolute() / "bin" / "python")
    other = Problem.from_dict(
        dict(id="humaneval/0", source="humaneval", prompt="p", tests=problem().tests)
    )
    assert "python" not in sandbox_record("humaneval/0#0", RIGHT, other)


def test_an_env_without_its_marker_is_not_built(fake_env, tmp_path, monkeypatch):
    half = tmp_path / "half"
    (half / "bin").mkdir(parents=True)
    (half / "bin" / "python").symlink_to(fake_env / "bin" / "python")
    monkeypatch.setenv(bench_env.ENV_VAR, str(half))
    assert bench_env.bcb_python() is None
    assert "python" not in sandbox_record("bigcodebench/x#0", RIGHT, problem())


def test_an_answer_importing_scipy_is_judged_on_its_merits_in_the_env(fake_env, monkeypatch):
    monkeypatch.setenv(bench_env.ENV_VAR, str(fake_env))
    right, wrong = execute_many(
        [sandbox_record("r", RIGHT, problem()), sandbox_record("w", WRONG, problem())], config=CFG
    )
    assert (right["status"], right["outcome"]) == ("passed", "correct"), right.get("reason")
    assert wrong["outcome"] not in ("correct", "not_counted")
    assert "AssertionError" in wrong["reason"] and "3.0 != 2" in wrong["reason"]


def test_without_the_env_the_same_problem_is_env_missing(tmp_path, monkeypatch):
    monkeypatch.setenv(bench_env.ENV_VAR, str(tmp_path / "none"))
    res = execute_many([sandbox_record("r", RIGHT, problem())], config=CFG)[0]
    assert (res["status"], res["outcome"]) == ("env_missing", "not_counted")
    assert FAKE in res["reason"]


def test_records_with_and_without_an_interpreter_run_together_in_order(fake_env, monkeypatch):
    monkeypatch.setenv(bench_env.ENV_VAR, str(fake_env))
    plain = {
        "id": "plain",
        "code": "import sys\nprint(sys.prefix)\n",
        "tests": {"kind": "stdio", "cases": [{"input": "", "output": sys.prefix + "\n"}]},
    }
    env = dict(
        plain,
        id="env",
        python=str(fake_env / "bin" / "python"),
        tests={"kind": "stdio", "cases": [{"input": "", "output": str(fake_env) + "\n"}]},
    )
    out = execute_many([plain, env, plain | {"id": "plain2"}], config=SandboxConfig(workers=2))
    assert [r["id"] for r in out] == ["plain", "env", "plain2"]
    assert [r["status"] for r in out] == ["passed"] * 3, [r.get("reason") for r in out]


@pytest.mark.parametrize(
    "python", ["python3", "/no/such/python", "", 3, sysconfig.get_paths()["purelib"]]
)
def test_a_record_interpreter_must_be_an_absolute_executable_file(python):
    rec = {
        "id": "a",
        "code": "",
        "python": python,
        "tests": {"kind": "stdio", "cases": [{"input": "", "output": ""}]},
    }
    with pytest.raises(RecordError, match="field 'python'"):
        parse_record(rec, CFG, where="in.jsonl:1")


def test_evaluating_bigcodebench_without_the_env_refuses_outside_smoke(tmp_path, monkeypatch):
    monkeypatch.setenv(bench_env.ENV_VAR, str(tmp_path / "none"))
    with pytest.raises(bench_env.BenchEnvMissing, match="make bcb-env") as exc:
        bench_env.require_env([problem()])
    assert "\n" not in str(exc.value)
    bench_env.require_env([problem()], smoke=True)  # smoke: env_missing instead
    other = Problem.from_dict(
        dict(id="humaneval/0", source="humaneval", prompt="p", tests=problem().tests)
    )
    bench_env.require_env([other])  # no BigCodeBench problem


def test_run_evaluation_refuses_before_generating(tmp_path, monkeypatch):
    from recode_lib.evaluation.loop import run_evaluation
    from recode_lib.evaluation.spec import EvalSpec

    monkeypatch.setenv(bench_env.ENV_VAR, str(tmp_path / "none"))
    with pytest.raises(bench_env.BenchEnvMissing, match="make bcb-env"):
        run_evaluation(
            EvalSpec(), "no-such-model", [problem()], tmp_path / "out", benchmark="bigcodebench"
        )
    assert not (tmp_path / "out").exists()


def test_the_plan_lists_the_env_for_notebooks_evaluating_bigcodebench():
    params = {
        "05_codegen_eval": {"BENCHMARKS": "humaneval,bigcodebench"},
        "00_data": {"HELD_OUT_BENCHMARKS": "bigcodebench"},
        "04_cg_grpo": {"BENCHMARK": "mbpp"},
    }
    assert bench_env.bcb_notebooks(params) == ["05_codegen_eval"]
    assert "make bcb-env" in bench_env.status_line() or "built at" in bench_env.status_line()


def test_a_runs_provenance_names_the_env_that_judged(fake_env, tmp_path, monkeypatch):
    monkeypatch.setenv(bench_env.ENV_VAR, str(fake_env))
    env = bench_env.judge_env([problem()])["bigcodebench"]
    assert env["python"] == bench_env.bcb_python() and env["packages"] == 1
    assert len(env["freeze_sha256"]) == 64
    monkeypatch.setenv(bench_env.ENV_VAR, str(tmp_path / "none"))
    assert bench_env.judge_env([problem()]) == {"bigcodebench": None}
    assert bench_env.judge_env([]) == {}


def test_an_evaluation_folder_judged_without_the_env_is_not_resumed_with_it(
    fake_env, tmp_path, monkeypatch
):
    from recode_lib.evaluation.guard import guard_run

    monkeypatch.setenv(bench_env.ENV_VAR, str(tmp_path / "none"))
    assert bench_env.judge_env_guard([problem()]) == {"judge_env": {"bigcodebench": None}}
    guard_run(tmp_path / "out", {"model": "m", **bench_env.judge_env_guard([problem()])})
    monkeypatch.setenv(bench_env.ENV_VAR, str(fake_env))
    with pytest.raises(ValueError, match="judge_env"):
        guard_run(tmp_path / "out", {"model": "m", **bench_env.judge_env_guard([problem()])})
    assert bench_env.judge_env_guard([]) == {}


def test_the_grpo_rewards_judge_a_bcb_problem_in_its_env_as_evaluation_does(fake_env, monkeypatch):
    """The training row carries the problem itself, so the code reward gives its record the
    extras evaluation's record has (bench_env.record_extras) and runs the answer with
    BigCodeBench's interpreter: right 1, wrong 0 — as evaluation."""
    from recode_lib.rewards.code import outcome_reward
    from recode_lib.training.grpo import code_row

    monkeypatch.setenv(bench_env.ENV_VAR, str(fake_env))
    row = code_row(problem(), "bigcodebench/x")
    runner = Recording(workers=1, allow_in_process_tests=True)
    cols = {k: [row[k]] * 2 for k in row if k != "prompt"}
    out = outcome_reward(runner)(
        prompts=[row["prompt"]] * 2,
        completions=[f"```python\n{RIGHT}```", f"```python\n{WRONG}```"],
        **cols,
    )
    assert out == [1.0, 0.0]
    rec = sandbox_record("s", RIGHT, problem())
    assert runner.extras == [{k: rec[k] for k in ("requires", "python")}] * 2


def test_without_its_environment_the_same_answer_fails_on_the_project_interpreter(
    fake_env, monkeypatch
):
    """The control: the same problem not named BigCodeBench's (no extras) runs on the project's
    interpreter, which lacks the fake module, so even the right answer is not correct — what
    the extras the reward takes from the problem fix."""
    from recode_lib.rewards.code import outcome_reward
    from recode_lib.rewards.execution import SandboxRunner
    from recode_lib.training.grpo import code_row

    monkeypatch.setenv(bench_env.ENV_VAR, str(fake_env))
    plain = Problem.from_dict({**problem().to_dict(), "source": "t", "metadata": {}})
    row = code_row(plain, "t/x")
    cols = {k: [row[k]] for k in row if k != "prompt"}
    reward = outcome_reward(SandboxRunner(workers=1, allow_in_process_tests=True))
    assert reward(prompts=[row["prompt"]], completions=[f"```python\n{RIGHT}```"], **cols) == [0.0]


def test_a_problems_metadata_cannot_set_the_code_tests_or_interpreter_of_its_record():
    """Only "requires" (from the metadata) and "python" (decided by the problem's source and
    the built env, never by the metadata) cross into a record besides its code and tests."""
    meta = {"requires": ["numpy"], "code": "print(1)", "tests": {}, "python": "/bin/sh"}
    p = Problem(
        id="t/1", source="t", prompt="p", tests={"kind": "script", "script": ""}, metadata=meta
    )
    assert bench_env.record_extras(p) == {"requires": ["numpy"]}
