"""Reward functions for GRPO: public named functions and factories, and one registry by name.

    from recode_lib.rewards import format_reward, gated_reward, get_reward, build_reward
    format_reward(prompts, completions)                              # list[float], TRL signature
    fn = gated_reward(runner=SandboxRunner(), scorer=rm)             # a factory
    fn = get_reward("gated", rm_path="runs/smoke/02_reward_model/rm")  # the same, by name
    rewards = fn(prompts, completions, problem=[...], **columns)     # one float per completion
    details = fn.details(prompts, completions, problem=[...])        # per-sample parts, reasons
    Need.REWARD_MODEL in reward_needs("gated")                       # what an entry needs

It does not train anything (recode_lib.training.grpo does) and does not place the reward model
(recode_lib.process_reward.placement does; a factory given rm_path loads it on CPU, float32, at
construction and raises naming the path if it cannot).
More: docs/modules/rewards.md (recode_lib.rewards).
"""

from __future__ import annotations

from recode_lib.rewards.base import RewardFunction
from recode_lib.rewards.code import (
    additive_reward,
    format_reward,
    gated_reward,
    outcome_only_reward,
    outcome_reward,
)
from recode_lib.rewards.composed import always, compose, when_correct
from recode_lib.rewards.math import (
    math_additive_reward,
    math_answer_reward,
    math_format_reward,
    math_gated_reward,
    math_outcome_only_reward,
)
from recode_lib.rewards.process import ProcessReward, process_reward
from recode_lib.rewards.registry import (
    REGISTRY,
    Need,
    RewardConfigError,
    RewardDataError,
    RewardEntry,
    RewardResources,
    build_reward,
    get_reward,
    register,
    register_function,
    reward_needs,
)
from recode_lib.rewards.strict import (
    partial_continuous_reward,
    partial_discrete_reward,
    strict_reward,
    sweep_rewards,
)

__all__ = [
    "REGISTRY",
    "Need",
    "ProcessReward",
    "RewardConfigError",
    "RewardDataError",
    "RewardEntry",
    "RewardFunction",
    "RewardResources",
    "additive_reward",
    "always",
    "build_reward",
    "compose",
    "format_reward",
    "gated_reward",
    "get_reward",
    "math_additive_reward",
    "math_answer_reward",
    "math_format_reward",
    "math_gated_reward",
    "math_outcome_only_reward",
    "outcome_only_reward",
    "outcome_reward",
    "partial_continuous_reward",
    "partial_discrete_reward",
    "process_reward",
    "register",
    "register_function",
    "reward_needs",
    "strict_reward",
    "sweep_rewards",
    "when_correct",
]
