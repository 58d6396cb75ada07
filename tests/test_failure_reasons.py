"""Every failed verdict says why (issue 41): the exception's type and last line, the judge's
refusal, or the modules the sandbox lacks; a problem needing a module the sandbox's
interpreter lacks is `env_missing` (not counted), never a wrong answer. One property per test."""

import json

import pytest

from recode_lib.data.bigcodebench import RUNNER
from recode_lib.data.schema import Problem
from recode_lib.evaluation.rows import result_fields
from recode_lib.evaluation.summary import summarize
from recode_lib.sandbox import SandboxConfig, execute, execute_many, sandbox_record
from recode_lib.sandbox.environment import missing_modules
from recode_lib.sandbox.records import RecordError

CFG = SandboxConfig(time_limit_s=5.0, memory_mb=512, workers=1)
CALL = {
    "kind": "call",
    "fn_name": "f",
    "cases": [{"args": [1], "expected": 1}, {"args": [2], "expected": 2}],
}
UNITTEST = (
    "import unittest\nclass TestCases(unittest.TestCase):\n"
    "    def test_one(self):\n        self.assertEqual(f(1), 1)\n"
    "    def test_two(self):\n        self.assertEqual(f(2), 2)\n"
) + RUNNER
NO_SUCH = "recode_no_such_module_4711"


def run(code, tests, **rec):
    res = execute({"id": "r", "code": code, "tests": tests, **rec}, config=CFG)
    json.dumps(res, allow_nan=False)
    return res


def test_a_load_failure_names_the_exception_and_its_message():
    res = run(f"import {NO_SUCH}\n", {"kind": "script", "script": UNITTEST})
    assert res["status"] == "runtime_error"
    assert f"ModuleNotFoundError: No module named '{NO_SUCH}'" in res["reason"]


def test_a_failing_unittest_names_the_first_failing_test_and_its_last_line():
    res = run("def f(x):\n    return x if x == 1 else -7\n", {"kind": "script", "script": UNITTEST})
    assert res["status"] == "runtime_error"
    assert "1 of 2 tests failed; first test_two: AssertionError: -7 != 2" in res["reason"]


def test_a_call_test_crash_names_the_exception_and_the_test():
    res = run("def f(x):\n    return {}[x]\n", CALL)
    assert res["reason"] == "test 1 of 2: runtime_error: KeyError"  # KeyError(1): not a str


def test_a_wrong_answer_names_the_first_failing_test():
    res = run("def f(x):\n    return x if x == 1 else 0\n", CALL)
    assert res["reason"] == "test 2 of 2: wrong_answer"


def test_an_unverified_success_says_why():
    # a thread still running when the tests end keeps the process from being alone, so the
    # nonce is refused (TensorFlow's native pools do this): a failure, and its reason says so
    code = (
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "def f(x):\n    return x\n"
    )
    res = run(code, {"kind": "script", "script": UNITTEST})
    assert res["status"] == "runtime_error"
    assert res["reason"].startswith("the test: runtime_error: its success could not be verified")


def test_a_user_exception_class_message_is_not_read():
    # its __str__/args would run submission code in the harness: only the builtin base name
    code = (
        "class E(Exception):\n    @property\n    def args(self):\n"
        "        raise SystemExit('ran')\n    def __str__(self):\n        return 'forged'\n"
        "raise E('secret')\n"
    )
    res = run(code, {"kind": "script", "script": UNITTEST})
    assert res["status"] == "runtime_error" and "forged" not in res["reason"]
    assert "secret" not in res["reason"] and res["reason"].endswith(": E")


def test_a_reason_is_one_printable_line():
    res = run(
        "raise ValueError('a\\nb\\x1b[2Jc\\u2028d')\n", {"kind": "script", "script": UNITTEST}
    )
    assert res["reason"].isprintable() and len(res["reason"]) <= 300


def test_a_passing_record_has_no_reason():
    res = run("def f(x):\n    return x\n", CALL)
    assert res["status"] == "passed" and "reason" not in res


def test_a_problem_needing_an_absent_module_is_env_missing_without_running():
    res = run("def f(x):\n    return x\n", CALL, requires=["json", NO_SUCH])
    assert (res["status"], res["outcome"], res["passed"]) == ("env_missing", "not_counted", 0)
    assert NO_SUCH in res["reason"] and "json" not in res["reason"].split(": ", 1)[1]
    assert res["strictness"] == {k: 0 for k in ("1", "2", "3", "4", "5", "inf")}


def test_a_forged_module_error_for_an_installed_module_stays_a_failure():
    # the verdict comes from the record and the interpreter, never from what the code raised
    res = run(
        "raise ModuleNotFoundError(\"No module named 'json'\")\n",
        {"kind": "script", "script": UNITTEST},
        requires=["json"],
    )
    assert (res["status"], res["outcome"]) == ("runtime_error", "correctness_failure")


def test_requires_must_be_module_names():
    with pytest.raises(RecordError, match="requires"):
        run("x = 1\n", CALL, requires=["os; rm -rf /"])


def test_missing_modules_asks_the_sandbox_interpreter():
    assert missing_modules(None, ["json", "os.path", NO_SUCH]) == (NO_SUCH,)


def problem(pid, libs):
    return Problem.from_dict(
        dict(
            id=pid,
            source="bigcodebench",
            prompt="p",
            entry_point="f",
            tests=CALL,
            metadata={"libs": libs},
        ),
        pid,
    )


def test_the_record_builder_carries_the_problems_libraries():
    assert sandbox_record("a#0", "x", problem("a", ["numpy", "re"]))["requires"] == ["numpy", "re"]
    assert "requires" not in sandbox_record("b#0", "x", problem("b", None))


def test_env_missing_is_left_out_of_pass_at_k_and_counted():
    probs = [problem("ok", ["json"]), problem("gone", [NO_SUCH])]
    good = "def f(x):\n    return x\n"
    res = execute_many([sandbox_record(f"{p.id}#0", good, p) for p in probs], config=CFG)
    rows = [
        {
            "id": r["id"],
            "problem_id": r["id"].split("#")[0],
            "code": good,
            "n_tokens": 1,
            **result_fields(r),
        }
        for r in res
    ]
    s = summarize(rows, ks=(1,))
    assert s["pass@1"] == 1.0 and s["n_problems"] == 1
    assert s["not_counted"] == {"samples": 1, "problems": 1, "modules": {NO_SUCH: 1}}
    assert rows[1]["reason"].endswith(NO_SUCH)


def test_every_sample_left_out_gives_no_pass_at_k():
    row = {
        "id": "g#0",
        "problem_id": "g",
        "code": "x",
        "n_tokens": 1,
        "status": "env_missing",
        "outcome": "not_counted",
        "reason": f"not installed for the sandbox's interpreter: {NO_SUCH}",
    }
    s = summarize([row], ks=(1,))
    assert s["pass@1"] is None and s["not_counted"]["samples"] == 1


def test_a_test_scripts_own_module_level_imports_are_required_too():
    from recode_lib.data.bigcodebench import script_imports

    script = (
        "import unittest\nimport numpy as np\nfrom faker import Faker\nfrom . import x\n"
        "try:\n    import optional_thing\nexcept ImportError:\n    pass\n"
        "def f():\n    import inner\n"
    )
    assert script_imports(script) == ["faker", "numpy", "unittest"]
    assert script_imports("def (:") == []


def test_a_huge_exception_message_gives_a_bounded_reason():
    res = run(
        "raise ValueError('x' * 50_000_000 + '\\nlast')\n", {"kind": "script", "script": UNITTEST}
    )
    assert res["reason"].endswith("ValueError: last") and len(res["reason"]) <= 300
