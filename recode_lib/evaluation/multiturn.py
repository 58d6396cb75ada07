"""Evaluation in paper B's tool and agentic settings by keyword arguments: a thin name over the
one loop.

    from recode_lib.evaluation.multiturn import evaluate_setting
    summary = evaluate_setting("smollm2", problems, setting="tool", out_dir=DIR, backend="hf",
                               sampling=SamplingConfig(max_new_tokens=256), max_turns=5,
                               max_tool_calls=4, limits=ToolLimits(time_limit_s=5))
    # or EvalSpec(setting="tool", ...).evaluate(...), or `recode eval --setting tool`

`evaluate_setting` builds the EvalSpec of its arguments and runs
recode_lib.evaluation.loop.run_evaluation, the loop of every setting: each sample an episode in
the training environment (recode_lib.evaluation.episodes.MultiTurn), its final answer assembled
and judged exactly as a single-turn response, one row per sample with the fields of every
setting (recode_lib.evaluation.rows: turns, tool_calls, tool_errors, tool_statuses, no_answer,
transcript), summary.json with `setting` and `episodes`, and run.json guarding the setting,
max_turns, max_tool_calls and the tool limits too. `problem_row` (the row an environment is
reset with) is episodes'.
"""

from __future__ import annotations

from collections.abc import Sequence

from recode_lib.environments.settings import check_setting, environment_factory
from recode_lib.evaluation.episodes import problem_row
from recode_lib.evaluation.loop import run_evaluation
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.evaluation.summary import episode_summary
from recode_lib.generation import SamplingConfig
from recode_lib.sandbox.tools import ToolLimits

__all__ = ["evaluate_setting", "problem_row", "episode_summary"]


def evaluate_setting(
    model,
    problems: Sequence,
    *,
    setting: str,
    out_dir,
    backend: str = "hf",
    sampling: SamplingConfig | None = None,
    k: Sequence[int] = (1,),
    reasoning: bool = True,
    benchmark: str | None = None,
    generator=None,
    generator_kwargs: dict | None = None,
    max_turns: int = 5,
    max_tool_calls: int = 4,
    limits=None,
    workers: int | None = None,
    early_stop: bool = False,
    progress: bool = True,
    on_config_change: str = "raise",
    factory=None,
) -> dict:
    """Evaluate `model` in the tool or agentic setting; returns (and writes) the summary.
    `generator` (e.g. a scripted policy, or a loaded backend from rollout.tool_generator)
    replaces building one; `factory` replaces the setting's environment factory (default: one
    with `limits`, a ToolLimits, all of its fields)."""
    check_setting(setting)
    if setting == "single":
        raise ValueError(
            "evaluate_setting is for the tool and agentic settings; single-turn "
            "evaluation is recode_lib.evaluation.codegen.evaluate"
        )
    limits = limits or ToolLimits()
    spec = EvalSpec.from_sampling(
        sampling,
        backend=backend,
        k=tuple(k),
        reasoning=reasoning,
        workers=workers,
        early_stop=early_stop,
        progress=progress,
        on_config_change=on_config_change,
        setting=setting,
        max_turns=max_turns,
        max_tool_calls=max_tool_calls,
        tool_time_limit_s=limits.time_limit_s,
        tool_memory_mb=limits.memory_mb,
        tool_max_output_chars=limits.max_output_chars,
    )
    factory = factory or environment_factory(setting, max_calls=max_tool_calls, limits=limits)
    return run_evaluation(
        spec,
        model,
        problems,
        out_dir,
        benchmark=benchmark,
        generator=generator,
        generator_kwargs=dict(generator_kwargs or {}),
        factory=factory,
    )
