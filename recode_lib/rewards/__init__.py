"""Reward functions for GRPO, registered by name, with the TRL signature.

    from recode_lib.rewards import get_reward, REGISTRY
    fn = get_reward("gated", rm_path="runs/smoke/02_reward_model/rm")
    rewards = fn(prompts, completions, tests=[...], **columns)   # list[float], one per completion
    details = fn.details(prompts, completions, tests=[...])       # per-sample components + reasons

Names (options in brackets; all accept `runner=SandboxRunner(...)`):
  format          R_fmt in {0,1}: reasoning then exactly one parsable code block (prompts.parse_response)
  outcome         R_out in {0,1}: every test passes in the sandbox
  process         R_proc in (0,1): sigmoid((rm_score - proc_center) / proc_temperature)
                  [rm_path | scorer (any object with .score(prompts, traces)), proc_center,
                   proc_temperature, proc_trace: "response" (default, what the RM is trained on) | "reasoning", proc_weight]
  gated           R_fmt + R_out + 1[R_out=1] * R_proc        (ReCode's CG-GRPO)      [rm_path]
  additive        R_fmt + R_out + R_proc                     (ablation: no gate)     [rm_path]
  outcome_only    R_fmt + R_out                              (ablation: no process reward)
  strict          R_k in {0,1}: passes every test with input_len < 10**k            [k: int | "inf"]
  strict_<k>, strict_inf   the same with k in the name (e.g. strict_2)
  partial_discrete   mean of R_k over k in `ks` and inf (static partial credit)     [ks]
  partial_continuous share of tests, in order of input size, passed before the first failure
  math_answer     R_ans in {0,1}: math-verify equivalence with the `answer` column
  math_format     math R_fmt: reasoning then one \\boxed{} answer
  math_gated / math_additive / math_outcome_only   the compositions with R_ans as the outcome

Modules: registry (REGISTRY, register, get_reward), base (RewardFunction and the batch plumbing
shared by every family), process (R_proc), composed (the gated/additive/outcome_only
compositions), code, strict, math (the families; importing this package registers them all),
execution (the batched, cached sandbox runner).
Inputs: `completions` are strings or chat-message lists (conversational datasets; the assistant
contents are joined); code rewards need a `tests` column (dict or JSON text; a row without tests
raises ValueError naming the row), optionally `starter_code`, `entry_point`, `time_limit_s`,
`memory_mb`, `problem_id`. The program executed is recode_lib.assemble's, exactly as in
evaluation, so a training reward of 1 means the evaluation harness would count it correct.
Each call logs every component's batch mean through TRL's `log_metric` ("<name>/fmt",
"<name>/out", "<name>/proc", "<name>/error_rate", ...) and the per-sample values and failure
reasons through `log_extra`, so reward hacking (e.g. proc rising while out does not) is visible.
A failure of the sandbox or the reward model is a recorded 0 with its reason, never NaN and
never an exception in the training loop. Execution is shared and cached per step by
recode_lib.rewards.execution.SandboxRunner, so composed rewards never run a completion twice.
It does not train anything (recode_lib.training.grpo does) and does not load the RM until a process
reward is requested (then it loads at construction and raises naming the path if it cannot).
"""

from __future__ import annotations

from recode_lib.rewards.base import RewardFunction, completion_text, prompt_text
from recode_lib.rewards.composed import COMPOSITIONS
from recode_lib.rewards.process import ProcessReward
from recode_lib.rewards.registry import REGISTRY, RewardConfigError, get_reward, register
# the families register themselves on import
from recode_lib.rewards import code, math, strict  # noqa: E402,F401

__all__ = ["COMPOSITIONS", "REGISTRY", "ProcessReward", "RewardConfigError", "RewardFunction",
           "completion_text", "get_reward", "prompt_text", "register"]
