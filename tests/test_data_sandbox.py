"""Converted tests are judged correctly by the sandbox: references pass, a wrong answer fails."""

import sys

import pytest

from recode_lib.data import load_benchmark

sandbox = pytest.importorskip("recode_lib.sandbox")
from pathlib import Path  # noqa: E402

FIX = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("RECODE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def _run(problems, code_of=lambda p: p.reference_solution):
    recs = [
        {
            "id": p.id,
            "code": code_of(p),
            "tests": p.tests,
            "time_limit_s": p.time_limit_s,
            "memory_mb": p.memory_mb,
        }
        for p in problems
    ]
    return sandbox.execute_many(recs, workers=2)


def test_references_pass_on_real_benchmarks(shared_data_dir):
    probs = (
        load_benchmark("humaneval", limit=8)
        + load_benchmark("mbpp", limit=8)
        + load_benchmark("humanevalplus", limit=8)
        + load_benchmark("humanevalplus", ids=["humanevalplus/32"])  # the tolerance oracle
        + load_benchmark("mbppplus", limit=8)
    )
    bad = [(r["id"], r["status"]) for r in _run(probs) if r["status"] != "passed"]
    # from Python 3.12 on, /32's reference misses 5 roots (docs/sandbox.md, "HumanEval+ on
    # Python 3.12"): its own sum() changed; test_find_zero_tolerance_oracle passes a right one
    assert bad == ([("humanevalplus/32", "wrong_answer")] if sys.version_info >= (3, 12) else [])


def test_find_zero_tolerance_oracle(shared_data_dir):
    (p,) = load_benchmark("humanevalplus", ids=["humanevalplus/32"])
    assert p.id == "humanevalplus/32" and "checker" in p.tests
    # a different but valid root must pass (equality with the reference's root would fail it)
    # the reference's Newton iteration run to a tighter tolerance: a different float than the
    # reference's output (equality would fail it), still a root within atol
    # (poly summed left to right, as sum() was before Python 3.12: from 3.12 on the reference's
    # own iterates miss a few inputs' roots, docs/sandbox.md "HumanEval+ on Python 3.12")
    assert "x, tol = 0, 1e-5" in p.reference_solution
    fsum = "return sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])"
    fold = fsum.replace("sum(", "functools.reduce(operator.add, ")
    assert fsum in p.reference_solution
    tighter = "import functools, operator\n" + p.reference_solution.replace(
        "x, tol = 0, 1e-5", "x, tol = 0, 1e-9"
    ).replace(fsum, fold)
    ns = {}
    exec(tighter, ns)
    cases = p.tests["cases"][:50]
    assert any(ns["find_zero"](*c["args"]) != c["expected"] for c in cases)
    wrong = p.prompt + "    return 0.0\n"
    codes = iter([tighter, wrong])
    ok, bad = _run([p, p], code_of=lambda _: next(codes))
    assert ok["status"] == "passed", ok
    assert bad["outcome"] == "correctness_failure"


def test_upstream_fixtures_through_sandbox():
    cc = load_benchmark("codecontests_plus", data_dir=FIX, config="3x")
    assert all(r["status"] == "passed" for r in _run(cc))
    func = load_benchmark("livecodebench", data_dir=FIX, release="v1")[1]
    sol = func.metadata["prelude"] + (
        "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
        "        seen = {}\n        for i, x in enumerate(nums):\n"
        "            if target - x in seen:\n                return [seen[target - x], i]\n"
        "            seen[x] = i\n"
    )
    (res,) = _run([func], code_of=lambda p: sol)
    assert res["status"] == "passed"
    assert sorted(t["input_len"] for t in res["tests"]) == [11, 16]


def test_leetcode_assert_script(shared_data_dir):
    p = load_benchmark("leetcode", limit=1)[0]
    assert p.entry_point == "minimumPushes"
    good = p.metadata["prelude"] + (
        "class Solution:\n    def minimumPushes(self, word: str) -> int:\n"
        "        return sum(i // 8 + 1 for i in range(len(word)))\n"
    )
    bad = good.replace("i // 8 + 1", "1")
    codes = iter([good, bad])
    ok, wrong = _run([p, p], code_of=lambda _: next(codes))
    assert ok["status"] == "passed" and wrong["outcome"] == "correctness_failure"


REF = "def seq(n):\n    return [i * i for i in range(n)]\n"
STEAL_REF = """
import sys, gc
def seq(n):
    for o in gc.get_objects():       # the reference, were it anywhere in this process
        if isinstance(o, dict) and callable(o.get("seq")) and o["seq"] is not seq:
            return o["seq"](n)
    return []
"""


def test_evalplus_tasks_without_stored_outputs_keep_the_reference_in_the_judge():
    # HumanEval+/15, /139...: outputs too large to store; the judge's checker recomputes them
    from recode_lib.data.evalplus import build_tests
    from recode_lib.sandbox.records import parse_record

    tests, _ = build_tests(
        "humaneval", "t/1", "seq", [[3], [5]], None, [0.01, 0.01], 0.0, reference=REF
    )
    assert tests["kind"] == "call" and "_REF_NS" in tests["checker"]
    job = parse_record({"id": 1, "code": "", "tests": tests}, sandbox.SandboxConfig()).job
    assert "i * i" not in repr(job)  # nothing of the reference travels to the sandbox
    run = lambda code: sandbox.execute({"id": 1, "code": code, "tests": tests})["status"]  # noqa
    assert run(REF) == "passed"
    assert run(STEAL_REF) == "wrong_answer"
    assert run("def seq(n):\n    return list(range(n))\n") == "wrong_answer"


def test_evalplus_not_none_tasks_are_call_tests():
    # MBPP+ check_str & co return re.Match objects: they arrive opaque, which is "not None"
    from recode_lib.data.evalplus import build_tests

    tests, _ = build_tests(
        "mbpp", "t/2", "check_str", [["abc"], ["xyz"]], [True, False], [0.01, 0.01], 0.0
    )
    assert tests["kind"] == "call" and "checker" in tests
    good = "import re\ndef check_str(s):\n    return re.match('a', s)\n"
    assert sandbox.execute({"id": 1, "code": good, "tests": tests})["status"] == "passed"
    bad = "import re\ndef check_str(s):\n    return re.match('x', s)\n"
    assert sandbox.execute({"id": 1, "code": bad, "tests": tests})["status"] == "wrong_answer"


def test_evalplus_digests_of_unstored_outputs_are_compared_first():
    # the reference worker records each too-large output's digest; the judge matches it
    from recode_lib.data._reference_worker import run_job
    from recode_lib.data.evalplus import build_tests
    from recode_lib.data.pyvalues import encode

    job = {
        "id": "t",
        "code": REF,
        "entry_point": "seq",
        "inputs": encode([[3], [5]]),
        "max_output_chars": 10,
    }
    res = run_job(job)
    assert res["outputs"] is None and len(res["digests"]) == 2
    tests, _ = build_tests(
        "humaneval",
        "t/1",
        "seq",
        [[3], [5]],
        None,
        [0.01, 0.01],
        0.0,
        reference="def seq(n):\n    return None\n",  # never used
        digests=res["digests"],
    )
    run = lambda code: sandbox.execute({"id": 1, "code": code, "tests": tests})["status"]  # noqa
    assert run(REF) == "passed"  # the digests matched: the (wrong) reference never ran
