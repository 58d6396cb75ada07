"""Seeded traces: known programs judged for real, reasoning from the model, origins kept."""

from __future__ import annotations

import re

from crpl_helpers import ScriptedGenerator

from recode_lib.data.schema import Problem
from recode_lib.process_reward.crpl import CRPLConfig
from recode_lib.process_reward.lcbrb.benchmark import benchmark_rows, candidate_pairs
from recode_lib.process_reward.lcbrb.seeded_traces import (
    clean_reasoning,
    generate_seeded_traces,
    seed_programs,
)

REF = "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    return min(x, hi)\n"


def _problem(pid="t/clamp", wrong=True, ref=REF):
    cases = [
        {"args": a, "expected": e}
        for a, e in (
            ([5, 0, 3], 3),
            ([-1, 0, 3], 0),
            ([0, 0, 3], 0),
            ([3, 0, 3], 3),
            ([2, 0, 3], 2),
        )
    ]
    return Problem(
        id=pid,
        source="t",
        prompt="Clamp x into [lo, hi].",
        entry_point="clamp",
        tests={"kind": "call", "fn_name": "clamp", "cases": cases},
        time_limit_s=5,
        reference_solution=ref,
        metadata={"wrong": "def clamp(x, lo, hi):\n    return x\n"} if wrong else {},
    )


def _explainer(m, j):
    code = m[-1]["content"].split("```python\n")[1].split("```")[0]
    return f"<think>We clamp. The code has {len(code)} characters.</think>"


def test_programs_are_reference_own_variants_then_mutants():
    progs = seed_programs(_problem(), n_mutants=2)
    assert [o.split(":")[0] for o, _, _ in progs] == ["reference", "wrong", "mutant", "mutant"]
    assert seed_programs(_problem(ref=None)) == []


def test_every_program_is_judged_by_the_sandbox_not_assumed(tmp_path):
    recs, rep = generate_seeded_traces(
        [_problem()],
        CRPLConfig(batch_size=3),
        tmp_path / "s.jsonl",
        n_mutants=3,
        generator=ScriptedGenerator(_explainer),
    )
    out = {r["origin"].split(":")[0]: r["verdict"]["outcome"] for r in recs}
    assert out["reference"] == "correct" and out["wrong"] == "correctness_failure"
    assert all(
        r["seeded"] and r["usable"] and r["trace"].startswith("<think>\nWe clamp.") for r in recs
    )
    assert rep["traces"] == len(recs) == 4 and rep["failing_references"] == 0  # 2 mutation sites
    n_mut_pass = sum(
        r["origin"].startswith("mutant") and r["verdict"]["outcome"] == "correct" for r in recs
    )
    assert rep["equivalent_mutants"] == n_mut_pass


def test_an_equivalent_mutant_is_recorded_as_passing(tmp_path):
    # `x < lo` -> `x <= lo` returns lo == x when x == lo: same behaviour, so it passes
    recs, rep = generate_seeded_traces(
        [_problem(wrong=False)],
        CRPLConfig(),
        tmp_path / "s.jsonl",
        n_mutants=10,
        generator=ScriptedGenerator(_explainer),
    )
    eq = [r for r in recs if r["origin"] == "mutant:cmp_boundary"]
    assert eq and eq[0]["verdict"]["outcome"] == "correct"
    assert rep["equivalent_mutants"] >= 1


def test_the_model_is_not_told_which_program_is_correct(tmp_path):
    seen = []
    gen = ScriptedGenerator(lambda m, j: seen.append(m) or "Reasoning.")
    generate_seeded_traces(
        [_problem()], CRPLConfig(), tmp_path / "s.jsonl", n_mutants=1, generator=gen
    )
    texts = [" ".join(x["content"] for x in m) for m in seen]
    assert len(texts) == 3
    # the messages differ only inside the code block, and never name the program's kind
    assert len({re.sub(r"```python.*?```", "CODE", t, flags=re.DOTALL) for t in texts}) == 1
    assert not any(w in t.lower() for t in texts for w in ("wrong", "mutant", "reference"))


def test_a_reply_without_prose_is_unusable_with_its_reason_and_resume_skips_done(tmp_path):
    gen = ScriptedGenerator(lambda m, j: "```python\ndef clamp(x, lo, hi):\n    return x\n```")
    recs, rep = generate_seeded_traces(
        [_problem()], CRPLConfig(), tmp_path / "s.jsonl", n_mutants=1, generator=gen
    )
    assert rep["unusable"] == 3 and all(r["reason"] == "no reasoning in the reply" for r in recs)
    again, _ = generate_seeded_traces(
        [_problem()], CRPLConfig(), tmp_path / "s.jsonl", n_mutants=1, generator=gen
    )
    assert gen.calls == 3 and len(again) == 3
    assert clean_reasoning("<think> a </think>```python\nx=1\n```") == "a"


def test_seeded_pairs_keep_their_origins_into_the_benchmark_rows(tmp_path):
    recs, _ = generate_seeded_traces(
        [_problem()],
        CRPLConfig(),
        tmp_path / "s.jsonl",
        n_mutants=0,
        generator=ScriptedGenerator(_explainer),
    )
    pairs, rep = candidate_pairs(recs, max_pairs_per_problem=2)
    assert rep["pairs"] == 1
    assert (pairs[0]["better_origin"], pairs[0]["worse_origin"]) == ("reference", "wrong")
    checked = [
        {
            **pairs[0],
            "status": "kept",
            "reason": "",
            "consistency": {"better": True, "worse": True, "verified": True},
        }
    ]
    rows, _ = benchmark_rows(checked, {pairs[0]["id"]: {"decision": "swap", "by": "human"}})
    assert rows[0]["seeded"] and rows[0]["better_origin"] == "wrong"
