"""CG-GRPO and strictness-sweep training on TRL's GRPOTrainer, from YAML recipes.

    from recode_lib.training.grpo import load_recipe, train
    recipe = load_recipe("cg_grpo_smoke", model="smollm2", rewards=[{"name": "gated"}],
                         rm_path="runs/smoke/02_reward_model/rm")
    result = train(recipe, problems, "runs/smoke/04_cg_grpo/gated")
    result.final_dir       # <output_dir>/final: a Hugging Face folder (model + tokenizer)
    result.metrics_path    # <output_dir>/metrics.jsonl: one line per logged step
    # multi-GPU: recode_lib.training.launch.launch(recipe, problems, out, launcher="accelerate")

Recipes live in recode_lib/training/recipes/<name>.yaml (fields of `GRPORecipe`; `load_recipe` accepts a
name or a path and keyword overrides; an unknown field raises naming the file and field).
Prompts are `recode_lib.prompts.build_messages(problem)` (code) or
`recode_lib.evaluation.math.math_messages(problem)` (math): the same format evaluation uses.
`train` resumes from the last `checkpoint-*` in output_dir, skips a run whose `final/` is
complete (both only when output_dir was trained on the same recipe and problems: otherwise the
old run is moved aside to <output_dir>.stale-<k>, see retire_stale_run), and if training raises
it first saves a checkpoint (so a crash never loses the steps done) and then re-raises. The local metrics file comes from recode_lib.training.callbacks.

Paper profile (GPUs; needs `pip install -e .[gpu]`): vLLM generation and DeepSpeed ZeRO-3:

    # colocate: vLLM shares each training GPU (recipe: use_vllm: true, vllm_mode: colocate)
    accelerate launch --config_file configs/accelerate/zero3.yaml --num_processes 8 \\
        -m recode_lib.cli.grpo --recipe cg_grpo_paper --output-dir runs/paper/04_cg_grpo/gated \\
        --set rm_path=runs/paper/02_reward_model/rm
    # server: one GPU serves vLLM, seven train (recipe: vllm_mode: server)
    CUDA_VISIBLE_DEVICES=7 trl vllm-serve --model Qwen/Qwen2.5-Coder-7B-Instruct &
    CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6 accelerate launch --config_file \\
        configs/accelerate/zero3.yaml --num_processes 7 -m recode_lib.cli.grpo \\
        --recipe cg_grpo_paper --set vllm_mode=server --output-dir runs/paper/04_cg_grpo/gated

It does not generate for evaluation (recode_lib.evaluation.codegen does) and imports vllm/deepspeed
only through TRL/accelerate when a recipe asks for them.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECIPES_DIR = Path(__file__).resolve().parent / "recipes"
NEEDS_RM = {"process", "gated", "additive", "math_gated", "math_additive"}
EXECUTES = {"outcome", "gated", "additive", "outcome_only", "partial_discrete", "partial_continuous"}


@dataclass
class GRPORecipe:
    """One GRPO run. Fields map to GRPOConfig where named alike."""
    name: str = "cg_grpo_smoke"
    model: str = "smollm2"              # alias, folder or hub id (recode_lib.models.resolve_model)
    domain: str = "code"                # code | math (prompt format and dataset columns)
    reasoning: bool = True              # reasoning-then-code prompt (prompts.build_messages)
    rewards: list = field(default_factory=lambda: [{"name": "gated"}])  # [{name, weight?, **options}]
    rm_path: str | None = None          # given to every reward that needs a reward model
    # data (used by the CLI; notebooks pass problems directly)
    benchmark: str = "mbppplus"
    n_problems: int | None = None
    # rollouts
    num_generations: int = 4
    max_completion_length: int = 256
    temperature: float = 1.0
    top_p: float = 1.0
    # optimisation
    learning_rate: float = 1e-6
    per_device_train_batch_size: int = 8   # completions, a multiple of num_generations
    gradient_accumulation_steps: int = 1
    max_steps: int = 10
    num_iterations: int = 1
    beta: float = 0.0                   # KL to a reference model (0: no reference model)
    loss_type: str = "dapo"
    lr_scheduler_type: str = "constant"
    warmup_steps: int = 0
    max_grad_norm: float = 1.0
    seed: int = 0
    # system
    use_cpu: bool = True
    cpu_threads: int | None = None      # torch.set_num_threads on CPU runs (None: torch's default;
                                        # 1 avoids OpenMP spin-wait collapse on a busy machine)
    bf16: bool = False
    gradient_checkpointing: bool = False
    use_vllm: bool = False
    vllm_mode: str = "colocate"         # colocate | server
    vllm_server_base_url: str | None = None
    vllm_gpu_memory_utilization: float = 0.3
    vllm_tensor_parallel_size: int = 1
    # rewards execution
    sandbox_workers: int | None = None
    reward_batch_timeout_s: float = 300.0
    # logging and checkpoints
    logging_steps: int = 1
    save_steps: int = 50
    save_total_limit: int | None = 2
    report_to: list = field(default_factory=lambda: ["none"])
    log_completions: bool = False
    extra: dict = field(default_factory=dict)   # any other GRPOConfig field, passed through

    def validate(self) -> "GRPORecipe":
        where = f"recipe {self.name!r}"
        if self.domain not in ("code", "math"):
            raise ValueError(f"{where}: domain must be 'code' or 'math', got {self.domain!r}")
        if self.per_device_train_batch_size % self.num_generations:
            raise ValueError(f"{where}: per_device_train_batch_size "
                             f"({self.per_device_train_batch_size}) counts completions and must be "
                             f"a multiple of num_generations ({self.num_generations})")
        if self.num_generations < 2:
            raise ValueError(f"{where}: num_generations must be >= 2 (GRPO compares a group)")
        if self.vllm_mode not in ("colocate", "server"):
            raise ValueError(f"{where}: vllm_mode must be colocate or server, got {self.vllm_mode!r}")
        if not self.rewards:
            raise ValueError(f"{where}: no rewards")
        for r in self.rewards:
            if not isinstance(r, dict) or "name" not in r:
                raise ValueError(f"{where}: each reward must be a mapping with a 'name', got {r!r}")
        return self


def load_recipe(name_or_path: str | Path = "cg_grpo_smoke", **overrides) -> GRPORecipe:
    import yaml

    p = Path(name_or_path)
    path = p if p.suffix in (".yaml", ".yml") or p.exists() else RECIPES_DIR / f"{p}.yaml"
    if not path.is_file():
        known = sorted(x.stem for x in RECIPES_DIR.glob("*.yaml"))
        raise FileNotFoundError(f"recipe {name_or_path!r} not found ({path}); known: {known}")
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a recipe must be a mapping of GRPORecipe fields")
    data.setdefault("name", path.stem)
    data.update(overrides)
    names = {f.name for f in dataclasses.fields(GRPORecipe)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"{path}: unknown recipe field(s) {unknown}; known: {sorted(names)}")
    return GRPORecipe(**data).validate()


def build_dataset(problems, domain: str = "code", reasoning: bool = True):
    """A datasets.Dataset with the columns the rewards read; raises naming a problem without
    tests (code) or without an answer (math)."""
    from datasets import Dataset

    from recode_lib.evaluation.math import math_messages
    from recode_lib.prompts import build_messages

    rows = []
    for i, p in enumerate(problems):
        pid = getattr(p, "id", f"#{i}")
        if domain == "math":
            if not getattr(p, "answer", None):
                raise ValueError(f"problem {pid!r} (row {i}) has no answer: math rewards need one")
            rows.append({"prompt": math_messages(p), "answer": str(p.answer), "problem_id": pid})
            continue
        tests = getattr(p, "tests", None)
        if not tests or (tests.get("kind") != "script" and not tests.get("cases")):
            raise ValueError(f"problem {pid!r} (row {i}) has no tests: code rewards need them")
        rows.append({"prompt": build_messages(p, reasoning=reasoning),
                     "tests": json.dumps(tests), "problem_id": pid,
                     "starter_code": p.starter_code or "", "entry_point": p.entry_point or "",
                     "time_limit_s": float(p.time_limit_s), "memory_mb": int(p.memory_mb)})
    if not rows:
        raise ValueError("no problems to train on")
    return Dataset.from_list(rows)


def build_rewards(recipe: GRPORecipe, runner=None):
    """(reward functions, weights) from recipe.rewards; RM-backed ones get recipe.rm_path."""
    from recode_lib.rewards import get_reward

    funcs, weights = [], []
    for spec in recipe.rewards:
        opts = {k: v for k, v in spec.items() if k not in ("name", "weight")}
        name = spec["name"]
        if name in NEEDS_RM:
            opts.setdefault("rm_path", recipe.rm_path)
        if name in EXECUTES or name.startswith("strict"):
            opts.setdefault("runner", runner)
        funcs.append(get_reward(name, **opts))
        weights.append(float(spec.get("weight", 1.0)))
    return funcs, weights


def grpo_config(recipe: GRPORecipe, output_dir: str | Path):
    from trl import GRPOConfig

    kw: dict[str, Any] = dict(
        output_dir=str(output_dir), run_name=recipe.name, seed=recipe.seed,
        num_generations=recipe.num_generations, max_completion_length=recipe.max_completion_length,
        temperature=recipe.temperature, top_p=recipe.top_p, learning_rate=recipe.learning_rate,
        per_device_train_batch_size=recipe.per_device_train_batch_size,
        gradient_accumulation_steps=recipe.gradient_accumulation_steps,
        max_steps=recipe.max_steps, num_iterations=recipe.num_iterations, beta=recipe.beta,
        loss_type=recipe.loss_type, lr_scheduler_type=recipe.lr_scheduler_type,
        warmup_steps=recipe.warmup_steps, max_grad_norm=recipe.max_grad_norm,
        use_cpu=recipe.use_cpu, bf16=recipe.bf16,
        gradient_checkpointing=recipe.gradient_checkpointing,
        use_vllm=recipe.use_vllm, logging_steps=recipe.logging_steps,
        save_strategy="steps", save_steps=recipe.save_steps,
        save_total_limit=recipe.save_total_limit, report_to=recipe.report_to,
        log_completions=recipe.log_completions, disable_tqdm=False,
    )
    if recipe.use_vllm:
        kw.update(vllm_mode=recipe.vllm_mode,
                  vllm_gpu_memory_utilization=recipe.vllm_gpu_memory_utilization,
                  vllm_tensor_parallel_size=recipe.vllm_tensor_parallel_size)
        if recipe.vllm_server_base_url:
            kw["vllm_server_base_url"] = recipe.vllm_server_base_url
    kw.update(recipe.extra)
    return GRPOConfig(**kw)


@dataclass
class TrainResult:
    output_dir: Path
    final_dir: Path
    metrics_path: Path
    resumed_from: str | None
    skipped: bool                   # True when final/ already existed


def run_fingerprint(recipe: GRPORecipe, problems) -> str:
    """What a trained run depends on: every recipe field and every training problem (the same
    after the YAML/jsonl round trip of the accelerate launcher)."""
    from recode_lib.provenance import fingerprint

    return fingerprint(recipe, [p.to_dict() if hasattr(p, "to_dict") else p for p in problems])


def retire_stale_run(output_dir: str | Path, fingerprint: str) -> Path | None:
    """When output_dir holds a run of another recipe or problem set (its fingerprint.json
    differs), move it aside to <output_dir>.stale-<k> (printed; nothing is deleted) so the run
    starts clean instead of skipping or resuming stale work. Records the fingerprint; returns
    where an old run went, or None. A non-empty folder without fingerprint.json (whose origin
    is unknown) is moved aside too."""
    from recode_lib.jsonl import read_json, write_json_atomic
    from recode_lib.paths import set_aside

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


def train(recipe: GRPORecipe, problems, output_dir: str | Path, *, resume: bool = True) -> TrainResult:
    """Train (or resume, or skip when done); returns where the final checkpoint and metrics are."""
    from transformers.trainer_utils import get_last_checkpoint

    from recode_lib.training.callbacks import MetricsJsonlCallback, timed_trainer_class
    from recode_lib.jsonl import write_json_atomic
    from recode_lib.models import load_tokenizer, resolve_model
    from recode_lib.provenance import provenance
    from recode_lib.rewards.execution import SandboxRunner

    recipe.validate()
    out = Path(output_dir)
    final = out / "final"
    metrics = out / "metrics.jsonl"
    retire_stale_run(out, run_fingerprint(recipe, problems))
    if final_complete(out):
        return TrainResult(out, final, metrics, None, True)
    out.mkdir(parents=True, exist_ok=True)
    dataset = build_dataset(problems, recipe.domain, recipe.reasoning)
    runner = SandboxRunner(workers=recipe.sandbox_workers,
                           batch_timeout_s=recipe.reward_batch_timeout_s)
    funcs, weights = build_rewards(recipe, runner)
    args = grpo_config(recipe, out)
    args.reward_weights = weights
    if recipe.use_cpu and recipe.cpu_threads:
        import torch

        torch.set_num_threads(int(recipe.cpu_threads))
    model_path = resolve_model(recipe.model)
    tok = load_tokenizer(model_path)
    cb = MetricsJsonlCallback(metrics, runner=runner, run_name=recipe.name)
    trainer = timed_trainer_class()(model=model_path, reward_funcs=funcs, args=args,
                                    train_dataset=dataset, processing_class=tok, callbacks=[cb])
    cb.trainer = trainer
    last = get_last_checkpoint(str(out)) if resume and out.is_dir() else None
    write_json_atomic(out / "run.json", provenance(recipe.seed, recipe) |
                      {"model_path": model_path, "resumed_from": last, "n_problems": len(dataset)})
    try:
        trainer.train(resume_from_checkpoint=last)
    except BaseException:
        if trainer.state.global_step > 0:
            print(f"training failed at step {trainer.state.global_step}; saving a checkpoint in "
                  f"{out} before re-raising", file=sys.stderr)
            try:
                trainer._save_checkpoint(trainer.model, trial=None)
            except Exception as exc:  # keep the original error
                print(f"(saving the checkpoint failed too: {exc})", file=sys.stderr)
        raise
    save_final(trainer, tok, final)
    return TrainResult(out, final, metrics, last, False)


def save_final(trainer, tokenizer, final: Path) -> None:
    """Write <output_dir>/final atomically (a temp folder renamed) with a .complete marker."""
    import os
    import shutil

    tmp = final.with_name(".final.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    trainer.save_model(str(tmp))
    if trainer.accelerator.is_main_process:
        tokenizer.save_pretrained(str(tmp))
        (tmp / ".complete").write_text(json.dumps({"global_step": trainer.state.global_step}))
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)


def read_metrics(output_dir: str | Path) -> list[dict]:
    from recode_lib.jsonl import read_jsonl

    p = Path(output_dir) / "metrics.jsonl"
    return read_jsonl(p, allow_torn_tail=True) if p.exists() else []
