"""Code rewards: format, outcome (every test passes in the sandbox) and their compositions.

    from recode_lib.rewards.code import format_reward, outcome_reward, gated_reward
    format_reward(prompts, completions)                         # a ready reward function
    outcome_reward(runner=SandboxRunner())(prompts, completions, problem=[...])
    gated_reward(runner=..., scorer=rm)(prompts, completions, problem=[...])
    # also additive_reward, outcome_only_reward; by name: recode_lib.rewards.get_reward("gated")

ReCode: "format reward, binary outcome reward (all unit tests pass), and the reasoning-process
reward from the RM": R_fmt in {0,1} (reasoning then exactly one parsable code block,
recode_lib.core.prompts.parse_response), R_out in {0,1}. Registered into recode_lib.rewards.REGISTRY
on import, each with what it needs (the sandbox; the gated and additive ones the RM too). The
program executed is recode_lib.core.assemble's, exactly as in evaluation. It does not define the
process reward (recode_lib.rewards.process) nor the strictness family (recode_lib.rewards.strict).
"""

from __future__ import annotations

from recode_lib.core.prompts import completion_text, parse_response
from recode_lib.rewards.base import RewardFunction, base_row, execute
from recode_lib.rewards.composed import always, compose, when_correct
from recode_lib.rewards.execution import SandboxRunner, default_runner
from recode_lib.rewards.process import process_term
from recode_lib.rewards.registry import Need, register, register_function


def format_rows(prompts, completions, kwargs) -> list[dict]:
    """R_fmt per completion, with the parser's reason when it is 0."""
    out = []
    for c in completions:
        p = parse_response(completion_text(c))
        out.append({"reward": float(p.format_ok), "fmt": float(p.format_ok), "reason": p.reason})
    return out


format_reward = register_function("format", RewardFunction("format", format_rows, ("fmt",)))


def outcome_rows(runner: SandboxRunner | None):
    """outcome_rows(completions, texts, kwargs) -> fmt/out/status rows, through `runner`."""

    def rows(completions, texts, kwargs):
        parsed, results = execute(completions, kwargs, runner or default_runner(), texts)
        return [base_row(p, r) for p, r in zip(parsed, results, strict=True)]

    return rows


@register("outcome", needs=(Need.SANDBOX,))
def outcome_reward(runner: SandboxRunner | None = None) -> RewardFunction:
    """R_out in {0,1}: every test passes in the sandbox."""
    rows_of = outcome_rows(runner)

    def compute(prompts, completions, kwargs):
        rows = rows_of(completions, [completion_text(c) for c in completions], kwargs)
        for r in rows:
            r["reward"] = r["out"]
        return rows

    return RewardFunction("outcome", compute, ("out",))


@register("gated", needs=(Need.SANDBOX, Need.REWARD_MODEL))
def gated_reward(
    runner: SandboxRunner | None = None,
    scorer=None,
    rm_path=None,
    proc_center: float = 0.0,
    proc_temperature: float = 1.0,
    proc_trace: str = "response",
    proc_weight: float = 1.0,
) -> RewardFunction:
    """CG-GRPO: R_fmt + R_out + 1[R_out=1] * R_proc."""
    proc = process_term(
        scorer,
        rm_path,
        proc_center=proc_center,
        proc_temperature=proc_temperature,
        proc_trace=proc_trace,
    )
    return compose("gated", outcome_rows(runner), proc, gate=when_correct, proc_weight=proc_weight)


@register("additive", needs=(Need.SANDBOX, Need.REWARD_MODEL))
def additive_reward(
    runner: SandboxRunner | None = None,
    scorer=None,
    rm_path=None,
    proc_center: float = 0.0,
    proc_temperature: float = 1.0,
    proc_trace: str = "response",
    proc_weight: float = 1.0,
) -> RewardFunction:
    """The ablation without the gate: R_fmt + R_out + R_proc."""
    proc = process_term(
        scorer,
        rm_path,
        proc_center=proc_center,
        proc_temperature=proc_temperature,
        proc_trace=proc_trace,
    )
    return compose("additive", outcome_rows(runner), proc, gate=always, proc_weight=proc_weight)


@register("outcome_only", needs=(Need.SANDBOX,))
def outcome_only_reward(runner: SandboxRunner | None = None) -> RewardFunction:
    """The ablation without the process reward: R_fmt + R_out."""
    return compose("outcome_only", outcome_rows(runner))
