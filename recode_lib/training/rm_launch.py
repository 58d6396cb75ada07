"""Launching reward-model training (notebook 02): in this process, or through `accelerate launch`
(DeepSpeed ZeRO-3 over several GPUs), or the CPU dry run of the latter.

    from recode_lib.training.rm_launch import launch_reward_model
    info = launch_reward_model(train_pairs, cfg)                          # in process (CPU, 1 GPU)
    info = launch_reward_model(train_pairs, cfg, launcher="accelerate", num_processes=8)

It does not install accelerate or deepspeed and never touches a GPU in this process.
More: docs/modules/training.md (recode_lib.training.rm_launch).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict, fields, replace
from pathlib import Path

from recode_lib.core.jsonl import write_json_atomic, write_jsonl_atomic
from recode_lib.core.paths import PROJECT_ROOT
from recode_lib.process_reward.model import (
    RMConfig,
    finished_record,
    record_path,
    reward_config,
    train_or_reuse,
    trainer_dir,
)
from recode_lib.training.launch_configs import (
    Launcher,
    check_launch_configs,
    entry_point_command,
    module_command,
)

# no Slurm route for the RM; no vLLM in RM training (dryrun_vllm is GRPO's)
LAUNCHERS = tuple(x.value for x in Launcher if x not in (Launcher.SLURM, Launcher.DRYRUN_VLLM))
ENTRY_POINT = "recode_lib.cli.rm"  # the module `accelerate launch -m` runs
# the only RMConfig fields the CPU dry run of a GPU config changes
DRYRUN_CPU_FIELDS = {"use_cpu": True, "bf16": False}
CONFIG_FILE, PAIRS_FILE = "rm_config.json", "train_pairs.jsonl"
PAIR_KEYS = ("id", "prompt", "chosen", "rejected", "pair_type")


def run_dir(cfg: RMConfig) -> Path:
    """<output_dir>_launch/, next to the RM: the config and pairs the launched processes read."""
    out = Path(cfg.output_dir)
    return out.parent / f"{out.name}_launch"


def load_rm_config(path, *, output_dir: str | None = None) -> RMConfig:
    """RMConfig from a JSON (or YAML) mapping of its fields; `output_dir` replaces the file's.
    ValueError naming the file for an unknown field."""
    import yaml

    path = Path(path)
    text = path.read_text()
    data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of RMConfig fields")
    known = {f.name for f in fields(RMConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{path}: unknown RMConfig field(s) {unknown}")
    cfg = RMConfig(**data)
    return replace(cfg, output_dir=str(output_dir)) if output_dir else cfg


def write_run_files(train_pairs, cfg: RMConfig) -> tuple[Path, Path]:
    """run_dir(cfg)/rm_config.json and train_pairs.jsonl (atomic); returns their paths."""
    run = run_dir(cfg)
    run.mkdir(parents=True, exist_ok=True)
    write_json_atomic(run / CONFIG_FILE, asdict(cfg))
    write_jsonl_atomic(
        run / PAIRS_FILE, [{k: p[k] for k in PAIR_KEYS if k in p} for p in train_pairs]
    )
    return run / CONFIG_FILE, run / PAIRS_FILE


def rm_command(
    config_file,
    pairs_file,
    output_dir,
    *,
    num_processes: int = 1,
    accelerate_config=None,
    save_steps: int = 0,
) -> list[str]:
    """`accelerate launch --config_file CFG --num_processes N -m recode_lib.cli.rm --config ...
    --pairs ... --output-dir ... --retrain [--save-steps K]` (run it from PROJECT_ROOT). It
    retrains: the launcher starts it only when no finished RM of this fingerprint exists."""
    args = ["--config", config_file, "--pairs", pairs_file, "--output-dir", output_dir, "--retrain"]
    if save_steps:
        args += ["--save-steps", int(save_steps)]
    return module_command(
        ENTRY_POINT, args, num_processes=num_processes, config_file=accelerate_config
    )


def absolute_paths(cfg: RMConfig) -> RMConfig:
    """cfg with output_dir, and a backbone that is a local relative path, made absolute."""
    backbone = cfg.backbone
    if Path(backbone).exists() and not Path(backbone).is_absolute():
        backbone = str(Path(backbone).resolve())
    return replace(cfg, output_dir=str(Path(cfg.output_dir).resolve()), backbone=backbone)


def launch_reward_model(
    train_pairs,
    cfg: RMConfig,
    *,
    launcher: str = "inprocess",
    num_processes: int = 1,
    accelerate_config=None,
    retrain: bool = False,
    save_steps: int = 0,
    log=print,
) -> dict:
    """Train (or reuse) the RM of `cfg` on `train_pairs` with `launcher` (module docstring);
    returns train_or_reuse's info (counts, loss, timing, "fingerprint", "reused")."""
    if launcher not in LAUNCHERS:
        raise ValueError(f"launcher must be one of {LAUNCHERS}, got {launcher!r}")
    train_pairs = list(train_pairs)
    if launcher == Launcher.INPROCESS:
        return train_or_reuse(train_pairs, cfg, retrain=retrain, save_steps=save_steps, log=log)
    if launcher == Launcher.ACCELERATE and cfg.use_cpu:
        raise ValueError(
            "launcher 'accelerate' trains on GPUs: set use_cpu=False (USE_CPU: "
            "false), or use launcher 'inprocess' / 'dryrun' on CPU"
        )
    cfg = absolute_paths(cfg)
    check_launch_configs(
        accelerate_config,
        num_processes=num_processes,
        bf16=cfg.bf16,
        gradient_accumulation_steps=cfg.gradient_accumulation_steps,
    )
    if launcher == Launcher.DRYRUN:
        # the RewardConfig the GPU run gets, built on CPU (only use_cpu/bf16 made CPU-safe)
        reward_config(replace(cfg, **DRYRUN_CPU_FIELDS), save_steps=save_steps)
        cfg = replace(cfg, **DRYRUN_CPU_FIELDS)
    name = Path(cfg.output_dir).name
    done = None if retrain else finished_record(train_pairs, cfg)
    if done is not None:
        log(f"{name}: reusing the checkpoint trained on these pairs")
        return {**done, "reused": True}
    config_file, pairs_file = write_run_files(train_pairs, cfg)
    record_path(cfg).unlink(missing_ok=True)  # a stale record never outlives a launch
    cmd = rm_command(
        config_file,
        pairs_file,
        cfg.output_dir,
        num_processes=num_processes,
        accelerate_config=accelerate_config,
        save_steps=save_steps,
    )
    log(" ".join(cmd))
    if launcher == Launcher.DRYRUN:
        cmd = entry_point_command(cmd, sys.executable)
        log("dry run, on CPU: " + " ".join(cmd))
    rc = subprocess.run(cmd, cwd=PROJECT_ROOT).returncode
    info = finished_record(train_pairs, cfg)
    if rc != 0 or info is None:
        raise RuntimeError(
            f"`{' '.join(cmd)}` failed (exit {rc}"
            f"{'' if rc else ', no finished reward model recorded'}); the run "
            f"files in {run_dir(cfg)} and the trainer folder {trainer_dir(cfg)} "
            "(checkpoints with save_steps > 0) are kept and the next call "
            "resumes from them"
        )
    return {**info, "reused": False}
