"""Code rewards: format, outcome (every test passes in the sandbox) and their compositions.

    from recode_lib.rewards import get_reward
    get_reward("gated", rm_path=...)      # also: format, outcome, additive, outcome_only

Registered into recode_lib.rewards.REGISTRY on import. The program executed is
recode_lib.assemble's, exactly as in evaluation. It does not define the process reward
(recode_lib.rewards.process) nor the strictness family (recode_lib.rewards.strict).
"""

from __future__ import annotations

from recode_lib.prompts import parse_response
from recode_lib.rewards.base import RewardFunction, base_row, completion_text, execute
from recode_lib.rewards.composed import COMPOSITIONS, composed
from recode_lib.rewards.execution import SandboxRunner, default_runner
from recode_lib.rewards.registry import register, reject


@register("format")
def _format(**extra) -> RewardFunction:
    reject("format", extra)
    def compute(prompts, completions, kwargs):
        out = []
        for c in completions:
            p = parse_response(completion_text(c))
            out.append({"reward": float(p.format_ok), "fmt": float(p.format_ok), "reason": p.reason})
        return out
    return RewardFunction("format", compute, ("fmt",))


@register("outcome")
def _outcome(runner: SandboxRunner | None = None, **extra) -> RewardFunction:
    reject("outcome", extra)
    def compute(prompts, completions, kwargs):
        parsed, results = execute(completions, kwargs, runner or default_runner())
        rows = [base_row(p, r) for p, r in zip(parsed, results)]
        for r in rows:
            r["reward"] = r["out"]
        return rows
    return RewardFunction("outcome", compute, ("out",))


def _code_outcome_rows(runner):
    def rows(completions, texts, kwargs):
        parsed, results = execute(completions, kwargs, runner or default_runner(), texts)
        return [base_row(p, r) for p, r in zip(parsed, results)]
    return rows


for _name in COMPOSITIONS:
    register(_name)(lambda runner=None, _n=_name, **o: composed(_n, _code_outcome_rows(runner), **o))
