"""Reward compositions: R_fmt + R_out + R_proc, gated (ReCode's CG-GRPO), additive or outcome only.

    fn = composed("gated", outcome_rows, rm_path=...)   # outcome_rows(completions, texts, kwargs)

`COMPOSITIONS[name]` = (w_fmt, w_out, proc mode) with mode "gated" (R_proc counts only when
R_out = 1), "always" or None. The outcome side is the caller's (code: tests in the sandbox,
math: the gold answer); this module neither executes nor checks answers.
"""

from __future__ import annotations

from typing import Callable

from recode_lib.rewards.base import RewardFunction, completion_text, prompt_text
from recode_lib.rewards.process import ProcessReward, proc_options
from recode_lib.rewards.registry import reject

COMPOSITIONS = {"gated": (1, 1, "gated"), "additive": (1, 1, "always"), "outcome_only": (1, 1, None)}

def composed(name: str, outcome_rows: Callable, rm_path=None, **options) -> RewardFunction:
    """The composition `name` (math_ prefix allowed) over the given outcome rows."""
    w_fmt, w_out, mode = COMPOSITIONS[name.replace("math_", "")]
    w_proc = float(options.pop("proc_weight", 1.0))
    popts = proc_options(options)
    reject(name, options)
    proc = ProcessReward(rm_path, **popts) if mode else None

    def compute(prompts, completions, kwargs):
        texts = [completion_text(c) for c in completions]
        rows = outcome_rows(completions, texts, kwargs)
        want = [i for i, r in enumerate(rows) if mode == "always" or (mode and r["out"] == 1.0)]
        scores = proc([prompt_text(prompts[i]) for i in want], [texts[i] for i in want]) if want else []
        for r in rows:
            r["proc"], r["proc_raw"] = (0.0 if mode else None), None
        for i, (s, raw, why) in zip(want, scores):
            rows[i]["proc"], rows[i]["proc_raw"] = s, raw
            if why:
                rows[i]["error"] = True
                rows[i]["reason"] = (rows[i]["reason"] + "; " if rows[i]["reason"] else "") + why
        for r in rows:
            r["reward"] = w_fmt * r["fmt"] + w_out * r["out"] + w_proc * (r["proc"] or 0.0)
        return rows
    comps = ("fmt", "out", "proc", "proc_raw") if mode else ("fmt", "out")
    return RewardFunction(name, compute, comps)
