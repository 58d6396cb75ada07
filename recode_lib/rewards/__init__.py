"""Reward functions for GRPO: public named functions and factories, and one registry by name.

    from recode_lib.rewards import format_reward, gated_reward, get_reward, build_reward
    format_reward(prompts, completions)                              # list[float], TRL signature
    fn = gated_reward(runner=SandboxRunner(), scorer=rm)             # a factory
    fn = get_reward("gated", rm_path="runs/smoke/02_reward_model/rm")  # the same, by name
    rewards = fn(prompts, completions, problem=[...], **columns)     # one float per completion
    details = fn.details(prompts, completions, problem=[...])        # per-sample parts, reasons
    Need.REWARD_MODEL in reward_needs("gated")                       # what an entry needs

Names (factory options in brackets; `needs`: what build_reward supplies from the run):
  format           format_reward          R_fmt in {0,1}: reasoning then exactly one parsable code block
  outcome          outcome_reward         R_out in {0,1}: every test passes          needs: sandbox
  process          process_reward         R_proc in (0,1): sigmoid((rm_score - proc_center) / proc_temperature)
                                          [scorer | rm_path, proc_center, proc_temperature,
                                           proc_trace: response | reasoning]          needs: RM
  gated            gated_reward           R_fmt + R_out + 1[R_out=1] * R_proc (ReCode's CG-GRPO)
                                          [proc options, proc_weight]         needs: sandbox, RM
  additive         additive_reward        R_fmt + R_out + R_proc (ablation: no gate) needs: sandbox, RM
  outcome_only     outcome_only_reward    R_fmt + R_out (ablation: no process reward) needs: sandbox
  strict, strict_<k>, strict_inf   strict_reward   R_k in {0,1}: passes every test with
                                          input_len < 10**k [k: int | "inf"]          needs: sandbox
  partial_discrete partial_discrete_reward   mean of R_k over k in `ks` and inf [ks: the
                                          sweep's finite levels, sweep_rewards]       needs: sandbox
  partial_continuous partial_continuous_reward   share of tests, by input size, passed before
                                          the first failure                           needs: sandbox
  math_format / math_answer   math_format_reward / math_answer_reward (math-verify vs `answer`)
  math_gated / math_additive / math_outcome_only   the compositions with R_ans as the outcome

Modules: registry (REGISTRY, Need, register, get_reward, build_reward, RewardResources), base
(RewardFunction and the batch plumbing shared by every family), process (R_proc), composed (the
gate and the compositions), code, strict, math (the families; importing this package registers
them all), execution (the batched, cached sandbox runner).
Inputs: `completions` are strings or chat-message lists (conversational datasets; the assistant
contents are joined); code rewards need a `problem` column, each row's Problem (its to_json
text, as recode_lib.training.grpo.build_dataset writes it, a to_dict mapping or the Problem;
a row without one raises RewardDataError, a ValueError, naming the row). The program executed
is recode_lib.assemble's, exactly as in evaluation, so a training reward of 1 means the
evaluation harness would count it correct.
Each call logs every component's batch mean through TRL's `log_metric` ("<name>/fmt",
"<name>/out", "<name>/proc", "<name>/error_rate", ...) and the per-sample values and failure
reasons through `log_extra`, so reward hacking (e.g. proc rising while out does not) is visible.
A failure of the sandbox or the reward model is a recorded 0 with its reason, never NaN and
never an exception in the training loop. No failure of one sample leaves a reward function
either: a completion nested too deep for Python's parser is a format error, and anything else
one sample raises gets that sample alone a logged None (base.guarded_rows); only configuration
and dataset errors (RecodeError) are raised. Execution is shared and cached per step by
recode_lib.rewards.execution.SandboxRunner, so composed rewards never run a completion twice.
It does not train anything (recode_lib.training.grpo does) and does not place the reward model
(recode_lib.process_reward.placement does; a factory given rm_path loads it on CPU, float32,
at construction and raises naming the path if it cannot).
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
