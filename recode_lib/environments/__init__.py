"""Paper B's multi-turn settings as TRL environments: Python tool calls and a sandboxed terminal.

    from recode_lib.environments import (SETTINGS, PythonToolEnv, TerminalEnv, environment_factory,
                                         setting_reward, final_answer, prepare_tool_tokenizer,
                                         run_episodes)

Modules: python_tool (the `run_python` tool setting), terminal (the agentic workspace setting),
settings (which text of a rollout the single-turn rewards judge; the factories TRL gets),
chat (tool-calling chat templates: Qwen2.5's own, a ChatML one for SmolLM2), rollout (the same
environments at evaluation time, with a generation backend). Tool execution is
recode_lib.sandbox.tools / recode_lib.sandbox.workspace. Training uses TRL's own loop:
GRPOTrainer(environment_factory=environment_factory(setting, ...)) with
`max_tool_calling_iterations` (recode_lib.training.grpo does this for a recipe's `setting`).
"""

from recode_lib.environments.chat import CHATML_TOOLS, prepare_tool_tokenizer
from recode_lib.environments.python_tool import PythonToolEnv, ToolError
from recode_lib.environments.settings import (
    SETTINGS,
    SettingReward,
    environment_factory,
    final_answer,
    reset_row,
    setting_reward,
)
from recode_lib.environments.terminal import TerminalEnv

__all__ = [
    "CHATML_TOOLS",
    "SETTINGS",
    "PythonToolEnv",
    "SettingReward",
    "TerminalEnv",
    "ToolError",
    "environment_factory",
    "final_answer",
    "prepare_tool_tokenizer",
    "reset_row",
    "setting_reward",
]
