"""The seeded easy-task generator (laptop profile): deterministic, well-formed, references pass
their own tests in the sandbox, tests span several input-length decades."""

from __future__ import annotations

import pytest

from recode_lib.data.easy_tasks import TEMPLATES, generate_easy_tasks, make_task
from recode_lib.data.schema import Problem


def test_same_seed_same_tasks_other_seed_other_tasks():
    a = [p.to_dict() for p in generate_easy_tasks(12, seed=3)]
    assert a == [p.to_dict() for p in generate_easy_tasks(12, seed=3)]
    assert a != [p.to_dict() for p in generate_easy_tasks(12, seed=4)]
    assert len({p["id"] for p in a}) == 12


def test_tasks_round_trip_the_schema_and_span_input_decades():
    for p in generate_easy_tasks(len(TEMPLATES) * 2, seed=0):
        assert Problem.from_dict(p.to_dict()).to_dict() == p.to_dict()
        lens = [c["input_len"] for c in p.tests["cases"]]
        assert min(lens) < 10 ** 2 and max(lens) >= 10 ** 3, (p.id, lens)   # R_2 != R_inf tests
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

    probs = generate_easy_tasks(len(TEMPLATES), seed=0, kinds=("call", "stdio"))
    recs = [{"id": p.id, "code": p.reference_solution, "tests": p.tests,
             "time_limit_s": p.time_limit_s, "memory_mb": p.memory_mb} for p in probs]
    wrong = probs[0]
    recs.append({"id": "wrong", "tests": wrong.tests, "time_limit_s": 2.0, "memory_mb": 512,
                 "code": (f"def {wrong.entry_point}(*a):\n    return None\n"
                          if wrong.tests["kind"] == "call" else "print('nope')\n")})
    res = {r["id"]: r for r in execute_many(recs, workers=2)}
    assert all(res[p.id]["status"] == "passed" for p in probs), \
        {p.id: res[p.id]["status"] for p in probs if res[p.id]["status"] != "passed"}
    assert res["wrong"]["status"] == "wrong_answer"
