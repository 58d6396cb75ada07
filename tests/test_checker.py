"""CodeContests+ testlib checkers: compiled once, cached, run by the judge; without a working
C++ compiler a refusal naming the package (plan, step start, judge), and exact comparison with a
counted warning, recorded in every result, only when the user asks for it."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from recode_lib.data import load_benchmark
from recode_lib.sandbox import SandboxConfig, execute
from recode_lib.sandbox import checker as C

FIX = Path(__file__).parent / "fixtures"
# any two non-negative integers summing to n are accepted; an unreadable answer is a checker fail
SUM_CHECKER = r"""#include "testlib.h"
int main(int argc, char *argv[]) {
    registerTestlibCmd(argc, argv);
    long long n = inf.readLong();
    long long ja = ans.readLong(), jb = ans.readLong();
    if (ja + jb != n) quitf(_fail, "the answer file is wrong");
    long long a = ouf.readLong(0, n), b = ouf.readLong(0, n);
    if (a + b != n) quitf(_wa, "%lld + %lld != %lld", a, b, n);
    quitf(_ok, "ok");
}
"""
needs_cxx = pytest.mark.skipif(C.compiler() is None, reason="no C++ compiler")


def _rec(code, checker=SUM_CHECKER, expected="2 2\n"):
    return {
        "id": "c",
        "code": code,
        "tests": {
            "kind": "stdio",
            "checker": checker,
            "cases": [{"input": "4\n", "output": expected}, {"input": "10\n", "output": "5 5\n"}],
        },
    }


ANOTHER_ANSWER = "n = int(input())\nprint(1, n - 1)\n"


def test_vendored_testlib_with_its_license():
    assert (C.TESTLIB_DIR / "testlib.h").is_file()
    assert "MIT License" in (C.TESTLIB_DIR / "LICENSE").read_text()


@needs_cxx
def test_a_checker_accepts_another_correct_answer_and_rejects_a_wrong_one():
    r = execute(_rec(ANOTHER_ANSWER))
    assert (r["status"], r["checker"]) == ("passed", "testlib")
    exact = execute(
        {
            **_rec(ANOTHER_ANSWER),
            "tests": {k: v for k, v in _rec(ANOTHER_ANSWER)["tests"].items() if k != "checker"},
        }
    )
    assert exact["status"] == "wrong_answer"  # what exact match said before
    bad = execute(_rec("n = int(input())\nprint(1, n)\n"))
    assert bad["status"] == "wrong_answer"
    assert C.compile_checker(SUM_CHECKER) == C.compile_checker(SUM_CHECKER)  # cached binary
    assert C.compile_checker(SUM_CHECKER).parent.name == C.checker_key(SUM_CHECKER)


@needs_cxx
def test_a_failing_checker_never_passes_a_submission():
    before = C.CHECKER_STATS["checker_fail"]
    r = execute(_rec(ANOTHER_ANSWER, expected="nonsense\n"))
    assert r["tests"][0]["status"] == "wrong_answer"
    assert C.CHECKER_STATS["checker_fail"] > before


FALLBACK = SandboxConfig(checker_fallback=True)
MISSING_CXX = "/nonexistent/bin/g++"  # "no compiler": the lookup points at a missing binary


@pytest.fixture
def fresh_cache(monkeypatch):
    """A checker cache no build has touched (under /tmp, not pytest's tmp_path: the judge must
    reach it as any user), removed afterwards."""
    d = Path("/tmp") / f"recode-checkers-{uuid.uuid4()}"
    monkeypatch.setenv("RECODE_CACHE_DIR", str(d))
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_without_a_compiler_it_falls_back_to_exact_match_only_when_asked(monkeypatch, fresh_cache):
    monkeypatch.setenv("RECODE_CXX", MISSING_CXX)
    src = SUM_CHECKER + f"// {uuid.uuid4()}\n"  # a checker this process has not built
    before = C.fallback_count()
    with pytest.warns(RuntimeWarning, match="no C\\+\\+ compiler"):
        r = execute(_rec(ANOTHER_ANSWER, checker=src), config=FALLBACK)
    assert (r["status"], r["checker"]) == ("wrong_answer", "exact_fallback")
    assert "no C++ compiler" in r["checker_reason"]  # recorded in the result it touched
    ok = execute(
        _rec("n = int(input())\nprint(n // 2, n - n // 2)\n", checker=src), config=FALLBACK
    )
    assert ok["status"] == "passed"  # exact match still judges
    assert C.fallback_count() - before == 4  # one per test judged


def test_without_a_compiler_the_judge_refuses_naming_the_package(monkeypatch):
    monkeypatch.setenv("RECODE_CXX", MISSING_CXX)
    src = SUM_CHECKER + f"// {uuid.uuid4()}\n"
    with pytest.raises(C.CheckerUnavailable, match=r"install the Debian package g\+\+"):
        execute(_rec(ANOTHER_ANSWER, checker=src))


def test_a_compiler_that_cannot_build_is_no_compiler(monkeypatch, tmp_path):
    fake = tmp_path / "g++"
    fake.write_text("#!/bin/sh\necho 'broken toolchain' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("RECODE_CXX", str(fake))
    assert "does not build a C++17 program (broken toolchain)" in C.compiler_problem()


@needs_cxx
def test_a_checker_that_does_not_compile_is_refused_unless_fallback_is_asked(fresh_cache):
    src = f'#include "testlib.h"\nint main() {{ this is not C++ }} // {uuid.uuid4()}\n'
    with pytest.raises(C.CheckerUnavailable, match="does not compile"):
        execute(_rec(ANOTHER_ANSWER, checker=src))
    with pytest.warns(RuntimeWarning, match="does not compile"):
        r = execute(_rec(ANOTHER_ANSWER, checker=src), config=FALLBACK)
    assert r["checker"] == "exact_fallback" and r["status"] == "wrong_answer"
    assert "does not compile" in r["checker_reason"]


def test_the_plan_refuses_a_testlib_profile_without_a_compiler(monkeypatch):
    from recode_lib.plan.preflight import checker_preflight
    from recode_lib.runner.pipeline import profile_parameters

    params = profile_parameters("paper")
    monkeypatch.setenv("RECODE_CXX", MISSING_CXX)
    refused = checker_preflight(params)
    assert any(
        r.startswith("04_cg_grpo: BENCHMARK=codecontests_plus") and "g++" in r for r in refused
    )
    asked = {
        **params,
        "04_cg_grpo": {**params["04_cg_grpo"], "RECIPE_FIELDS": {"checker_fallback": True}},
    }
    assert not any(r.startswith("04_cg_grpo") for r in checker_preflight(asked))
    monkeypatch.delenv("RECODE_CXX")
    if C.compiler() is not None:
        assert checker_preflight(params) == []


def test_an_evaluation_refuses_before_generating_anything(monkeypatch, tmp_path):
    from recode_lib.data.schema import Problem
    from recode_lib.evaluation.spec import EvalSpec

    monkeypatch.setenv("RECODE_CXX", MISSING_CXX)
    p = Problem(id="cc/1", source="codecontests_plus", prompt="Sum.", tests=_rec("")["tests"])
    with pytest.raises(C.CheckerUnavailable, match="evaluating codecontests_plus"):
        EvalSpec(backend="hf").evaluate(
            "no-such-model", [p], tmp_path / "e", benchmark="codecontests_plus"
        )
    assert not (tmp_path / "e" / "samples.jsonl").exists()


def test_a_recipe_asks_for_the_fallback_for_its_rewards():
    from recode_lib.training.grpo import load_recipe, recipe_dict, reward_sandbox_config

    assert reward_sandbox_config(load_recipe("cg_grpo_smoke")) is None
    asked = load_recipe("cg_grpo_smoke", checker_fallback=True)
    assert reward_sandbox_config(asked).checker_fallback is True
    assert recipe_dict(asked)["checker_fallback"] is True  # recorded in run.json


def test_loader_attaches_testlib_checkers_only(tmp_path):
    rows = [
        json.loads(line)
        for line in (FIX / "Code-Contests-Plus" / "ccplus_1x" / "part-00000-of-00001.jsonl").open()
    ]
    rows[0]["checker"] = SUM_CHECKER
    d = tmp_path / "Code-Contests-Plus" / "ccplus_1x"
    d.mkdir(parents=True)
    (d / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    a, b = load_benchmark("codecontests_plus", data_dir=tmp_path, config="1x")
    assert a.tests["checker"] == SUM_CHECKER and "checker" not in b.tests
    assert a.time_limit_s == rows[0]["time_limit"] / 1000 * 3.0


def test_record_checker_field_is_validated():
    from recode_lib.sandbox import RecordError

    with pytest.raises(RecordError, match="tests.checker"):
        execute(_rec("print(1)", checker=5))


def test_summaries_count_checker_fallbacks():
    from recode_lib.evaluation.summary import summarize

    rows = [
        {
            "problem_id": "a",
            "sample": i,
            "status": "passed",
            "outcome": "correct",
            "passed": 1,
            "total": 1,
            "n_tokens": 1,
            "finish_reason": "stop",
            "code": "x",
            "checker": c,
        }
        for i, c in enumerate(("testlib", "exact_fallback"))
    ]
    assert summarize(rows)["checker_fallbacks"] == 1
    assert "checker_fallbacks" not in summarize(
        [{k: v for k, v in rows[0].items() if k != "checker"}]
    )
