"""Math rewards: answer correctness by math-verify, and the compositions gated the same way.

Registered into recode_lib.rewards.REGISTRY on import (recode_lib.rewards imports this module):
  math_format        reasoning then one \\boxed{} answer (recode_lib.evaluation.math.parse_math_response)
  math_answer        R_ans in {0,1}: math-verify equivalence with the dataset's `answer` column
  math_gated / math_additive / math_outcome_only   R_fmt + R_ans (+ gated / plain R_proc)
A row without a gold answer raises ValueError naming the row. It does no code execution.
"""

from __future__ import annotations

from recode_lib.rewards.base import RewardFunction, column, completion_text
from recode_lib.rewards.composed import COMPOSITIONS, composed
from recode_lib.rewards.registry import register, reject


def _math_outcome_rows(completions, texts, kwargs):
    from recode_lib.evaluation.math import answer_correct, parse_math_response

    if "answer" not in kwargs:
        raise ValueError("the dataset has no 'answer' column: math rewards need the gold answers")
    n = len(texts)
    pids = column(kwargs, "problem_id", n)
    rows = []
    for i, (t, gold) in enumerate(zip(texts, kwargs["answer"])):
        if gold is None or str(gold).strip() == "":
            raise ValueError(f"row {i} (problem_id {pids[i]!r}): no gold answer")
        p = parse_math_response(t)
        ok, why = answer_correct(t, gold)
        reason = "; ".join(x for x in (p.reason, why) if x)
        rows.append({"fmt": float(p.format_ok), "out": float(ok), "error": why.startswith("math-verify"),
                     "reason": reason, "status": "correct" if ok else "wrong"})
    return rows


@register("math_format")
def _math_format(**extra):
    reject("math_format", extra)
    from recode_lib.evaluation.math import parse_math_response

    def compute(prompts, completions, kwargs):
        ps = [parse_math_response(completion_text(c)) for c in completions]
        return [{"reward": float(p.format_ok), "fmt": float(p.format_ok), "reason": p.reason} for p in ps]
    return RewardFunction("math_format", compute, ("fmt",))


@register("math_answer")
def _math_answer(**extra):
    reject("math_answer", extra)
    def compute(prompts, completions, kwargs):
        rows = _math_outcome_rows(completions, [completion_text(c) for c in completions], kwargs)
        for r in rows:
            r["reward"] = r["out"]
        return rows
    return RewardFunction("math_answer", compute, ("out",))


for _name in COMPOSITIONS:
    register(f"math_{_name}")(lambda _n=_name, **o: composed(f"math_{_n}", _math_outcome_rows, **o))
