"""The multi-GPU launch, as data: the `accelerate launch` command line and its two config files
(configs/accelerate/*.yaml, configs/deepspeed/*.json), built and checked without a GPU.

    from recode_lib.training.launch_configs import accelerate_command, check_launch_configs
    cmd = accelerate_command(out / "recipe.yaml", out, out / "train_problems.jsonl",
                             num_processes=8)            # list[str], what launch() runs
    cmd = module_command("recode_lib.cli.rm", ["--config", ...], num_processes=8)  # the RM's
    report = check_launch_configs(num_processes=8, bf16=True, gradient_accumulation_steps=4)
    report["deepspeed"]["zero_optimization"]["stage"]    # 3

`check_launch_configs` loads the accelerate config with accelerate's own loader, follows its
`deepspeed_config_file` (relative paths resolve against the project root, where launch() runs
`accelerate launch`), and checks what would otherwise fail only on a cluster: the distributed
type, that the DeepSpeed file exists and is JSON, that every "auto" value is one the Hugging
Face Trainer fills in, ZeRO stage 3 saves 16-bit weights at the end (or `final/` would hold
empty shards), and that explicit values agree with the recipe (bf16, gradient accumulation).
It raises LaunchConfigError naming the file and key. It does not import deepspeed (the
Trainer's own HfTrainerDeepSpeedConfig needs it installed) and does not start processes.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

from recode_lib.core.errors import RecodeError
from recode_lib.core.paths import PROJECT_ROOT


class Launcher(StrEnum):
    """How a training run is started: INPROCESS (this process: CPU or one GPU), ACCELERATE
    (`accelerate launch`, DeepSpeed ZeRO-3, one node), SLURM (sbatch, several nodes; GRPO only),
    DRYRUN (the CPU stand-in of ACCELERATE that builds and checks every GPU config) and
    DRYRUN_VLLM (DRYRUN keeping the recipe's use_vllm: GRPO only, rollouts on TRL's colocated
    engine, vLLM's CPU build; the paper dry run's real-engine mode, recode_lib.runner.dryrun)."""

    INPROCESS = "inprocess"
    ACCELERATE = "accelerate"
    SLURM = "slurm"
    DRYRUN = "dryrun"
    DRYRUN_VLLM = "dryrun_vllm"


DEFAULT_ACCELERATE_CONFIG = PROJECT_ROOT / "configs" / "accelerate" / "zero3.yaml"
ENTRY_POINT = "recode_lib.cli.grpo"  # the module `accelerate launch -m` runs

# DeepSpeed keys whose "auto" transformers' HfTrainerDeepSpeedConfig.trainer_config_process
# (and, for ZeRO-3 bucket sizes, trainer_config_finalize) fills from TrainingArguments / the model
AUTO_FILLED = {
    "train_batch_size",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "gradient_clipping",
    "bf16.enabled",
    "fp16.enabled",
    "amp.enabled",
    "zero_optimization.reduce_bucket_size",
    "zero_optimization.stage3_prefetch_bucket_size",
    "zero_optimization.stage3_param_persistence_threshold",
    "optimizer.params.lr",
    "optimizer.params.betas",
    "optimizer.params.eps",
    "optimizer.params.weight_decay",
    "scheduler.params.warmup_min_lr",
    "scheduler.params.warmup_max_lr",
    "scheduler.params.warmup_num_steps",
    "scheduler.params.total_num_steps",
}


class LaunchConfigError(RecodeError, ValueError):
    """A launch config that would fail (or silently misbehave) on a GPU cluster."""


def module_command(
    module: str, arguments, *, num_processes: int = 1, config_file=None
) -> list[str]:
    """`accelerate launch --config_file CFG --num_processes N -m MODULE ARGUMENTS...` as an
    argument list (run it from PROJECT_ROOT); every launched entry point is built here."""
    cfg = config_file or DEFAULT_ACCELERATE_CONFIG
    return [
        "accelerate",
        "launch",
        "--config_file",
        str(cfg),
        "--num_processes",
        str(int(num_processes)),
        "-m",
        module,
        *(str(a) for a in arguments),
    ]


def accelerate_command(
    recipe_file, output_dir, problems_file, *, num_processes: int = 1, config_file=None
) -> list[str]:
    """`accelerate launch --config_file CFG --num_processes N -m recode_lib.cli.grpo --recipe
    ... --output-dir ... --problems ...` as an argument list (run it from PROJECT_ROOT)."""
    return module_command(
        ENTRY_POINT,
        ["--recipe", recipe_file, "--output-dir", output_dir, "--problems", problems_file],
        num_processes=num_processes,
        config_file=config_file,
    )


def entry_point_command(accelerate_cmd: list[str], python: str) -> list[str]:
    """The same run without accelerate: `python -m <module> <the same arguments>` (one
    process; what launcher="dryrun" executes on CPU)."""
    i = accelerate_cmd.index("-m")
    return [python, *accelerate_cmd[i:]]


def flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def check_deepspeed_config(
    path, *, bf16: bool | None = None, gradient_accumulation_steps: int | None = None
) -> dict:
    """The DeepSpeed JSON at `path`, checked (module docstring); returns it."""
    path = Path(path)
    if not path.is_file():
        raise LaunchConfigError(f"DeepSpeed config {path} does not exist")
    try:
        ds = json.loads(path.read_text())
    except ValueError as exc:
        raise LaunchConfigError(f"{path}: not valid JSON: {exc}") from None
    flat = flatten(ds)
    bad_auto = sorted(k for k, v in flat.items() if v == "auto" and k not in AUTO_FILLED)
    if bad_auto:
        raise LaunchConfigError(
            f"{path}: 'auto' for {bad_auto}, which the Trainer does not fill in"
        )
    zero = ds.get("zero_optimization", {})
    stage = zero.get("stage")
    if stage not in (0, 1, 2, 3):
        raise LaunchConfigError(f"{path}: zero_optimization.stage must be 0-3, got {stage!r}")
    if stage == 3 and not (
        zero.get("stage3_gather_16bit_weights_on_model_save")
        or zero.get("gather_16bit_weights_on_model_save")
    ):
        raise LaunchConfigError(
            f"{path}: ZeRO-3 without stage3_gather_16bit_weights_on_model_save"
            " saves no usable final/ weights"
        )
    enabled = flat.get("bf16.enabled")
    if bf16 is not None and enabled not in (None, "auto") and bool(enabled) != bool(bf16):
        raise LaunchConfigError(f"{path}: bf16.enabled is {enabled} but the recipe has bf16={bf16}")
    gas = flat.get("gradient_accumulation_steps")
    if (
        gradient_accumulation_steps is not None
        and gas not in (None, "auto")
        and int(gas) != int(gradient_accumulation_steps)
    ):
        raise LaunchConfigError(
            f"{path}: gradient_accumulation_steps is {gas} but the recipe "
            f"has {gradient_accumulation_steps}"
        )
    return ds


def check_launch_configs(
    config_file=None,
    *,
    num_processes: int = 1,
    bf16: bool | None = None,
    gradient_accumulation_steps: int | None = None,
) -> dict:
    """Load and check the accelerate config and the DeepSpeed config it names; returns
    {"accelerate": {...}, "deepspeed": {...} | None, "deepspeed_file": str | None}."""
    from accelerate.commands.config.config_args import load_config_from_file

    path = Path(config_file or DEFAULT_ACCELERATE_CONFIG)
    if not path.is_file():
        raise LaunchConfigError(f"accelerate config {path} does not exist")
    try:
        cfg = load_config_from_file(str(path))
    except Exception as exc:  # accelerate raises ValueError/TypeError/KeyError on bad keys
        raise LaunchConfigError(
            f"{path}: accelerate cannot load it: {type(exc).__name__}: {exc}"
        ) from None
    if int(num_processes) < 1:
        raise LaunchConfigError(f"num_processes must be >= 1, got {num_processes}")
    if getattr(cfg, "use_cpu", False):
        raise LaunchConfigError(f"{path}: use_cpu is true in a GPU launch config")
    out = {"accelerate": cfg.to_dict(), "deepspeed": None, "deepspeed_file": None}
    if str(getattr(cfg.distributed_type, "value", cfg.distributed_type)) == "DEEPSPEED":
        ds_cfg = cfg.deepspeed_config or {}
        ds_file = ds_cfg.get("deepspeed_config_file")
        if not ds_file:
            raise LaunchConfigError(
                f"{path}: distributed_type DEEPSPEED without deepspeed_config.deepspeed_config_file"
            )
        ds_path = Path(ds_file) if Path(ds_file).is_absolute() else PROJECT_ROOT / ds_file
        out["deepspeed"] = check_deepspeed_config(
            ds_path, bf16=bf16, gradient_accumulation_steps=gradient_accumulation_steps
        )
        out["deepspeed_file"] = str(ds_path)
        stage = out["deepspeed"]["zero_optimization"]["stage"]
        if ds_cfg.get("zero3_init_flag") and stage != 3:
            raise LaunchConfigError(f"{path}: zero3_init_flag with ZeRO stage {stage}")
    return out
