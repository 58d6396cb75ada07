"""Sandbox verdicts per test kind, limits, early stop, strictness, the CLI (small fixtures)."""

import json
import subprocess
import sys

import pytest

from recode_lib.sandbox import RecordError, SandboxConfig, execute, execute_many, strictness
from recode_lib.sandbox.verdict import default_equal, stdio_equal

CFG = SandboxConfig(time_limit_s=1.0, memory_mb=512, workers=2)


def call(code, cases, fn="f", **extra):
    return {
        "id": "x",
        "code": code,
        "tests": {
            "kind": "call",
            "fn_name": fn,
            "cases": [{"args": a, "expected": e} for a, e in cases],
            **extra,
        },
    }


def run(rec, **kw):
    return execute(rec, config=CFG, **kw)


def test_call_pass_wrong_and_runtime_error():
    ok = run(call("def f(x):\n    return x * 2\n", [([1], 2), ([3], 6)]))
    assert (ok["status"], ok["outcome"], ok["passed"], ok["total"]) == ("passed", "correct", 2, 2)
    wrong = run(call("def f(x):\n    return x + 1\n", [([1], 2), ([3], 6)]))
    assert (wrong["status"], wrong["outcome"], wrong["passed"]) == (
        "wrong_answer",
        "correctness_failure",
        1,
    )
    err = run(call("def f(x):\n    return 1 // (x - 3)\n", [([1], -1), ([3], 0)]))
    assert err["status"] == "runtime_error" and [t["status"] for t in err["tests"]] == [
        "passed",
        "runtime_error",
    ]


def test_solution_class_method_and_tuple_types():
    code = "class Solution:\n    def pair(self, a):\n        return (a, a)\n"
    ok = run(call(code, [([1], {"__t": "tuple", "v": [1, 1]})], fn="pair"))
    assert ok["status"] == "passed"
    as_list = run(call(code, [([1], [1, 1])], fn="pair"))  # a tuple is not a list (EvalPlus)
    assert as_list["status"] == "wrong_answer"


def test_float_tolerance_like_evalplus():
    assert default_equal(0.1 + 0.2, 0.3)  # atol 1e-6 forced for float outputs
    assert not default_equal(0.31, 0.3)
    assert default_equal([1.0, 2.0000001], [1.0, 2.0])
    assert not default_equal((1.0, 2.0), [1.0, 2.0])
    assert default_equal(1.05, 1.0, atol=0.1) and not default_equal(1, 2)
    r = run(call("def f():\n    return 0.1 + 0.2\n", [([], 0.3)]))
    assert r["status"] == "passed"


def test_stdio_numbers_and_whitespace():
    assert stdio_equal("1 2  \n3\n\n", "1 2\n3")
    assert stdio_equal("1.0\n", "1.00") and not stdio_equal("1.1\n", "1.0")
    assert stdio_equal("0.30000001", "0.3", float_tol=1e-6)
    code = "import sys\nn = int(open(0).read())\nsys.stdout.buffer.write(b'%d\\n' % (n * n))\n"
    rec = {
        "id": "s",
        "code": code,
        "tests": {
            "kind": "stdio",
            "cases": [{"input": "3\n", "output": "9"}, {"input": "4\n", "output": "17"}],
        },
    }
    r = run(rec)
    assert r["status"] == "wrong_answer" and [t["status"] for t in r["tests"]] == [
        "passed",
        "wrong_answer",
    ]


def test_script_pass_fail_and_sys_exit_in_stdio_is_fine():
    ok = {
        "id": "a",
        "code": "def g(x):\n    return x + 1\n",
        "tests": {"kind": "script", "script": "assert g(1) == 2\nassert g(2) == 3\n"},
    }
    assert run(ok)["status"] == "passed"
    bad = dict(ok, code="def g(x):\n    return x\n")
    assert run(bad)["status"] == "wrong_answer"
    stdio = {
        "id": "b",
        "code": "import sys\nprint(5)\nsys.exit(0)\n",
        "tests": {"kind": "stdio", "cases": [{"input": "", "output": "5"}]},
    }
    assert run(stdio)["status"] == "passed"


def test_format_errors():
    r = run(call("def f(x) return x\n", [([1], 1)]))
    assert (r["status"], r["outcome"]) == ("syntax_error", "format_error")
    r = run(call("", [([1], 1)]))
    assert (r["status"], r["outcome"], r["passed"]) == ("no_code", "format_error", 0)
    r = run(call(None, [([1], 1)]))
    assert r["status"] == "no_code"


def test_timeout_is_per_test_and_later_tests_still_run():
    code = "def f(n):\n    while n > 5:\n        pass\n    return n\n"
    r = run(call(code, [([1], 1), ([90], 90), ([2], 2)]))  # "[90]" is the longest input
    assert [t["status"] for t in r["tests"]] == ["passed", "time_limit", "passed"]
    assert (r["status"], r["outcome"], r["passed"]) == ("time_limit", "optimization_failure", 2)


def test_memory_limit_is_told_apart():
    code = "def f(n):\n    return len(bytearray(n * 1024 ** 3)) if n else 0\n"
    r = run(call(code, [([0], 0), ([20], 20 * 1024**3)]))  # the failing input is the longer
    assert (r["status"], r["outcome"]) == ("memory_limit", "optimization_failure")
    r = run(call(code, [([2], 2 * 1024**3)]))  # nothing passed: a hang, not slow
    assert (r["status"], r["outcome"]) == ("memory_limit", "correctness_failure")


def test_early_stop_and_strictness_in_input_length_order():
    code = "def f(s):\n    return len(s) if len(s) < 50 else -1\n"
    cases = [{"args": ["a" * n], "expected": n, "input_len": n} for n in (500, 5, 60, 20)]
    rec = {"id": "k", "code": code, "tests": {"kind": "call", "fn_name": "f", "cases": cases}}
    full = run(rec)
    assert [t["status"] for t in full["tests"]] == [
        "wrong_answer",
        "passed",
        "wrong_answer",
        "passed",
    ]
    early = run(rec, early_stop=True)
    assert early["tests"][1]["status"] == "passed" and early["tests"][3]["status"] == "passed"
    assert early["tests"][2]["status"] == "wrong_answer"  # first failure at length 60
    want = {"1": 1, "2": 0, "3": 0, "inf": 0}
    assert strictness(full, (1, 2, 3, "inf")) == want == strictness(early, (1, 2, 3, "inf"))


def test_checker_oracle():
    checker = "def check(args, out, exp, atol):\n    return abs(out * out - args[0]) <= atol\n"
    rec = call("def f(x):\n    return x ** 0.5\n", [([2.0], None)], checker=checker, atol=1e-6)
    assert run(rec)["status"] == "passed"


def test_execute_many_keeps_order_and_bad_records_name_the_field():
    recs = [dict(call(f"def f():\n    return {i}\n", [([], i % 2)]), id=i) for i in range(6)]
    res = execute_many(recs, workers=2, config=CFG)
    assert [r["id"] for r in res] == list(range(6))
    assert [r["status"] for r in res] == [
        "passed" if i % 2 == i else "wrong_answer" for i in range(6)
    ]
    with pytest.raises(RecordError, match=r"tests\.cases\[0\]\.args"):
        execute_many([call("x=1", [("nope", 1)])], config=CFG)


def test_cli_resumes_and_reports_bad_lines(tmp_path):
    src = tmp_path / "in.jsonl"
    out = tmp_path / "out.jsonl"
    recs = [dict(call(f"def f():\n    return {i}\n", [([], 1)]), id=f"r{i}") for i in range(3)]
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    cmd = [
        sys.executable,
        "-m",
        "recode_lib",
        "sandbox",
        str(src),
        "--out",
        str(out),
        "--workers",
        "2",
        "--no-progress",
    ]
    assert subprocess.run(cmd, capture_output=True, text=True).returncode == 0
    first = [json.loads(x) for x in out.read_text().splitlines()]
    assert sorted(r["id"] for r in first) == ["r0", "r1", "r2"]
    assert {r["id"]: r["status"] for r in first}["r1"] == "passed"
    again = subprocess.run(cmd, capture_output=True, text=True)
    assert "3 already in" in again.stdout and len(out.read_text().splitlines()) == 3
    src.write_text(json.dumps(recs[0]) + "\n" + json.dumps({"id": "bad", "tests": {}}) + "\n")
    bad = subprocess.run(cmd + ["--strict"], capture_output=True, text=True)
    assert bad.returncode == 2 and "in.jsonl:2" in bad.stderr and "tests.kind" in bad.stderr
    assert len(out.read_text().splitlines()) == 3  # --strict: nothing written
    lenient = subprocess.run(cmd, capture_output=True, text=True)  # the default: a line for it
    assert lenient.returncode == 0 and "in.jsonl:2" in lenient.stderr
    row = json.loads(out.read_text().splitlines()[-1])
    assert (row["id"], row["status"], row["line"]) == ("bad", "invalid_record", 2)


def test_plain_mode_fallback_still_judges_and_cleans_up(tmp_path):
    """The degraded mode a user without namespaces gets: limits + process cleanup only."""
    cfg = SandboxConfig(time_limit_s=1.0, memory_mb=512, isolation="plain")
    daemon = (
        "import os, time\ndef f(x):\n    if os.fork() == 0:\n        os.setsid()\n"
        "        if os.fork() == 0:\n            time.sleep(30)\n        os._exit(0)\n"
        "    open('scratch.txt', 'w').write('x')\n    return x\n"
    )
    res = execute_many(
        [call(daemon, [([2], 2)]), call("def f(x):\n    while 1: pass\n", [([1], 1)])],
        workers=1,
        config=cfg,
    )
    assert [r["status"] for r in res] == ["passed", "time_limit"]
    from recode_lib.sandbox.pool import get_pool

    (w,) = get_pool(cfg).workers()
    assert w.mode == "plain"
    kids = open(f"/proc/{w.info['pid']}/task/{w.info['pid']}/children").read().split()
    assert kids == []


# an output whose JSON text is over harness.BIG_OUTPUT goes out in slices: the same line
_UNIT = 'a"\\\né\U0001f600\x01'
_BIG = _UNIT * 150_000  # ~5 MB of JSON text, escapes across the slice edges


def test_a_multi_megabyte_output_with_escapes_is_judged_exactly():
    cfg = SandboxConfig(time_limit_s=10.0, memory_mb=512, workers=1)
    code = f"def f(n):\n    return {_UNIT!r} * n + 'z'\n"
    res = execute(call(code, [([150_000], _BIG + "z"), ([150_000], _BIG + "y")]), config=cfg)
    assert [t["status"] for t in res["tests"]] == ["passed", "wrong_answer"]


def test_a_big_output_over_the_limit_is_refused_and_one_under_it_passes():
    cfg = SandboxConfig(time_limit_s=10.0, memory_mb=512, workers=1, max_output_bytes=1 << 21)
    code = "def f(n):\n    return 'x' * n\n"
    res = execute(call(code, [([1 << 20], "x" * (1 << 20)), ([1 << 21], "x" * (1 << 21))]), cfg)
    assert [t["status"] for t in res["tests"]] == ["passed", "runtime_error"]
    assert "output too large" in res.get("reason", "")
