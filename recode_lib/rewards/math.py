"""Math rewards: answer correctness by math-verify, and the compositions gated the same way.

    from recode_lib.rewards.math import math_answer_reward, math_format_reward, math_gated_reward
    math_answer_reward(prompts, completions, answer=["25", ...])      # ready reward functions
    math_gated_reward(scorer=rm)(prompts, completions, answer=[...])   # also math_additive_reward,
                                                                       # math_outcome_only_reward
ReCode's transfer to math: the same R = R_fmt + R_ans + 1[R_ans = 1] * R_proc with the answer
checked against the gold one instead of tests. math_format: reasoning then one \\boxed{} answer
(recode_lib.core.math_answers.parse_math_response); math_answer: R_ans in {0,1}, math-verify
equivalence with the dataset's `answer` column. Registered into recode_lib.rewards.REGISTRY on
import (the gated and additive ones need the RM). A row without a gold answer raises RewardDataError
(a ValueError) naming the row. It does no code execution.
"""

from __future__ import annotations

from recode_lib.core.math_answers import answer_correct, parse_math_response
from recode_lib.core.prompts import completion_text
from recode_lib.rewards.base import RewardFunction, column
from recode_lib.rewards.composed import always, compose, when_correct
from recode_lib.rewards.process import process_term
from recode_lib.rewards.registry import Need, RewardDataError, register, register_function


def math_outcome_rows(completions, texts, kwargs) -> list[dict]:
    """fmt/out rows: the boxed answer checked against the `answer` column."""
    if "answer" not in kwargs:
        raise RewardDataError(
            "the dataset has no 'answer' column: math rewards need the gold answers"
        )
    n = len(texts)
    pids = column(kwargs, "problem_id", n)
    rows = []
    for i, (t, gold) in enumerate(zip(texts, kwargs["answer"], strict=True)):
        if gold is None or str(gold).strip() == "":
            raise RewardDataError(f"row {i} (problem_id {pids[i]!r}): no gold answer")
        p = parse_math_response(t)
        ok, why = answer_correct(t, gold)
        reason = "; ".join(x for x in (p.reason, why) if x)
        rows.append(
            {
                "fmt": float(p.format_ok),
                "out": float(ok),
                "error": why.startswith("math-verify"),
                "reason": reason,
                "status": "correct" if ok else "wrong",
            }
        )
    return rows


def math_format_rows(prompts, completions, kwargs) -> list[dict]:
    ps = [parse_math_response(completion_text(c)) for c in completions]
    return [
        {"reward": float(p.format_ok), "fmt": float(p.format_ok), "reason": p.reason} for p in ps
    ]


def math_answer_rows(prompts, completions, kwargs) -> list[dict]:
    rows = math_outcome_rows(completions, [completion_text(c) for c in completions], kwargs)
    for r in rows:
        r["reward"] = r["out"]
    return rows


math_format_reward = register_function(
    "math_format", RewardFunction("math_format", math_format_rows, ("fmt",))
)
math_answer_reward = register_function(
    "math_answer", RewardFunction("math_answer", math_answer_rows, ("out",))
)


@register("math_gated", needs=(Need.REWARD_MODEL,))
def math_gated_reward(
    scorer=None,
    rm_path=None,
    proc_center: float = 0.0,
    proc_temperature: float = 1.0,
    proc_trace: str = "response",
    proc_weight: float = 1.0,
) -> RewardFunction:
    """R_fmt + R_ans + 1[R_ans=1] * R_proc."""
    proc = process_term(
        scorer,
        rm_path,
        proc_center=proc_center,
        proc_temperature=proc_temperature,
        proc_trace=proc_trace,
    )
    return compose(
        "math_gated", math_outcome_rows, proc, gate=when_correct, proc_weight=proc_weight
    )


@register("math_additive", needs=(Need.REWARD_MODEL,))
def math_additive_reward(
    scorer=None,
    rm_path=None,
    proc_center: float = 0.0,
    proc_temperature: float = 1.0,
    proc_trace: str = "response",
    proc_weight: float = 1.0,
) -> RewardFunction:
    """R_fmt + R_ans + R_proc (no gate)."""
    proc = process_term(
        scorer,
        rm_path,
        proc_center=proc_center,
        proc_temperature=proc_temperature,
        proc_trace=proc_trace,
    )
    return compose("math_additive", math_outcome_rows, proc, gate=always, proc_weight=proc_weight)


@register("math_outcome_only")
def math_outcome_only_reward() -> RewardFunction:
    """R_fmt + R_ans."""
    return compose("math_outcome_only", math_outcome_rows)
