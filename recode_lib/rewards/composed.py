"""Reward compositions R = R_fmt + R_out + gate * R_proc: gated (CG-GRPO), additive, outcome only.

    fn = compose("gated", outcome_rows, ProcessReward(scorer), gate=when_correct)
    fn = compose("outcome_only", outcome_rows)                  # no process term
    # outcome_rows(completions, texts, kwargs) -> [{"fmt", "out", "reason", ...}] per completion

ReCode's consistency gate: "R_i = R_fmt + R_out + 1[R_out = 1] * R_proc ... the process reward
counts only when all tests pass" (`when_correct`); the ablation without the gate adds R_proc
to every sample (`always`). The RM scores only the samples the gate admits, unless it is a
collective (sharded with ZeRO-3: then it scores every sample, so that all ranks make the same
calls, and the gate applies afterwards). The outcome side is
the caller's (code: tests in the sandbox, recode_lib.rewards.code; math: the gold answer,
recode_lib.rewards.math); this module neither executes nor checks answers.
"""

from __future__ import annotations

from collections.abc import Callable

from recode_lib.core.prompts import completion_text, prompt_text
from recode_lib.rewards.base import RewardFunction
from recode_lib.rewards.process import ProcessReward


def when_correct(row: dict) -> bool:
    """The consistency gate 1[R_out = 1]."""
    return row["out"] == 1.0


def always(row: dict) -> bool:
    """No gate (the additive ablation): R_proc counts for every sample."""
    return True


def compose(
    name: str,
    outcome_rows: Callable,
    process: ProcessReward | None = None,
    *,
    gate: Callable[[dict], bool] = when_correct,
    proc_weight: float = 1.0,
) -> RewardFunction:
    """R_fmt + R_out (+ proc_weight * R_proc where `gate(row)`), named `name`."""

    def compute(prompts, completions, kwargs):
        texts = [completion_text(c) for c in completions]
        rows = outcome_rows(completions, texts, kwargs)
        for r in rows:
            r["proc"], r["proc_raw"] = (0.0 if process else None), None
        admitted = [bool(process) and gate(r) for r in rows]
        # a ZeRO-3-sharded RM is a collective: every rank scores all its samples, gate after
        ask = [i for i in range(len(rows)) if admitted[i] or (process and process.collective)]
        scores = (
            process([prompt_text(prompts[i]) for i in ask], [texts[i] for i in ask]) if ask else []
        )
        for i, (s, raw, why) in zip(ask, scores, strict=True):
            if not admitted[i]:
                continue
            rows[i]["proc"], rows[i]["proc_raw"] = s, raw
            if why:
                rows[i]["error"] = True
                rows[i]["reason"] = (rows[i]["reason"] + "; " if rows[i]["reason"] else "") + why
        for r in rows:
            r["reward"] = r["fmt"] + r["out"] + proc_weight * (r["proc"] or 0.0)
        return rows

    comps = ("fmt", "out", "proc", "proc_raw") if process else ("fmt", "out")
    return RewardFunction(name, compute, comps)
