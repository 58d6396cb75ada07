"""CG-GRPO and strictness-sweep training on TRL's GRPOTrainer, from YAML recipes.

    from recode_lib.training.grpo import load_recipe, train
    recipe = load_recipe("cg_grpo_smoke", model="smollm2", rewards=[{"name": "gated"}],
                         rm_path="runs/smoke/02_reward_model/rm")
    result = train(recipe, problems, "runs/smoke/04_cg_grpo/gated")
    result.final_dir       # <output_dir>/final: a Hugging Face folder (model + tokenizer)
    result.metrics_path    # <output_dir>/metrics.jsonl: one line per logged step
    # multi-GPU: recode_lib.training.launch.launch(recipe, problems, out, launcher="accelerate")

It does not generate for evaluation (recode_lib.evaluation does) and imports
vllm/deepspeed only through TRL/accelerate when a recipe asks for them.
More: docs/modules/training.md (recode_lib.training.grpo).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import difflib
import json
import os
import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recode_lib.core.bf16 import AUTO, resolve_bf16, resolve_precision
from recode_lib.core.jsonl import read_json, read_jsonl, write_json_atomic, write_jsonl_atomic
from recode_lib.core.math_answers import math_messages
from recode_lib.core.memory import release_memory
from recode_lib.core.models import (
    PRECISIONS,
    load_tokenizer,
    model_stamp,
    resolve_model,
    trainer_model_init_kwargs,
)
from recode_lib.core.paths import set_aside
from recode_lib.core.stamps import fingerprint, provenance
from recode_lib.data.schema import Problem
from recode_lib.environments import (
    environment_factory,
    prepare_tool_tokenizer,
    reset_row,
    setting_reward,
)
from recode_lib.rewards import Need, RewardConfigError, RewardResources, build_reward, reward_needs
from recode_lib.rewards.execution import SandboxRunner
from recode_lib.rewards.process import load_scorer
from recode_lib.sandbox.checker import require_checkers
from recode_lib.sandbox.config import SandboxConfig
from recode_lib.sandbox.tools import ToolLimits
from recode_lib.training.lora import is_peft, lora_config, merged_model
from recode_lib.training.recipe_check import check_field
from recode_lib.training.sampling_copy import sampling_copy_class
from recode_lib.training.shared_generations import shared_generations_class
from recode_lib.training.vllm_sync import cpu_colocate_engine, patch_colocate_sync

if TYPE_CHECKING:
    from recode_lib.training.config import RecodeGRPOConfig

RECIPES_DIR = Path(__file__).resolve().parent / "recipes"


def config_fields() -> dict[str, dataclasses.Field]:
    """Every field a recipe may set: those of recode_lib.training.config.RecodeGRPOConfig
    (trl.GRPOConfig's and the project's), by name."""
    from recode_lib.training.config import INIT_FIELDS

    return INIT_FIELDS


def field_default(f: dataclasses.Field):
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def make_recipe(where: str, values: Mapping[str, Any]) -> RecodeGRPOConfig:
    """A recipe: RecodeGRPOConfig(build=False, **values), unbuilt (no accelerator state, no
    derived field; grpo_config builds it in the training process), its `set_fields` naming
    `values`. Each field is checked by name and kind (ValueError starting with `where`, with
    the nearest name of an unknown one). `bf16: auto` is resolved here, on the machine making
    it (recode_lib.core.bf16.resolve_bf16): the run, its run.json and its fingerprint carry the bool
    it became. So is `generation_precision: auto` (recode_lib.core.bf16.resolve_precision): a LoRA
    run without vLLM samples from a merged bfloat16 copy where the machine computes bf16
    natively, else from a merged float32 one; a run with vLLM or without LoRA samples as TRL
    does (native)."""
    from recode_lib.training.config import RecodeGRPOConfig

    known = config_fields()
    unknown = sorted(set(values) - set(known))
    if unknown:
        hints = {k: difflib.get_close_matches(k, known, n=1) for k in unknown}
        hint = "; ".join(f"{k!r}: did you mean {v[0]!r}?" for k, v in hints.items() if v)
        raise ValueError(
            f"{where}: unknown recipe field(s) {unknown} (a recipe sets fields "
            "of trl.GRPOConfig and recode_lib.training.config.RecodeGRPOConfig)"
            + (f"; {hint}" if hint else "")
        )
    for name, value in values.items():  # types: a misspelt value is named here too
        why = check_field(name, value)
        if why:
            raise ValueError(f"{where}: {why}")
    values = dict(values)
    use_cpu = bool(values.get("use_cpu", field_default(known["use_cpu"])))
    if "bf16" in values:  # "auto": by this machine (recode_lib.core.bf16), a bool from here on
        try:
            values["bf16"] = resolve_bf16(values["bf16"], use_cpu=use_cpu)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    if values.get("generation_precision") == AUTO:  # by this machine, like bf16
        if (
            values.get("use_vllm")
            or values.get("use_transformers_continuous_batching")
            or not values.get("lora")
        ):
            values["generation_precision"] = "native"  # vLLM samples; no adapter to merge
        else:
            values["generation_precision"] = resolve_precision(AUTO, copy=True, use_cpu=use_cpu)
    recipe = RecodeGRPOConfig(build=False, **values)
    recipe.set_fields = tuple(values)
    return recipe


def recipe_values(recipe: RecodeGRPOConfig) -> dict[str, Any]:
    """The fields a recipe sets: its set_fields, and any field given another value than its
    default since (an assignment), by name."""
    known = config_fields()
    return {
        name: getattr(recipe, name)
        for name, f in known.items()
        if name in recipe.set_fields or getattr(recipe, name) != field_default(f)
    }


def recipe_dict(recipe: RecodeGRPOConfig) -> dict[str, Any]:
    """What identifies a run: the fields every run records (config.RECORDED_FIELDS: the
    project's, with their defaults) and every field the recipe sets (recipe_values). It is
    what load_recipe reads back to an equal recipe, run.json records and run_fingerprint
    hashes."""
    from recode_lib.training.config import RECORDED_FIELDS

    return {**{k: getattr(recipe, k) for k in RECORDED_FIELDS}, **recipe_values(recipe)}


def replace_fields(recipe: RecodeGRPOConfig, **values) -> RecodeGRPOConfig:
    """A new recipe: `recipe` with `values` set too, checked as make_recipe checks them
    (dataclasses.replace would build it)."""
    return make_recipe(f"recipe {recipe.name!r}", {**recipe_values(recipe), **values})


def validate_recipe(recipe: RecodeGRPOConfig) -> RecodeGRPOConfig:
    """Checks that need no accelerator (TRL's own run when grpo_config builds the config);
    returns the recipe."""
    where = f"recipe {recipe.name!r}"
    if recipe.domain not in ROWS:
        raise ValueError(f"{where}: domain must be one of {sorted(ROWS)}, got {recipe.domain!r}")
    if recipe.num_generations < 2:
        raise ValueError(f"{where}: num_generations must be >= 2 (GRPO compares a group)")
    spg = generation_steps(recipe)
    if (recipe.per_device_train_batch_size * spg) % recipe.num_generations:
        # TRL's rule: one generation batch (micro-batch x steps_per_generation, default the
        # gradient accumulation) holds whole groups; a micro-batch may hold part of one
        raise ValueError(
            f"{where}: per_device_train_batch_size "
            f"({recipe.per_device_train_batch_size}, completions per micro-batch) x "
            f"steps_per_generation ({spg}) must be a multiple of num_generations "
            f"({recipe.num_generations}): a generation batch holds whole groups"
        )
    if recipe.vllm_mode not in ("colocate", "server"):
        raise ValueError(f"{where}: vllm_mode must be colocate or server, got {recipe.vllm_mode!r}")
    if not recipe.rewards:
        raise ValueError(f"{where}: no rewards")
    for r in recipe.rewards:
        if not isinstance(r, dict) or "name" not in r:
            raise ValueError(f"{where}: each reward must be a mapping with a 'name', got {r!r}")
        try:
            needs = reward_needs(r["name"])
        except RewardConfigError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if Need.REWARD_MODEL in needs and ("scorer" in r or "rm_path" in r):
            raise ValueError(
                f"{where}: reward {r['name']!r} gets the reward model from the "
                "recipe's rm_path and rm_* fields, not from its own options"
            )
    if not isinstance(recipe.allow_in_process_tests, bool):
        raise ValueError(
            f"{where}: allow_in_process_tests must be true or false, got "
            f"{recipe.allow_in_process_tests!r}"
        )
    if recipe.setting not in ("single", "tool", "agentic"):
        raise ValueError(
            f"{where}: setting must be single, tool or agentic, got {recipe.setting!r}"
        )
    if recipe.setting != "single" and recipe.domain != "code":
        raise ValueError(f"{where}: the {recipe.setting} setting needs domain: code")
    if recipe.generation_precision not in PRECISIONS:
        raise ValueError(
            f"{where}: generation_precision must be one of {list(PRECISIONS)}, "
            f"got {recipe.generation_precision!r}"
        )
    if recipe.generation_precision != "native":
        if recipe.use_vllm or recipe.use_transformers_continuous_batching:
            raise ValueError(
                f"{where}: generation_precision {recipe.generation_precision!r} "
                "replaces TRL's transformers generation; with use_vllm or "
                "use_transformers_continuous_batching the sampler is theirs"
            )
        if recipe.generation_precision == "int8" and not recipe.use_cpu:
            raise ValueError(
                f"{where}: generation_precision 'int8' (torch dynamic "
                "quantization) runs on the CPU: set use_cpu: true, or use "
                "bfloat16 or vLLM on an accelerator"
            )
    if recipe.lora is not None:
        try:
            lora_config(recipe.lora)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    try:
        recipe.rm_placement_config().validate()
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return recipe


def build_config(recipe: RecodeGRPOConfig, output_dir: str | Path, **overrides):
    """The built RecodeGRPOConfig of this recipe writing to output_dir (TRL validates it here and
    initialises the accelerator state: call it in the training process); the recipe itself is
    left as it was."""
    return dataclasses.replace(
        copy.deepcopy(recipe), build=True, **overrides, output_dir=str(output_dir)
    )


def load_recipe(name_or_path: str | Path = "cg_grpo_smoke", **overrides) -> RecodeGRPOConfig:
    """The recipe `name_or_path` (a name in recipes/ or a YAML path) with `overrides` applied,
    unbuilt (make_recipe) and checked (validate_recipe); ValueError naming the file and any
    unknown field, FileNotFoundError for a missing recipe."""
    import yaml

    p = Path(name_or_path)
    path = p if p.suffix in (".yaml", ".yml") or p.exists() else RECIPES_DIR / f"{p}.yaml"
    if not path.is_file():
        known = sorted(x.stem for x in RECIPES_DIR.glob("*.yaml"))
        raise FileNotFoundError(f"recipe {name_or_path!r} not found ({path}); known: {known}")
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a recipe must be a mapping of GRPO config fields")
    data.setdefault("name", path.stem)
    data.update(overrides)
    return validate_recipe(make_recipe(str(path), data))


def give_stop_ids(funcs, stop_ids: list) -> None:
    """Give every reward function that applies the truncation rule (rewards.base.
    RewardFunction.stop_token_ids, also through a setting's wrapper, environments.settings.
    SettingReward) the trainer's stop ids: a completion that hit max_completion_length is then
    a format error, as evaluation files a response cut at the token limit."""
    for f in funcs:
        if hasattr(f, "stop_token_ids"):
            f.stop_token_ids = stop_ids


def code_row(p, where: str, reasoning: bool = True) -> dict:
    """The training row of a code problem: the row an environment is reset with, as evaluation
    gives it (recode_lib.environments.reset_row: the prompt, problem_id, starter_code,
    entry_point, and public_examples as JSON text, a dataset column), so a policy trains in
    the workspace it is evaluated in; and `problem`, the Problem itself as JSON text
    (Problem.to_json), which the code rewards read back (recode_lib.rewards.base.row_problems),
    so they assemble and judge exactly what evaluation does. ValueError when it has no tests."""
    tests = getattr(p, "tests", None)
    if not tests or (tests.get("kind") != "script" and not tests.get("cases")):
        raise ValueError(f"{where} has no tests: code rewards need them")
    row = reset_row(p, reasoning)
    row["public_examples"] = json.dumps(row["public_examples"])
    row["problem"] = Problem.from_json(p, where).to_json()
    return row


def math_row(p, where: str, reasoning: bool = True) -> dict:
    """The training row of a math problem: its prompt and gold `answer` (ValueError without)."""
    if not getattr(p, "answer", None):
        raise ValueError(f"{where} has no answer: math rewards need one")
    return {"prompt": math_messages(p), "answer": str(p.answer), "problem_id": p.id}


ROWS = {"code": code_row, "math": math_row}  # a recipe's `domain` -> its row builder


def build_dataset(problems, domain: str = "code", reasoning: bool = True):
    """A datasets.Dataset with the columns the rewards read (ROWS[domain] per problem); raises
    naming a problem without tests (code) or without an answer (math)."""
    from datasets import Dataset

    if domain not in ROWS:
        raise ValueError(f"domain must be one of {sorted(ROWS)}, got {domain!r}")
    row = ROWS[domain]
    rows = [
        row(p, f"problem {getattr(p, 'id', f'#{i}')!r} (row {i})", reasoning)
        for i, p in enumerate(problems)
    ]
    if not rows:
        raise ValueError("no problems to train on")
    return Dataset.from_list(rows)


def reward_sandbox_config(recipe: RecodeGRPOConfig):
    """The rewards' SandboxConfig: None (the default) unless the recipe asks for the testlib
    checkers' exact-match fallback (checker_fallback)."""
    return SandboxConfig(checker_fallback=True) if recipe.checker_fallback else None


def reward_resources(recipe: RecodeGRPOConfig, runner=None, trainer_device=None):
    """What the recipe's rewards may need, each made on first need: the sandbox runner, and
    the reward model at recipe.rm_path placed as the rm_* fields say (on trainer_device for
    rm_placement: trainer)."""

    def sandbox():
        return (
            runner
            if runner is not None
            else SandboxRunner(
                workers=recipe.sandbox_workers,
                batch_timeout_s=recipe.reward_batch_timeout_s,
                allow_in_process_tests=recipe.allow_in_process_tests,
                sandbox_config=reward_sandbox_config(recipe),
            )
        )

    def reward_model():
        return load_scorer(
            recipe.rm_path, recipe.rm_placement_config(), trainer_device=trainer_device
        )

    return RewardResources({Need.SANDBOX: sandbox, Need.REWARD_MODEL: reward_model})


def build_rewards(recipe: RecodeGRPOConfig, runner=None, *, resources=None):
    """(reward functions, weights) from recipe.rewards, through the reward registry: each
    reward gets what its entry needs from `resources` (default: reward_resources(recipe,
    runner)), one sandbox runner and one reward model shared by all."""
    resources = resources or reward_resources(recipe, runner)
    funcs, weights = [], []
    for spec in recipe.rewards:
        opts = {k: v for k, v in spec.items() if k not in ("name", "weight")}
        funcs.append(build_reward(spec["name"], resources, **opts))
        weights.append(float(spec.get("weight", 1.0)))
    return funcs, weights


def tool_limits(recipe: RecodeGRPOConfig):
    """The sandbox limits of one tool call in the recipe's tool/agentic setting."""
    return ToolLimits(
        time_limit_s=recipe.tool_time_limit_s,
        memory_mb=recipe.tool_memory_mb,
        max_output_chars=recipe.tool_max_output_chars,
    )


def setting_parts(recipe: RecodeGRPOConfig, funcs: list, tok):
    """(reward functions, GRPOTrainer keyword arguments) for the recipe's setting: single-turn
    as is; tool/agentic: each reward judges the rollout's final answer
    (recode_lib.environments.settings), TRL's environment_factory runs the environment, and
    the tokenizer gets a tool-calling chat template (recode_lib.environments.chat)."""
    if recipe.setting == "single":
        return funcs, {}
    prepare_tool_tokenizer(tok)
    factory = environment_factory(
        recipe.setting, max_calls=recipe.max_tool_calls, limits=tool_limits(recipe)
    )
    return [setting_reward(f, recipe.setting) for f in funcs], {"environment_factory": factory}


def grpo_config(recipe: RecodeGRPOConfig, output_dir: str | Path):
    """build_config(recipe, output_dir) with the reward weights of recipe.rewards and the policy
    loaded in recode_lib.core.models.training_dtype (float32: bf16 recipes compute in bf16 autocast,
    or DeepSpeed's bf16 optimizer, over fp32 master weights; a recipe's model_init_kwargs asking
    for a half dtype raises)."""
    weights = [float(r.get("weight", 1.0)) for r in recipe.rewards]
    init = recipe.model_init_kwargs
    if isinstance(init, str):  # TRL also takes it as a JSON string
        init = json.loads(init)
    try:
        init = trainer_model_init_kwargs(init, bf16=bool(recipe.bf16))
    except ValueError as exc:
        raise ValueError(f"recipe {recipe.name!r}: {exc}") from None
    return build_config(recipe, output_dir, reward_weights=weights, model_init_kwargs=init)


@dataclass
class TrainResult:
    output_dir: Path
    final_dir: Path
    metrics_path: Path
    resumed_from: str | None
    skipped: bool  # True when final/ already existed


# recipe fields that change where curves are logged and how often, never the trained weights
LOGGING_FIELDS = (
    "report_to",
    "logging_steps",
    "log_completions",
    "num_completions_to_print",
    "logging_dir",
    "run_name",
    "disable_tqdm",
    "keep_checkpoints",
)
# recipe fields that change how a run computes (its time, its memory), never what it computes:
# sharing an identical draw, reloading the same RM files for each scoring call
SPEED_FIELDS = ("share_first_generations", "rm_resident")


def upstream_stamps(recipe) -> dict:
    """{field: stamp} of the local folders a run reads weights from, its `model` and `rm_path`
    (recode_lib.core.models.model_stamp: file names, sizes, mtimes), so a start model or reward
    model
    retrained in place (00's SFT start, 02's RM re-run) retires the runs trained on the old one
    instead of letting them be skipped as done. Hub ids and aliases have none."""
    out = {}
    for key in ("model", "rm_path"):
        value = getattr(recipe, key, None)
        stamp = model_stamp(value) if value else None
        if stamp:
            out[key] = stamp
    return out


def run_fingerprint(recipe: RecodeGRPOConfig, problems) -> str:
    """What a trained run depends on: every recipe field except LOGGING_FIELDS (switching the
    tracker keeps a finished run) and SPEED_FIELDS (sharing a draw or reloading the RM changes
    no weight), every training problem (the same after the YAML/jsonl round trip of the
    accelerate launcher) and the weights of its local start and reward models (upstream_stamps;
    runs of hub ids and aliases keep the fingerprint they had before)."""
    fields = {
        k: v
        for k, v in recipe_dict(recipe).items()
        if k not in LOGGING_FIELDS and k not in SPEED_FIELDS
    }
    parts = [fields, [p.to_dict() if hasattr(p, "to_dict") else p for p in problems]]
    stamps = upstream_stamps(recipe)
    return fingerprint(*parts, stamps) if stamps else fingerprint(*parts)


def retire_stale_run(output_dir: str | Path, fingerprint: str) -> Path | None:
    """When output_dir holds a run of another recipe or problem set (its fingerprint.json
    differs), move it aside to <output_dir>.stale-<k> (printed; nothing is deleted) so the run
    starts clean instead of skipping or resuming stale work. Records the fingerprint; returns
    where an old run went, or None. A non-empty folder without fingerprint.json (whose origin
    is unknown) is moved aside too."""
    out = Path(output_dir)
    f = out / "fingerprint.json"
    moved = None
    unknown = out.is_dir() and not f.is_file() and any(out.iterdir())
    if unknown or (f.is_file() and read_json(f).get("fingerprint") != fingerprint):
        moved = set_aside(out)
        why = "an unfingerprinted run" if unknown else "a run of another recipe or problem set"
        print(f"{out} holds {why}: moved it to {moved}", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    if not f.is_file():
        write_json_atomic(f, {"fingerprint": fingerprint})
    return moved


def final_complete(output_dir: str | Path) -> bool:
    return (Path(output_dir) / "final" / ".complete").is_file()


def generation_steps(recipe) -> int:
    """Micro-batches one generation batch feeds: TRL's steps_per_generation, by default the
    gradient accumulation steps."""
    return int(getattr(recipe, "steps_per_generation", None) or recipe.gradient_accumulation_steps)


def prompts_per_step(recipe: RecodeGRPOConfig, num_processes: int = 1) -> int:
    """Training prompts one generation batch takes: per_device_train_batch_size x processes x
    steps_per_generation (default gradient_accumulation_steps) / num_generations. TRL's
    sampler drops an incomplete batch, so fewer problems than this train for 0 steps."""
    completions = recipe.per_device_train_batch_size * int(num_processes) * generation_steps(recipe)
    return -(-completions // recipe.num_generations)


def check_enough_problems(
    recipe: RecodeGRPOConfig, n_problems: int, num_processes: int = 1
) -> None:
    """ValueError when n_problems cannot fill one optimizer step (GRPO would silently train
    0 steps and save the start model as final/)."""
    need = prompts_per_step(recipe, num_processes)
    if n_problems < need:
        raise ValueError(
            f"recipe {recipe.name!r}: one step takes {need} training prompts "
            f"(per_device_train_batch_size {recipe.per_device_train_batch_size} x "
            f"{num_processes} process(es) x gradient_accumulation_steps "
            f"{recipe.gradient_accumulation_steps} / num_generations {recipe.num_generations}) "
            f"but there are {n_problems}: TRL would train 0 steps; use more problems or a "
            "smaller batch"
        )


def last_complete_checkpoint(output_dir: str | Path) -> str | None:
    """The newest checkpoint-<N> that was saved to the end (trainer_state.json is written
    last); a torn one (the run was killed while saving) is renamed <name>.torn-<k> and
    skipped, so a re-run resumes from the one before instead of failing to load it."""
    out = Path(output_dir)
    found = sorted(
        (int(m.group(1)), d)
        for d in out.iterdir()
        if d.is_dir() and (m := re.fullmatch(r"checkpoint-(\d+)", d.name))
    )
    for step, d in reversed(found):
        if (d / "trainer_state.json").is_file():
            return str(d)
        k = 0
        while (out / f"torn-step-{step}.{k}").exists():
            k += 1
        d.rename(out / f"torn-step-{step}.{k}")
        print(
            f"{d} was not saved to the end (killed while saving?): moved it to "
            f"torn-step-{step}.{k}",
            file=sys.stderr,
        )
    return None


def trim_metrics(metrics_path: Path, step: int) -> int:
    """Drop metrics records logged after `step` (by a run killed before its next checkpoint:
    the resumed run logs those steps again); returns how many were dropped."""
    if not metrics_path.is_file():
        return 0
    rows = read_jsonl(metrics_path, allow_torn_tail=True)
    keep = [r for r in rows if int(r.get("step", 0)) <= step]
    if len(keep) != len(rows) or not metrics_path.read_bytes().endswith(b"\n"):
        write_jsonl_atomic(metrics_path, keep)
    return len(rows) - len(keep)


def train(
    recipe: RecodeGRPOConfig, problems, output_dir: str | Path, *, resume: bool = True
) -> TrainResult:
    """Train (or resume, or skip when done); returns where the final checkpoint and metrics are."""
    from recode_lib.training.callbacks import (
        MetricsJsonlCallback,
        NoEndCheckpointCallback,
        timed_trainer_class,
    )

    validate_recipe(recipe)
    out = Path(output_dir)
    final = out / "final"
    metrics = out / "metrics.jsonl"
    retire_stale_run(out, run_fingerprint(recipe, problems))
    if final_complete(out):
        return TrainResult(out, final, metrics, None, True)
    out.mkdir(parents=True, exist_ok=True)
    dataset = build_dataset(problems, recipe.domain, recipe.reasoning)
    args = grpo_config(recipe, out)
    check_enough_problems(recipe, len(dataset), args.world_size)
    runner = SandboxRunner(
        workers=recipe.sandbox_workers,
        batch_timeout_s=recipe.reward_batch_timeout_s,
        allow_in_process_tests=recipe.allow_in_process_tests,
        sandbox_config=reward_sandbox_config(recipe),
    )
    if recipe.domain == "code":  # fail before loading anything, not at the first reward
        judged = [Problem.from_json(v) for v in dataset["problem"]]  # what the rewards read
        for p in judged:
            runner.check_tests(p.tests, f"problem {p.id!r}")
        require_checkers(
            [p.tests for p in judged], recipe.checker_fallback, f"recipe {recipe.name!r}"
        )  # the compiler preflight
    resources = reward_resources(recipe, runner, trainer_device=args.device)
    funcs, weights = build_rewards(recipe, resources=resources)
    if recipe.use_cpu and recipe.cpu_threads:
        import torch

        torch.set_num_threads(int(recipe.cpu_threads))
    model_path = resolve_model(recipe.model)
    tok = load_tokenizer(model_path)
    last = last_complete_checkpoint(out) if resume and out.is_dir() else None
    trim_metrics(
        metrics, int(Path(last).name.split("-")[1]) if last else 0
    )  # before the store loads
    funcs, setting_kw = setting_parts(recipe, funcs, tok)
    cb = MetricsJsonlCallback(metrics, runner=runner, run_name=recipe.name)
    if recipe.lora:
        setting_kw["peft_config"] = lora_config(recipe.lora)
    colocate = bool(recipe.use_vllm) and recipe.vllm_mode == "colocate"
    trainer_class = shared_generations_class(sampling_copy_class(timed_trainer_class()))
    with cpu_colocate_engine() if colocate else contextlib.nullcontext():
        trainer = trainer_class(
            model=model_path,
            reward_funcs=funcs,
            args=args,
            train_dataset=dataset,
            processing_class=tok,
            callbacks=[cb] if recipe.keep_checkpoints else [cb, NoEndCheckpointCallback()],
            **setting_kw,
        )
    if colocate:
        patch_colocate_sync(trainer)  # vLLM's CPU build: TRL's per-tensor sync cannot load
    trainer.generation_precision = recipe.generation_precision
    trainer.share_first_generations = bool(recipe.share_first_generations)
    cb.trainer = trainer
    give_stop_ids(funcs, [*trainer.eos_token_ids, tok.pad_token_id])  # TRL's truncation rule
    if recipe.rm_zero3 and Need.REWARD_MODEL in resources.made:
        if not resources.made[Need.REWARD_MODEL].shard(trainer.accelerator):
            raise ValueError(
                f"recipe {recipe.name!r}: rm_zero3 needs a DeepSpeed ZeRO-3 "
                "accelerate config (configs/accelerate/zero3.yaml)"
            )
    write_json_atomic(
        out / "run.json",
        provenance(recipe.seed, recipe_dict(recipe))
        | {"model_path": model_path, "resumed_from": last, "n_problems": len(dataset)},
    )
    try:
        trainer.train(resume_from_checkpoint=last)
    except BaseException:
        if trainer.state.global_step > 0:
            print(
                f"training failed at step {trainer.state.global_step}; saving a checkpoint in "
                f"{out} before re-raising",
                file=sys.stderr,
            )
            try:
                save_checkpoint_now(trainer)
            except Exception as exc:  # keep the original error
                print(f"(saving the checkpoint failed too: {exc})", file=sys.stderr)
        raise
    try:
        save_final(trainer, tok, final)
    except BaseException:
        if not recipe.keep_checkpoints:  # the last step's checkpoint was not written: write it
            print(f"writing {final} failed; saving a checkpoint in {out}", file=sys.stderr)
            try:
                save_checkpoint_now(trainer)
            except Exception as exc:  # keep the original error
                print(f"(saving the checkpoint failed too: {exc})", file=sys.stderr)
        raise
    if not recipe.keep_checkpoints and trainer.accelerator.is_main_process:
        drop_checkpoints(out)
    del trainer, cb, funcs, resources, setting_kw  # the trainer and its callback form a cycle
    release_memory()  # the next run in this process (a notebook's next variant) starts clean
    return TrainResult(out, final, metrics, last, False)


def drop_checkpoints(output_dir: str | Path) -> list[Path]:
    """Remove <output_dir>/checkpoint-* of a run whose final/ is complete (nothing when it is
    not: those are what an unfinished run resumes from); returns what was removed."""
    out = Path(output_dir)
    if not final_complete(out):
        return []
    gone = sorted(d for d in out.glob("checkpoint-*") if d.is_dir())
    for d in gone:
        shutil.rmtree(d)
    return gone


def save_checkpoint_now(trainer) -> Path:
    """<output_dir>/checkpoint-<global_step> that resume_from_checkpoint accepts, through public
    APIs only: the weights (Trainer.save_model), the optimizer and scheduler (their state_dicts
    under transformers' file names, or the DeepSpeed engine's own save_checkpoint) and
    trainer_state.json (TrainerState.save_to_json). RNG states are not saved (a resumed run
    draws new samples; transformers warns)."""
    import torch
    from transformers.trainer import OPTIMIZER_NAME, SCHEDULER_NAME, TRAINER_STATE_NAME
    from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

    ckpt = Path(trainer.args.output_dir) / f"{PREFIX_CHECKPOINT_DIR}-{trainer.state.global_step}"
    trainer.save_model(str(ckpt))
    if trainer.is_deepspeed_enabled:
        trainer.model_wrapped.save_checkpoint(str(ckpt))
    elif trainer.args.should_save:
        if trainer.optimizer is not None:
            torch.save(trainer.optimizer.state_dict(), ckpt / OPTIMIZER_NAME)
        if trainer.lr_scheduler is not None:
            torch.save(trainer.lr_scheduler.state_dict(), ckpt / SCHEDULER_NAME)
    if trainer.args.should_save:
        trainer.state.save_to_json(str(ckpt / TRAINER_STATE_NAME))
    return ckpt


def save_final(trainer, tokenizer, final: Path) -> None:
    """Write <output_dir>/final atomically (a temp folder renamed) with a .complete marker; a
    LoRA run's final/ is the full model with the adapter merged in (training.lora)."""
    tmp = final.with_name(".final.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    if is_peft(trainer.model):  # LoRA: the merged full model, loadable like any checkpoint
        if trainer.accelerator.is_main_process:
            merged_model(trainer.accelerator.unwrap_model(trainer.model)).save_pretrained(str(tmp))
    else:
        trainer.save_model(str(tmp))
    if trainer.accelerator.is_main_process:
        tokenizer.save_pretrained(str(tmp))
        (tmp / ".complete").write_text(json.dumps({"global_step": trainer.state.global_step}))
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
