"""The three settings of paper B and how each one's final answer is judged.

    from recode_lib.environments.settings import (SETTINGS, environment_factory, final_answer,
                                                  setting_reward)
    factory = environment_factory("tool", max_calls=4, limits=ToolLimits())   # None for single
    fn = setting_reward(get_reward("strict_inf", runner=runner), "tool")     # a TRL reward
    text, reason = final_answer("tool", completion, env)   # what the rewards judge
    env.reset(**reset_row(problem))                         # the row an environment starts from

Paper B runs every experiment in "single-turn reasoning, multi-turn reasoning with Python tool
calls, and agentic coding through a sandboxed terminal". The rewards are the single-turn ones
(recode_lib.rewards: R_fmt, R_k, R_inf, gated, partial credit), applied to one text per rollout:
- single: the completion as is;
- tool: the last assistant message, when it is an answer (no tool call in it), as generated
  (prompts.message_text: TRL's response parser moves the <think> block into
  "reasoning_content"; it is put back, so R_fmt reads what evaluation reads); an episode that
  ended on a tool call ran out of turns without an answer: "" (a format error);
- agentic: the submitted file as code, a prompts.CodeAnswer: its text is the file as one code
  block after a one-line reasoning (prompts.format_response), what the reward model and the
  logs read, while the judge takes the file itself as the code (a file with a line starting
  with ``` inside a string is judged whole, never cut at that line), complete whatever the
  rollout's last turn did: a model that kept talking after submitting until the token limit is
  not "truncated" (SettingReward; evaluation reads it so too); nothing submitted: ""
  (a format error).
So the same final code gets the same reward in every setting (R_fmt in the agentic setting
only asks that the file parses). final_answer never raises for a rollout: one it cannot read
has no answer (a format error) with the reason. It does not run rollouts (TRL's GRPOTrainer does in
training, recode_lib.environments.rollout at evaluation).
"""

from __future__ import annotations

import functools
from enum import StrEnum

from recode_lib.core.prompts import (
    CodeAnswer,
    build_messages,
    completion_text,
    failure_reason,
    message_text,
)
from recode_lib.environments.python_tool import PythonToolEnv
from recode_lib.environments.terminal import TerminalEnv
from recode_lib.sandbox.tools import ToolLimits


class Setting(StrEnum):
    """Paper B's three settings: single-turn, Python tool use, agentic terminal."""

    SINGLE = "single"
    TOOL = "tool"
    AGENTIC = "agentic"


SETTINGS = tuple(s.value for s in Setting)  # plain strings: error messages show them
ENVIRONMENTS = {Setting.TOOL: PythonToolEnv, Setting.AGENTIC: TerminalEnv}
NO_ANSWER = "ran out of turns without an answer"
NO_SUBMISSION = "no file submitted"


def check_setting(setting: str) -> str:
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
    return Setting(setting)


def environment_factory(
    setting: str, max_calls: int | None = None, limits: ToolLimits | None = None
):
    """A zero-argument factory of the setting's environment (TRL's environment_factory), or
    None for the single-turn setting."""
    check_setting(setting)
    if setting == "single":
        return None
    kw = {"limits": limits or ToolLimits()}
    if max_calls is not None:
        kw["max_calls"] = int(max_calls)
    return functools.partial(ENVIRONMENTS[setting], **kw)


def reset_row(problem, reasoning: bool = True) -> dict:
    """The row an environment is reset with, in training (recode_lib.training.grpo.code_row, as
    dataset columns), at evaluation (recode_lib.evaluation.episodes) and for the SFT
    transcripts: the prompt, problem_id, starter_code, entry_point and `public_examples` (the
    problem's metadata["public_examples"], [] when none: what the agentic workspace shows as
    examples/<k>.in/.out), never the hidden tests."""
    examples = (getattr(problem, "metadata", None) or {}).get("public_examples")
    return {
        "prompt": build_messages(problem, reasoning=reasoning),
        "problem_id": problem.id,
        "starter_code": problem.starter_code or "",
        "entry_point": problem.entry_point or "",
        "public_examples": examples if isinstance(examples, list) else [],
    }


def final_answer(setting: str, completion, env=None) -> tuple[str, str]:
    """(text the rewards judge, "" or why there is no answer) for one rollout; never raises
    for the rollout (an unknown setting still raises)."""
    check_setting(setting)
    try:
        return _final_answer(setting, completion, env)
    except Exception as exc:  # one rollout's failure is its own format error
        return "", failure_reason(exc)


def _final_answer(setting: str, completion, env) -> tuple[str, str]:
    if setting == "single":
        return completion_text(completion), ""
    if setting == "tool":
        if isinstance(completion, str):
            return completion, ""
        msgs = [m for m in completion or [] if isinstance(m, dict)]
        last = msgs[-1] if msgs else None
        if last is None or last.get("role", "assistant") != "assistant" or last.get("tool_calls"):
            return "", NO_ANSWER
        return message_text(last), ""
    code = getattr(env, "submission", None)
    if not isinstance(code, str) or not code.strip():
        return "", NO_SUBMISSION
    path = getattr(env, "submitted_path", None)
    return CodeAnswer(
        f"Submitted {path if isinstance(path, str) and path else 'a file'}.", code
    ), ""


class SettingReward:
    """A TRL reward function that judges each rollout's final answer with a single-turn reward."""

    def __init__(self, fn, setting: str):
        self.fn, self.setting = fn, check_setting(setting)
        self.__name__ = getattr(fn, "__name__", "reward")
        self.components = getattr(fn, "components", ())

    @property
    def stop_token_ids(self):
        """The wrapped reward's stop ids (rewards.base.truncated_flags): GRPO sets them on
        every reward function that has them (training.grpo.give_stop_ids); a wrapper that hid
        them would judge a tool answer cut at the token limit as if it were complete."""
        return getattr(self.fn, "stop_token_ids", None)

    @stop_token_ids.setter
    def stop_token_ids(self, ids) -> None:
        if hasattr(self.fn, "stop_token_ids"):
            self.fn.stop_token_ids = ids

    def _texts(self, completions, kwargs):
        envs = kwargs.get("environments") or [None] * len(completions)
        return [final_answer(self.setting, c, e)[0] for c, e in zip(completions, envs, strict=True)]

    def _judged(self, completions, kwargs) -> tuple[list, dict]:
        """(the texts judged, the keyword arguments for them). A submitted file is complete
        whatever the rollout's last turn did (evaluation reads it so: episodes.MultiTurn):
        its row of `completion_ids` is emptied, so the truncation rule (rewards.base.
        truncated_flags: the last id neither EOS nor pad) never blanks a submission because
        the model kept talking after submitting until the token limit."""
        texts = self._texts(completions, kwargs)
        ids = kwargs.get("completion_ids")
        if self.setting == Setting.AGENTIC and ids is not None and len(ids) == len(texts):
            kwargs = {
                **kwargs,
                "completion_ids": [
                    [] if isinstance(t, CodeAnswer) else row
                    for t, row in zip(texts, ids, strict=True)
                ],
            }
        return texts, kwargs

    def __call__(self, prompts, completions, **kwargs):
        texts, kwargs = self._judged(completions, kwargs)
        return self.fn(prompts, texts, **kwargs)

    def details(self, prompts, completions, **kwargs):
        texts, kwargs = self._judged(completions, kwargs)
        return self.fn.details(prompts, texts, **kwargs)


def setting_reward(fn, setting: str):
    """`fn` itself for the single-turn setting, else a SettingReward around it."""
    return fn if check_setting(setting) == "single" else SettingReward(fn, setting)
