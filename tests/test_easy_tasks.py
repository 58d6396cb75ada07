"""The seeded easy-task generator (laptop profile): deterministic, well-formed, references pass
their own tests in the sandbox, tests span several input-length decades."""

from __future__ import annotations

import pytest

from recode_lib.data.easy_tasks import (
    ALL_TEMPLATES,
    BIG,
    EFFICIENCY,
    TEMPLATES,
    TIME_LIMIT_S,
    generate_easy_tasks,
    make_task,
)
from recode_lib.data.schema import Problem


def test_same_seed_same_tasks_other_seed_other_tasks():
    a = [p.to_dict() for p in generate_easy_tasks(12, seed=3)]
    assert a == [p.to_dict() for p in generate_easy_tasks(12, seed=3)]
    assert a != [p.to_dict() for p in generate_easy_tasks(12, seed=4)]
    assert len({p["id"] for p in a}) == 12


def test_tasks_round_trip_the_schema_and_span_input_decades():
    for p in generate_easy_tasks(len(TEMPLATES) * 2, seed=0) + generate_easy_tasks(
        len(EFFICIENCY) * 2, seed=0, templates=EFFICIENCY
    ):
        assert Problem.from_dict(p.to_dict()).to_dict() == p.to_dict()
        lens = [c["input_len"] for c in p.tests["cases"]]
        assert min(lens) < 10 and max(lens) > 10**4, (p.id, lens)  # R_1 .. R_4 each ask more
        assert p.reference_solution
        if p.tests["kind"] == "call":
            assert p.starter_code.startswith(f"def {p.entry_point}(")


def test_kinds_are_respected_and_checked():
    assert {p.tests["kind"] for p in generate_easy_tasks(20, seed=1, kinds=("stdio",))} == {"stdio"}
    with pytest.raises(ValueError, match="kinds"):
        generate_easy_tasks(2, kinds=("script",))
    only_call = next(t for t in TEMPLATES if t.kinds == ("call",))
    with pytest.raises(ValueError, match="cannot be posed"):
        import random

        make_task(only_call, "stdio", 2, "f", random.Random(0), "x")


def test_references_pass_and_a_wrong_answer_fails_in_the_sandbox():
    from recode_lib.sandbox import execute_many

    probs = generate_easy_tasks(
        len(TEMPLATES), seed=0, kinds=("call", "stdio")
    ) + generate_easy_tasks(len(EFFICIENCY), seed=0, templates=EFFICIENCY)
    assert {p.metadata["template"] for p in probs} == {t.name for t in ALL_TEMPLATES}
    recs = [
        {
            "id": p.id,
            "code": p.reference_solution,
            "tests": p.tests,
            "time_limit_s": p.time_limit_s,
            "memory_mb": p.memory_mb,
        }
        for p in probs
    ]
    wrong = probs[0]
    recs.append(
        {
            "id": "wrong",
            "tests": wrong.tests,
            "time_limit_s": 2.0,
            "memory_mb": 512,
            "code": (
                f"def {wrong.entry_point}(*a):\n    return None\n"
                if wrong.tests["kind"] == "call"
                else "print('nope')\n"
            ),
        }
    )
    res = {r["id"]: r for r in execute_many(recs, workers=2)}
    assert all(res[p.id]["status"] == "passed" for p in probs), {
        p.id: res[p.id]["status"] for p in probs if res[p.id]["status"] != "passed"
    }
    assert res["wrong"]["status"] == "wrong_answer"


def test_quadratic_answers_pass_the_lenient_reward_and_time_out_on_the_big_test():
    """Each efficiency template's naive body (nums.count in a loop, `x not in` a list, prefix
    slices) passes every test up to 2000 elements and exceeds TIME_LIMIT_S on the BIG one, so
    R_2 = 1 and R_inf = 0: the lenient and strict rewards disagree (paper B's sweep needs it)."""
    from recode_lib.sandbox import execute_many
    from recode_lib.sandbox.rk import strictness

    assert all(t.naive for t in EFFICIENCY) and not any(t.naive for t in TEMPLATES)
    probs = generate_easy_tasks(len(EFFICIENCY), seed=0, templates=EFFICIENCY)
    by_name = {t.name: t for t in EFFICIENCY}
    recs = []
    for p in probs:
        t = by_name[p.metadata["template"]]
        body = f"def f(nums):\n{t.naive}\n"
        code = (
            f"def {p.entry_point}(nums):\n{t.naive}\n"
            if p.tests["kind"] == "call"
            else f"import sys\n{body}\nr = f(list(map(int, sys.stdin.read().split())))\n"
            f"print(' '.join(map(str, r)) if isinstance(r, list) else r)\n"
        )
        recs.append(
            {
                "id": p.id,
                "code": code,
                "tests": p.tests,
                "time_limit_s": p.time_limit_s,
                "memory_mb": p.memory_mb,
            }
        )
    assert max(c["input_len"] for c in probs[0].tests["cases"]) > BIG and TIME_LIMIT_S <= 2.0
    for res in execute_many(recs, workers=2):
        per_test = {t["input_len"]: t["status"] for t in res["tests"]}
        big = max(per_test)
        assert res["status"] == "time_limit" and per_test[big] == "time_limit", (
            res["id"],
            per_test,
        )
        assert all(s == "passed" for n, s in per_test.items() if n < big), (res["id"], per_test)
        assert strictness(res, ks=(2, "inf")) == {"2": 1, "inf": 0}, res["id"]


def test_the_one_element_case_is_r1_and_lets_lucky_wrong_programs_through():
    """R_1 (tests with input_len < 10) is the one-element list [1]: `max` passes it for a sum, and
    fails R_inf, so the lenient and strict rewards of paper B disagree on such a program."""
    from recode_lib.sandbox import execute_many
    from recode_lib.sandbox.rk import strictness

    t = next(t for t in TEMPLATES if t.name == "sum_list")
    import random

    p = make_task(t, "call", 0, "f", random.Random(0), "x")
    assert p.tests["cases"][0]["args"] == [[1]]
    assert [c["input_len"] < 10 for c in p.tests["cases"]][:2] == [True, False]
    [res] = execute_many(
        [
            {
                "id": "lucky",
                "code": "def f(nums):\n    return max(nums)\n",
                "tests": p.tests,
                "time_limit_s": 2.0,
                "memory_mb": 512,
            }
        ],
        workers=1,
    )
    assert res["status"] == "wrong_answer"
    assert strictness(res, ks=(1, 2, "inf")) == {"1": 1, "2": 0, "inf": 0}
