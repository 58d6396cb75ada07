"""CG-GRPO and strictness-sweep training on TRL's GRPOTrainer, from YAML recipes.

    from recode_lib.training.grpo import load_recipe, train
    recipe = load_recipe("cg_grpo_smoke", model="smollm2", rewards=[{"name": "gated"}],
                         rm_path="runs/smoke/02_reward_model/rm")
    result = train(recipe, problems, "runs/smoke/04_cg_grpo/gated")
    result.final_dir       # <output_dir>/final: a Hugging Face folder (model + tokenizer)
    result.metrics_path    # <output_dir>/metrics.jsonl: one line per logged step
    # multi-GPU: recode_lib.training.launch.launch(recipe, problems, out, launcher="accelerate")

Recipes live in recode_lib/training/recipes/<name>.yaml: flat YAML whose keys are fields of
trl.GRPOConfig (any of them, passed through unchanged) or of the project
(recode_lib.training.config.RecodeGRPOConfig: model, domain, rewards, rm_path, rm_placement,
benchmark, ...). `load_recipe` accepts a name or a path and keyword overrides and returns an
unbuilt `GRPORecipe`; an unknown key raises naming the file and the key. The training process
builds it (`recipe.to_config(output_dir)`: TRL validates it and sets up the accelerator there).
Rewards are built from the registry (recode_lib.rewards): each gets what its entry needs (the
sandbox runner, the reward model placed per rm_placement / rm_dtype / rm_batch_size /
rm_endpoint, see recode_lib.process_reward.placement), each made once per run. Code rewards
refuse problems whose tests run in the submission's own process (inline unittest-style script
tests: sandbox trust "in_process", forgeable by the submission) — `train` raises naming the
first such problem before loading anything — unless the recipe sets
`allow_in_process_tests: true`.
The policy (full or LoRA) is loaded by TRL from its path in float32 (grpo_config sets
model_init_kwargs through recode_lib.models.trainer_model_init_kwargs): `bf16: true` is bf16
autocast over fp32 master weights in one process, and DeepSpeed's bf16 optimizer (which keeps
fp32 master partitions) under ZeRO-3; pure bf16 weights would round lr-1e-6 steps away.
Without vLLM, TRL samples completions with the live policy; a recipe's `generation_precision`
(bfloat16 | int8) samples them from a merged copy of the policy in that precision instead,
rebuilt after each optimizer step (recode_lib.training.sampling_copy: faster on a CPU, slightly
off-policy, as vLLM's bf16 sampler is).
Prompts are `recode_lib.prompts.build_messages(problem)` (code) or
`recode_lib.math_answers.math_messages(problem)` (math): the same format evaluation uses.
`train` resumes from the last `checkpoint-*` in output_dir, skips a run whose `final/` is
complete (both only when output_dir was trained on the same recipe and problems: otherwise the
old run is moved aside to <output_dir>.stale-<k>, see retire_stale_run), and if training raises
it first saves a checkpoint through public Trainer APIs (save_checkpoint_now; a crash never
loses the steps done) and then re-raises. The local metrics file comes from
recode_lib.training.callbacks.

Paper profile (GPUs; needs `pip install -e .[gpu]`): vLLM generation and DeepSpeed ZeRO-3:

    # colocate: vLLM shares each training GPU (recipe: use_vllm: true, vllm_mode: colocate)
    accelerate launch --config_file configs/accelerate/zero3.yaml --num_processes 8 \\
        -m recode_lib.cli.grpo --recipe cg_grpo_paper --output-dir runs/paper/04_cg_grpo/gated \\
        --set rm_path=runs/paper/02_reward_model/rm     # RM in bf16 on each rank's GPU
    # the RM served from its own GPU instead (recipe: rm_placement: endpoint):
    CUDA_VISIBLE_DEVICES=7 python -m recode_lib.process_reward.serving \
        --rm runs/paper/02_reward_model/rm --device cuda:0 --port 8008 &
    ... --num_processes 7 ... --set rm_placement=endpoint --set rm_endpoint=http://127.0.0.1:8008
    # server: one GPU serves vLLM, seven train (recipe: vllm_mode: server)
    CUDA_VISIBLE_DEVICES=7 trl vllm-serve --model Qwen/Qwen2.5-Coder-7B-Instruct &
    CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6 accelerate launch --config_file \\
        configs/accelerate/zero3.yaml --num_processes 7 -m recode_lib.cli.grpo \\
        --recipe cg_grpo_paper --set vllm_mode=server --output-dir runs/paper/04_cg_grpo/gated

On vLLM's CPU build (`use_cpu: true, use_vllm: true, vllm_mode: colocate`, one process with
RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set) the trainer's engine gets the CPU engine defaults
(float32, eager, an explicit KV-cache size) and TRL's weight sync is wrapped to load through
vLLM's in-place reload (recode_lib.training.vllm_sync; tests/test_vllm_real_grpo.py runs two
steps); server mode's weight sync needs NCCL (tests/test_vllm_real_server.py).

It does not generate for evaluation (recode_lib.evaluation does) and imports vllm/deepspeed
only through TRL/accelerate when a recipe asks for them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import functools
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from recode_lib.bf16 import AUTO, resolve_bf16, resolve_precision
from recode_lib.data.schema import Problem
from recode_lib.environments import (
    environment_factory,
    prepare_tool_tokenizer,
    reset_row,
    setting_reward,
)
from recode_lib.jsonl import read_json, read_jsonl, write_json_atomic, write_jsonl_atomic
from recode_lib.math_answers import math_messages
from recode_lib.memory import release_memory
from recode_lib.models import (
    PRECISIONS,
    load_tokenizer,
    model_stamp,
    resolve_model,
    trainer_model_init_kwargs,
)
from recode_lib.paths import set_aside
from recode_lib.process_reward.placement import RMPlacement
from recode_lib.provenance import fingerprint, provenance
from recode_lib.rewards import Need, RewardConfigError, RewardResources, build_reward, reward_needs
from recode_lib.rewards.execution import SandboxRunner
from recode_lib.rewards.process import load_scorer
from recode_lib.sandbox.checker import require_checkers
from recode_lib.sandbox.config import SandboxConfig
from recode_lib.sandbox.tools import ToolLimits
from recode_lib.training.lora import is_peft, lora_config, merged_model
from recode_lib.training.recipe_fields import check_field
from recode_lib.training.sampling_copy import sampling_copy_class
from recode_lib.training.vllm_sync import cpu_colocate_engine, patch_colocate_sync

RECIPES_DIR = Path(__file__).resolve().parent / "recipes"
# project fields added after runs were fingerprinted: to_dict leaves them out while unset (at
# their default), so runs trained before them keep their fingerprint
OPTIONAL_FIELDS = (
    "lora",
    "allow_in_process_tests",
    "generation_precision",
    "rproc_scale",
    "checker_fallback",
    "keep_checkpoints",
)


def config_fields() -> dict[str, dataclasses.Field]:
    """Every field a recipe may set: those of recode_lib.training.config.RecodeGRPOConfig
    (trl.GRPOConfig's and the project's), by name."""
    from recode_lib.training.config import RecodeGRPOConfig

    return {f.name: f for f in dataclasses.fields(RecodeGRPOConfig) if f.init}


def field_default(f: dataclasses.Field):
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


class GRPORecipe:
    """A GRPO run, unbuilt: the fields of RecodeGRPOConfig (trl.GRPOConfig plus the project's)
    that the recipe sets, checked by name. Reading a field gives the value the run will get
    (the recipe's, else RecodeGRPOConfig's default): `recipe.max_steps`, `recipe.rewards`.
    `to_config(output_dir)` builds the config the trainer gets; `to_dict()` is what identifies
    the run (the project's fields and every field the recipe sets, see PROJECT_FIELDS);
    `replace(**fields)` returns a changed copy. Recipes are values: set fields through
    load_recipe overrides or replace, not by assignment. `bf16: auto` is resolved when the
    recipe is built, on the machine building it (recode_lib.bf16.resolve_bf16): the run, its
    run.json and its fingerprint carry the bool it became. So is `generation_precision: auto`
    (recode_lib.bf16.resolve_precision): a LoRA run without vLLM samples from a merged bfloat16
    copy where the machine computes bf16 natively, else from a merged float32 one; a run with
    vLLM or without LoRA samples as TRL does (native)."""

    __slots__ = ("values", "source")

    def __init__(self, source: str = "recipe", **values):
        known = config_fields()
        unknown = sorted(set(values) - set(known))
        if unknown:
            hints = {k: difflib.get_close_matches(k, known, n=1) for k in unknown}
            hint = "; ".join(f"{k!r}: did you mean {v[0]!r}?" for k, v in hints.items() if v)
            raise ValueError(
                f"{source}: unknown recipe field(s) {unknown} (a recipe sets fields "
                "of trl.GRPOConfig and recode_lib.training.config.RecodeGRPOConfig)"
                + (f"; {hint}" if hint else "")
            )
        for name, value in values.items():  # types: a misspelt value is named here too
            why = check_field(name, value)
            if why:
                raise ValueError(f"{source}: {why}")
        values = dict(values)
        if "bf16" in values:  # "auto": by this machine (recode_lib.bf16), a bool from here on
            try:
                values["bf16"] = resolve_bf16(
                    values["bf16"],
                    use_cpu=bool(values.get("use_cpu", field_default(known["use_cpu"]))),
                )
            except ValueError as exc:
                raise ValueError(f"{source}: {exc}") from None
        if values.get("generation_precision") == AUTO:  # by this machine, like bf16
            use_cpu = bool(values.get("use_cpu", field_default(known["use_cpu"])))
            if (
                values.get("use_vllm")
                or values.get("use_transformers_continuous_batching")
                or not values.get("lora")
            ):
                values["generation_precision"] = "native"  # vLLM samples; no adapter to merge
            else:
                values["generation_precision"] = resolve_precision(AUTO, copy=True, use_cpu=use_cpu)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "source", source)

    def __getattr__(self, key):
        values = object.__getattribute__(self, "values")
        if key in values:
            return values[key]
        known = config_fields()
        if key in known:
            return field_default(known[key])
        raise AttributeError(f"a GRPO recipe has no field {key!r}")

    def __setattr__(self, key, value):
        raise AttributeError(f"recipes are values: use recipe.replace({key}=...)")

    def __eq__(self, other):
        return isinstance(other, GRPORecipe) and self.to_dict() == other.to_dict()

    def __repr__(self):
        return f"GRPORecipe({self.values!r})"

    def __reduce__(self):  # copy and pickle through the constructor (assignment is refused)
        return (functools.partial(GRPORecipe, self.source, **self.values), ())

    def replace(self, **values) -> GRPORecipe:
        return GRPORecipe(self.source, **{**self.values, **values})

    def to_dict(self) -> dict:
        """The project's fields (with defaults) and every field the recipe sets: what
        load_recipe reads back to an equal recipe, and what fingerprints the run."""
        from recode_lib.training.config import PROJECT_FIELDS

        out = {**{k: getattr(self, k) for k in PROJECT_FIELDS}, **self.values}
        known = config_fields()
        for k in OPTIONAL_FIELDS:  # unset: left out, so runs trained before it keep their key
            if k not in self.values and out.get(k) == field_default(known[k]):
                out.pop(k, None)
        return out

    def rm_placement_config(self):
        """The RMPlacement of the rm_* fields."""
        return RMPlacement(
            where=str(self.rm_placement),
            dtype=str(self.rm_dtype),
            batch_size=int(self.rm_batch_size),
            endpoint=self.rm_endpoint,
            zero3=bool(self.rm_zero3),
        )

    def validate(self) -> GRPORecipe:
        """Checks that need no accelerator (TRL's own run when to_config builds the config)."""
        where = f"recipe {self.name!r}"
        if self.domain not in ROWS:
            raise ValueError(f"{where}: domain must be one of {sorted(ROWS)}, got {self.domain!r}")
        if self.num_generations < 2:
            raise ValueError(f"{where}: num_generations must be >= 2 (GRPO compares a group)")
        spg = generation_steps(self)
        if (self.per_device_train_batch_size * spg) % self.num_generations:
            # TRL's rule: one generation batch (micro-batch x steps_per_generation, default the
            # gradient accumulation) holds whole groups; a micro-batch may hold part of one
            raise ValueError(
                f"{where}: per_device_train_batch_size "
                f"({self.per_device_train_batch_size}, completions per micro-batch) x "
                f"steps_per_generation ({spg}) must be a multiple of num_generations "
                f"({self.num_generations}): a generation batch holds whole groups"
            )
        if self.vllm_mode not in ("colocate", "server"):
            raise ValueError(
                f"{where}: vllm_mode must be colocate or server, got {self.vllm_mode!r}"
            )
        if not self.rewards:
            raise ValueError(f"{where}: no rewards")
        for r in self.rewards:
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
        if not isinstance(self.allow_in_process_tests, bool):
            raise ValueError(
                f"{where}: allow_in_process_tests must be true or false, got "
                f"{self.allow_in_process_tests!r}"
            )
        if self.setting not in ("single", "tool", "agentic"):
            raise ValueError(
                f"{where}: setting must be single, tool or agentic, got {self.setting!r}"
            )
        if self.setting != "single" and self.domain != "code":
            raise ValueError(f"{where}: the {self.setting} setting needs domain: code")
        if self.generation_precision not in PRECISIONS:
            raise ValueError(
                f"{where}: generation_precision must be one of {list(PRECISIONS)}, "
                f"got {self.generation_precision!r}"
            )
        if self.generation_precision != "native":
            if self.use_vllm or self.use_transformers_continuous_batching:
                raise ValueError(
                    f"{where}: generation_precision {self.generation_precision!r} "
                    "replaces TRL's transformers generation; with use_vllm or "
                    "use_transformers_continuous_batching the sampler is theirs"
                )
            if self.generation_precision == "int8" and not self.use_cpu:
                raise ValueError(
                    f"{where}: generation_precision 'int8' (torch dynamic "
                    "quantization) runs on the CPU: set use_cpu: true, or use "
                    "bfloat16 or vLLM on an accelerator"
                )
        if self.lora is not None:
            try:
                lora_config(self.lora)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
        try:
            self.rm_placement_config().validate()
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        return self

    def to_config(self, output_dir: str | Path, **overrides):
        """The RecodeGRPOConfig of this recipe writing to output_dir (TRL validates it here and
        initialises the accelerator state: call it in the training process)."""
        from recode_lib.training.config import RecodeGRPOConfig

        return RecodeGRPOConfig(**{**self.values, **overrides, "output_dir": str(output_dir)})


def load_recipe(name_or_path: str | Path = "cg_grpo_smoke", **overrides) -> GRPORecipe:
    """The recipe `name_or_path` (a name in recipes/ or a YAML path) with `overrides` applied;
    ValueError naming the file and any unknown field, FileNotFoundError for a missing recipe."""
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
    return GRPORecipe(str(path), **data).validate()


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


def reward_sandbox_config(recipe: GRPORecipe):
    """The rewards' SandboxConfig: None (the default) unless the recipe asks for the testlib
    checkers' exact-match fallback (checker_fallback)."""
    return SandboxConfig(checker_fallback=True) if recipe.checker_fallback else None


def reward_resources(recipe: GRPORecipe, runner=None, trainer_device=None):
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


def build_rewards(recipe: GRPORecipe, runner=None, *, resources=None):
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


def tool_limits(recipe: GRPORecipe):
    """The sandbox limits of one tool call in the recipe's tool/agentic setting."""
    return ToolLimits(
        time_limit_s=recipe.tool_time_limit_s,
        memory_mb=recipe.tool_memory_mb,
        max_output_chars=recipe.tool_max_output_chars,
    )


def setting_parts(recipe: GRPORecipe, funcs: list, tok):
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


def grpo_config(recipe: GRPORecipe, output_dir: str | Path):
    """recipe.to_config(output_dir) with the reward weights of recipe.rewards and the policy
    loaded in recode_lib.models.training_dtype (float32: bf16 recipes compute in bf16 autocast,
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
    return recipe.to_config(output_dir, reward_weights=weights, model_init_kwargs=init)


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


def upstream_stamps(recipe) -> dict:
    """{field: stamp} of the local folders a run reads weights from, its `model` and `rm_path`
    (recode_lib.models.model_stamp: file names, sizes, mtimes), so a start model or reward model
    retrained in place (00's SFT start, 02's RM re-run) retires the runs trained on the old one
    instead of letting them be skipped as done. Hub ids and aliases have none."""
    out = {}
    for key in ("model", "rm_path"):
        value = getattr(recipe, key, None)
        stamp = model_stamp(value) if value else None
        if stamp:
            out[key] = stamp
    return out


def run_fingerprint(recipe: GRPORecipe, problems) -> str:
    """What a trained run depends on: every recipe field except LOGGING_FIELDS (switching the
    tracker keeps a finished run), every training problem (the same after the YAML/jsonl
    round trip of the accelerate launcher) and the weights of its local start and reward models
    (upstream_stamps; runs of hub ids and aliases keep the fingerprint they had before)."""
    fields = {k: v for k, v in recipe.to_dict().items() if k not in LOGGING_FIELDS}
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


def prompts_per_step(recipe: GRPORecipe, num_processes: int = 1) -> int:
    """Training prompts one generation batch takes: per_device_train_batch_size x processes x
    steps_per_generation (default gradient_accumulation_steps) / num_generations. TRL's
    sampler drops an incomplete batch, so fewer problems than this train for 0 steps."""
    completions = recipe.per_device_train_batch_size * int(num_processes) * generation_steps(recipe)
    return -(-completions // recipe.num_generations)


def check_enough_problems(recipe: GRPORecipe, n_problems: int, num_processes: int = 1) -> None:
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
    recipe: GRPORecipe, problems, output_dir: str | Path, *, resume: bool = True
) -> TrainResult:
    """Train (or resume, or skip when done); returns where the final checkpoint and metrics are."""
    from recode_lib.training.callbacks import MetricsJsonlCallback, timed_trainer_class

    recipe.validate()
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
    trainer_class = sampling_copy_class(timed_trainer_class())
    with cpu_colocate_engine() if colocate else contextlib.nullcontext():
        trainer = trainer_class(
            model=model_path,
            reward_funcs=funcs,
            args=args,
            train_dataset=dataset,
            processing_class=tok,
            callbacks=[cb],
            **setting_kw,
        )
    if colocate:
        patch_colocate_sync(trainer)  # vLLM's CPU build: TRL's per-tensor sync cannot load
    trainer.generation_precision = recipe.generation_precision
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
        provenance(recipe.seed, recipe.to_dict())
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
    save_final(trainer, tok, final)
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
