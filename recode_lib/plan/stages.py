"""What each notebook puts on GPUs, read from its parameters: the stages of the resource plan.

    stages = notebook_stages("01_crpl_synthesis", params, profile_params)
    stages[1].engine.arch.name, stages[1].engine.tp, stages[1].work.gen_out_tokens

`params` are one notebook's effective parameters (its defaults with the profile's values, as
recode_lib.pipeline.effective_parameters returns them) and `profile_params` all notebooks' (a
notebook that uses another's model, e.g. 04's reward model is 02's backbone, reads it there).
Training stages also read their recipe (recode_lib/training/recipes/<RECIPE>.yaml, with
RecodeGRPOConfig's defaults for the fields a recipe leaves out, under the notebook's RECIPE_FIELDS:
see recode_lib.training.recipe_fields) and the launch configs (configs/accelerate,
configs/deepspeed). A stage holds what the memory check needs (Engine: a vLLM engine; Trainer:
the policy under ZeRO-3 with its colocated engine and reward model) and what the budget needs
(Work: token counts, upper bounds: every response runs to its maximum length, every trace is
usable). Only GPU work becomes a stage: the "vllm" backend, LAUNCHER "accelerate", notebook 02
with USE_CPU false (one process with LAUNCHER "inprocess", ZeRO-3 over NUM_PROCESSES with
"accelerate"; 16 B/param either way: fp32 master weights and Adam). CPU work (the hf and
vllm_standin backends, the dry-run launcher, reward-model scoring on ProcessRewardScorer's
default CPU device) is left out; `notes` say where it matters.
Benchmark sizes and prompt lengths are the small tables below (upper bounds where marked);
nothing is downloaded or loaded.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recode_lib.errors import RecodeError
from recode_lib.paths import PROJECT_ROOT
from recode_lib.plan.architectures import Architecture, ArchitectureError, model_arch
from recode_lib.rewards import Need, reward_needs
from recode_lib.training.grpo import RECIPES_DIR, config_fields, field_default
from recode_lib.training.launch_configs import DEFAULT_ACCELERATE_CONFIG
from recode_lib.training.recipe_fields import recipe_fields

VLLM_DEFAULT_UTILIZATION = 0.9  # vllm.LLM's gpu_memory_utilization default

# problems per benchmark (the loaders' default split/release); "~" marks an estimate
BENCHMARK_SIZES: dict[str, tuple[int, str]] = {
    "humaneval": (164, "HumanEval (Chen et al. 2021)"),
    "humanevalplus": (164, "HumanEval+ (EvalPlus)"),
    "mbpp": (500, "MBPP test split, task ids 11-510 (Austin et al. 2021)"),
    "mbppplus": (378, "MBPP+ v0.2 (EvalPlus)"),
    "livecodebench": (1055, "LiveCodeBench code_generation_lite release_v6"),
    "livecodebench:hard": (352, "~ a third of release_v6 (count it with the data present)"),
    "bigcodebench": (1140, "BigCodeBench v0.1.0 full"),
    "bigcodebench_hard": (148, "BigCodeBench-Hard"),
    "codecontests_plus": (11690, "CodeContests+ (ByteDance-Seed/Code-Contests-Plus)"),
    "leetcode": (180, "the project's LeetCode 2023-07..2024-01 file"),
    "aime24": (30, "AIME 2024"),
    "math_train": (7500, "MATH training split (Hendrycks et al. 2021)"),
    "microbench": (20, "data/microbench/problems"),
}
UNKNOWN_BENCHMARK_SIZE = 1000

# prompt tokens (chat template, system prompt and problem statement), by benchmark family
PROMPT_TOKENS = {"contest": 768, "function": 384, "math": 256}
CONTEST = {"livecodebench", "codecontests_plus", "leetcode", "microbench"}
MATH = {"aime24", "math_train", "math_synth"}
INSTRUCTION_TOKENS = 400  # a rewrite / judge / repair instruction around the content


class StageError(RecodeError, ValueError):
    """A profile the plan cannot read (a missing recipe, an unknown model)."""


@dataclass
class Engine:
    """One vLLM engine: `tp` is what the notebook will use, `tp_param` the parameter that sets
    it (None: fixed at 1 by the notebook)."""

    model: str
    arch: Architecture
    seq_len: int  # prompt + new tokens of the stage's longest request
    batch: int  # requests in flight (the stage's batch, capped by vLLM)
    utilization: float = VLLM_DEFAULT_UTILIZATION
    tp: int = 1
    tp_param: str | None = None
    max_model_len: int | None = None  # None: the model's context (what vLLM does by default)
    colocated: bool = False


@dataclass
class RewardModel:
    arch: Architecture
    placement: str = "trainer"  # trainer | endpoint | device:N | cpu
    dtype: str = "bfloat16"
    batch: int = 8
    zero3: bool = False


@dataclass
class Trainer:
    """The trained model of one process group: `bytes_per_param` of weights + gradients +
    optimizer state, sharded over `processes` under ZeRO-3."""

    model: str
    arch: Architecture
    processes: int
    bytes_per_param: int  # 16: fp32 master weights + fp32 Adam (every trainer here)
    precision: str
    zero3: bool
    micro_batch: int  # sequences per forward/backward
    seq_len: int
    gradient_checkpointing: bool
    live_params: float = 1e9  # ZeRO-3 stage3_max_live_parameters (gathered, bf16)
    reference_model: bool = False  # beta > 0
    lora: bool = False
    lm_head: bool = True  # a causal-LM loss (TRL's fused head) vs a score head
    engine: Engine | None = None  # vLLM colocated on the training GPUs (or a server)
    reward_model: RewardModel | None = None
    one_machine: bool = True  # the accelerate config's num_machines == 1
    fix: str | None = None  # what to change when it does not fit (the refusal says it)


@dataclass
class Work:
    """Token counts of a stage, for the budget (upper bounds)."""

    gen_out_tokens: float = 0.0  # generated tokens (all requests x max new tokens)
    gen_in_tokens: float = 0.0  # prompt tokens (prefill)
    steps: int = 0  # optimizer steps (training)
    completions_per_step: int = 0
    prompt_tokens: int = 0  # per completion (training)
    completion_tokens: int = 0  # per completion, maximum (training)
    rm_scored: bool = False  # the reward model scores every completion
    train_tokens: float = 0.0  # tokens trained on outside GRPO (the reward model)
    sandbox_records: float = 0.0  # programs executed (tests run)
    sandbox_workers: int = 1
    requests: float = 0.0  # generation requests (the units engines split)
    overlap_sandbox: bool = False  # judged while generating (single-setting evaluations)
    judge_batch: float = 256  # requests judged after the last generation finishes
    formula: str = ""  # what the count is made of (the knobs that trade it down)


@dataclass
class Stage:
    notebook: str
    name: str
    engine: Engine | None = None  # a generation stage
    trainer: Trainer | None = None  # a training stage
    work: Work = field(default_factory=Work)
    runs: int = 1  # identical runs this stage stands for (variants)
    notes: list[str] = field(default_factory=list)

    @property
    def model(self) -> str:
        return (self.trainer or self.engine).model


# --- small helpers -------------------------------------------------------------------------


def _list(value) -> list[str]:
    items = value if isinstance(value, (list, tuple)) else str(value or "").split(",")
    return [str(x).strip() for x in items if str(x).strip()]


def benchmark_size(name: str, difficulty: str = "") -> int:
    key = f"{name}:{difficulty}" if difficulty else name
    if key in BENCHMARK_SIZES:
        return BENCHMARK_SIZES[key][0]
    if difficulty and name in BENCHMARK_SIZES:
        return -(-BENCHMARK_SIZES[name][0] // 3)
    return BENCHMARK_SIZES.get(str(name).split(":")[0], (UNKNOWN_BENCHMARK_SIZE, ""))[0]


def prompt_tokens(benchmark: str) -> int:
    name = str(benchmark).split(":")[0]
    if name in MATH:
        return PROMPT_TOKENS["math"]
    return PROMPT_TOKENS["contest" if name in CONTEST else "function"]


def n_problems(benchmark: str, n: int, difficulty: str = "") -> int:
    """First n problems of a benchmark (0: all)."""
    total = benchmark_size(benchmark, difficulty)
    return min(int(n), total) if n else total


def eval_problems(p: dict) -> tuple[str, int]:
    """(benchmark, count) of a training notebook's held-out problems (recode_lib.data.split)."""
    bench = p.get("EVAL_BENCHMARK") or p.get("BENCHMARK", "")
    difficulty = p.get("EVAL_DIFFICULTY", "") or ""
    if p.get("EVAL_BENCHMARK"):
        return bench, n_problems(bench, p.get("N_EVAL", 0), difficulty)
    return bench, min(
        int(p.get("N_EVAL", 0)), max(0, benchmark_size(bench) - int(p.get("N_TRAIN", 0)))
    )


def is_vllm(backend: str | None) -> bool:
    return str(backend) == "vllm"


@functools.cache
def recipe_defaults() -> dict[str, Any]:
    """Every recipe field's default: recode_lib.training.config.RecodeGRPOConfig's (read from
    the dataclass; imports trl)."""
    return {name: field_default(f) for name, f in config_fields().items()}


def read_recipe(name: str, overrides: dict | None = None) -> dict:
    """A recipe's fields (YAML) over the dataclass's defaults, with notebook overrides."""
    import yaml

    p = Path(str(name))
    path = p if p.suffix in (".yaml", ".yml") else RECIPES_DIR / f"{name}.yaml"
    if not path.is_file():
        raise StageError(f"recipe {name!r} not found ({path})")
    data = yaml.safe_load(path.read_text()) or {}
    return {**recipe_defaults(), **data, **dict(overrides or {}), "name": path.stem}


def launch_config() -> dict:
    """The accelerate config and its DeepSpeed config (what launch(launcher='accelerate')
    uses): {"num_machines", "zero_stage", "live_params"}."""
    import yaml

    acc = yaml.safe_load(Path(DEFAULT_ACCELERATE_CONFIG).read_text()) or {}
    ds_file = (acc.get("deepspeed_config") or {}).get("deepspeed_config_file")
    ds = {}
    if ds_file:
        ds_path = Path(ds_file) if Path(ds_file).is_absolute() else PROJECT_ROOT / ds_file
        ds = json.loads(ds_path.read_text())
    zero = ds.get("zero_optimization", {})
    return {
        "num_machines": int(acc.get("num_machines", 1) or 1),
        "zero_stage": int(zero.get("stage", 0) or 0)
        if acc.get("distributed_type") == "DEEPSPEED"
        else 0,
        "live_params": float(zero.get("stage3_max_live_parameters", 1e9) or 1e9),
    }


def _arch(name: str, notebook: str) -> Architecture:
    try:
        return model_arch(name)
    except ArchitectureError as exc:
        raise StageError(f"{notebook}: {exc}") from None


def _engine_stage(
    notebook,
    name,
    model,
    *,
    requests,
    max_new,
    prompt,
    batch,
    tp=1,
    tp_param=None,
    samples_per_request=1,
    sandbox=0.0,
    workers=1,
    notes=(),
    formula: str = "",
) -> Stage:
    arch = _arch(model, notebook)
    engine = Engine(
        model, arch, seq_len=int(prompt + max_new), batch=int(batch), tp=int(tp), tp_param=tp_param
    )
    work = Work(
        gen_out_tokens=float(requests) * samples_per_request * max_new,
        gen_in_tokens=float(requests) * prompt,
        sandbox_records=float(sandbox),
        sandbox_workers=int(workers or 1),
        requests=float(requests) * samples_per_request,
        formula=formula
        or (
            f"{int(requests):,} requests"
            + (f" x {samples_per_request}" if samples_per_request > 1 else "")
            + f" x {int(max_new):,} tok"
        ),
    )
    return Stage(notebook, name, engine=engine, work=work, notes=list(notes))


# --- GRPO training --------------------------------------------------------------------------


def rm_arch(profile_params: dict, recipe: dict, notebook: str) -> Architecture:
    """The reward model a run loads: the recipe's rm_path when it holds a checkpoint, else
    notebook 02's backbone as a reward model."""
    path = recipe.get("rm_path")
    for cand in [Path(path), PROJECT_ROOT / path] if path else []:
        if (cand / "config.json").is_file():
            return _arch(str(cand), notebook)
    backbone = profile_params.get("02_reward_model", {}).get("MODEL", "smollm2")
    return _arch(backbone, notebook).reward_model()


def run_fields(p: dict, model: str, extra: dict | None = None) -> dict:
    """The recipe fields a GRPO notebook sets: its RECIPE_FIELDS (recode_lib.training.recipe_fields)
    and the fields it passes from its own parameters (BENCHMARK, WORKERS; `model`, `extra`)."""
    own = {"benchmark": p.get("BENCHMARK"), "sandbox_workers": p.get("WORKERS")}
    own = {k: v for k, v in own.items() if v is not None} | dict(extra or {}) | {"model": model}
    return recipe_fields(p.get("RECIPE_FIELDS"), **own)


def grpo_stage(
    notebook: str,
    name: str,
    p: dict,
    profile_params: dict,
    *,
    recipe_name: str,
    model: str,
    rewards: list[str],
    runs: int = 1,
    steps: int | None = None,
    extra: dict | None = None,
) -> Stage | None:
    """One GRPO training configuration (None when it trains on CPU)."""
    r = read_recipe(recipe_name, run_fields(p, model, extra))
    launcher = p.get("LAUNCHER", "inprocess")
    if launcher not in ("accelerate", "inprocess") or r["use_cpu"]:
        return None
    procs = int(p.get("NUM_PROCESSES", 1)) if launcher == "accelerate" else 1
    cfg = (
        launch_config()
        if launcher == "accelerate"
        else {"num_machines": 1, "zero_stage": 0, "live_params": 1e9}
    )
    arch = _arch(model, notebook)
    prompt = prompt_tokens(r.get("benchmark") or p.get("BENCHMARK", ""))
    completion = int(r["max_completion_length"])
    seq = prompt + completion
    spg = int(r["steps_per_generation"] or r["gradient_accumulation_steps"])
    engine = None
    if r["use_vllm"]:
        tp = int(r["vllm_tensor_parallel_size"])
        engine = Engine(
            model,
            arch,
            seq_len=seq,
            batch=int(r["per_device_train_batch_size"]) * tp * spg,
            utilization=float(r["vllm_gpu_memory_utilization"]),
            tp=tp,
            tp_param=f"vllm_tensor_parallel_size (recipe {r['name']})",
            max_model_len=r["vllm_max_model_length"],
            colocated=r["vllm_mode"] == "colocate",
        )
    needs_rm = any(Need.REWARD_MODEL in reward_needs(x) for x in rewards)
    rm = None
    if needs_rm and r["rm_placement"] != "cpu":
        rm = RewardModel(
            rm_arch(profile_params, r, notebook),
            placement=str(r["rm_placement"]),
            dtype="bfloat16" if r["rm_dtype"] in ("auto", None) else r["rm_dtype"],
            batch=int(r["rm_batch_size"]),
            zero3=bool(r["rm_zero3"]),
        )
    zero3 = cfg["zero_stage"] == 3
    mixed = bool(r["bf16"])
    # DeepSpeed's bf16 optimizer keeps fp32 master weights: bf16 weights 2 + bf16 grads 2 +
    # fp32 master 4 + fp32 Adam m, v 8 = 16 bytes; in float32, 4 + 4 + 8 = 16 as well
    trainer = Trainer(
        model,
        arch,
        processes=procs,
        bytes_per_param=16,
        precision="bf16 + fp32 master + fp32 Adam" if mixed else "fp32 + fp32 Adam",
        zero3=zero3,
        micro_batch=int(r["per_device_train_batch_size"]),
        seq_len=seq,
        gradient_checkpointing=bool(r["gradient_checkpointing"]),
        live_params=cfg["live_params"],
        reference_model=float(r["beta"]) > 0,
        lora=bool(r.get("lora")),
        engine=engine,
        reward_model=rm,
        one_machine=cfg["num_machines"] == 1,
    )
    per_step = int(r["per_device_train_batch_size"]) * procs * int(r["gradient_accumulation_steps"])
    n_steps = int(steps if steps is not None else r["max_steps"])
    code = r.get("domain", "code") == "code"
    work = Work(
        steps=n_steps,
        completions_per_step=per_step,
        prompt_tokens=prompt,
        completion_tokens=completion,
        rm_scored=rm is not None,
        sandbox_records=float(per_step * n_steps) if code else 0.0,
        sandbox_workers=int(r["sandbox_workers"] or p.get("WORKERS", 1) or 1),
        formula=(f"{runs} run(s) x {n_steps} steps x {per_step} completions x {completion:,} tok"),
    )
    notes = []
    if needs_rm and rm is None:
        notes.append("the reward model scores on CPU (rm_placement cpu)")
    if r.get("setting", "single") != "single":
        notes.append(f"{r['setting']} setting: max_completion_length covers every turn")
    return Stage(notebook, name, trainer=trainer, work=work, runs=runs, notes=notes)


def _grpo_group(
    notebook, p, profile_params, recipe, model, runs: dict[str, list[str]], steps=None, extra=None
) -> list[Stage]:
    """One stage per distinct memory configuration (runs that need the RM vs not)."""
    groups: dict[bool, list[str]] = {}
    for run, rewards in runs.items():
        rm = any(Need.REWARD_MODEL in reward_needs(x) for x in rewards)
        groups.setdefault(rm, []).append(run)
    out = []
    for names in groups.values():
        label = (
            ", ".join(names) if len(names) <= 3 else f"{len(names)} runs: {names[0]} .. {names[-1]}"
        )
        st = grpo_stage(
            notebook,
            f"GRPO {label}",
            p,
            profile_params,
            recipe_name=recipe,
            model=model,
            rewards=runs[names[0]],
            runs=len(names),
            steps=steps,
            extra=extra,
        )
        if st is not None:
            out.append(st)
    return out


def _eval_stages(
    notebook,
    p,
    models: dict[str, int],
    *,
    bench: str,
    problems: int,
    samples: int,
    max_new: int,
    backend: str,
    tp: int = 1,
    tp_param=None,
    turns: int = 1,
    name: str = "evaluation",
    workers=None,
) -> list[Stage]:
    """Evaluation generation: `models` maps a model (its shape) to how many checkpoints of it
    are evaluated."""
    if not is_vllm(backend):
        return []
    out = []
    for model, count in models.items():
        requests = count * problems * samples
        label = name if len(models) == 1 else f"{name} ({model.split('/')[-1]})"
        formula = (
            f"{count} checkpoint(s) x {problems:,} {bench} x {samples} samples x "
            f"{max_new:,} tok" + (f" x {turns} turns" if turns > 1 else "")
        )
        st = _engine_stage(
            notebook,
            label,
            model,
            requests=requests,
            max_new=max_new * turns,
            prompt=prompt_tokens(bench),
            batch=256,
            tp=tp,
            tp_param=tp_param,
            sandbox=requests,
            workers=workers or p.get("WORKERS", 1),
            formula=formula,
        )
        st.runs = count
        # single-turn: recode_lib.evaluation.loop judges batches while the rest generate, an
        # alpha grid (weights.sweep) each wave's alphas while the next wave generates
        st.work.overlap_sandbox = turns == 1
        if turns == 1 and "alpha grid" in name:
            st.work.judge_batch = problems * samples
        out.append(st)
    return out


# --- the notebooks ---------------------------------------------------------------------------


def _00(nb, p, pp):
    out = []
    if is_vllm(p.get("BACKEND")):
        out.append(
            _engine_stage(
                nb,
                "chat generation",
                p["MODEL"],
                requests=1,
                max_new=p.get("MAX_NEW_TOKENS", 96),
                prompt=128,
                batch=1,
            )
        )
        if p.get("CALIBRATE"):
            n = (
                p.get("CAL_N_EASY", 0)
                + p.get("CAL_N_EFFICIENCY", 0)
                + 2 * p.get("CAL_N_EASIEST", 0)
            )
            out.append(
                _engine_stage(
                    nb,
                    "calibration",
                    p["MODEL"],
                    requests=n,
                    samples_per_request=p.get("CAL_N_SAMPLES", 1),
                    max_new=p.get("CAL_MAX_NEW_TOKENS", 128),
                    prompt=PROMPT_TOKENS["function"],
                    batch=256,
                    sandbox=n * p.get("CAL_N_SAMPLES", 1),
                    workers=p.get("WORKERS", 1),
                )
            )
    return out


def _01(nb, p, pp):
    out = []
    source = p.get("SOURCE", "mbppplus")
    problems = n_problems(source, p.get("N_PROBLEMS", 0))
    traces = problems * int(p.get("TRACES_PER_PROBLEM", 1))
    prompt = prompt_tokens(source)
    if is_vllm(p.get("BACKEND")):
        out.append(
            _engine_stage(
                nb,
                "base traces",
                p["MODEL"],
                requests=traces,
                max_new=p.get("POLICY_MAX_NEW_TOKENS", 256),
                prompt=prompt,
                batch=p.get("BATCH_SIZE", 8),
                sandbox=traces,
                workers=1,
            )
        )  # 01 declares no WORKERS
    dims = len(_list(p.get("DIMENSIONS", "factual_correctness,logical_rigor,logical_coherence")))
    requests = traces * dims * 2  # every trace usable: an upper bound
    rewrite_prompt = prompt + int(p.get("POLICY_MAX_NEW_TOKENS", 256)) + INSTRUCTION_TOKENS
    for label, key, tp_key in (
        ("main", "GENERATOR_MODEL", "GENERATOR_TP"),
        ("second", "SECOND_GENERATOR", "SECOND_GENERATOR_TP"),
    ):
        model = p.get(key)
        if not model or model == "rules" or not is_vllm(p.get("GENERATOR_BACKEND")):
            continue
        out.append(
            _engine_stage(
                nb,
                f"rewrites [{label}]",
                model,
                requests=requests,
                samples_per_request=int(p.get("N_CANDIDATES", 1)),
                max_new=p.get("REWRITE_MAX_NEW_TOKENS", 384),
                prompt=rewrite_prompt,
                batch=int(p.get("BATCH_SIZE", 8)) * int(p.get("N_CANDIDATES", 1)),
                tp=p.get(tp_key, 1),
                tp_param=tp_key if tp_key in p else None,
            )
        )
    return out


def crpl_pairs(pp: dict) -> tuple[float, int]:
    """(train pairs, tokens per side) notebook 01 can produce: every trace usable, three pair
    types per dimension (an upper bound)."""
    p1 = pp.get("01_crpl_synthesis", {})
    source = p1.get("SOURCE", "mbppplus")
    traces = n_problems(source, p1.get("N_PROBLEMS", 0)) * int(p1.get("TRACES_PER_PROBLEM", 1))
    dims = len(_list(p1.get("DIMENSIONS", "factual_correctness,logical_rigor,logical_coherence")))
    pairs = traces * dims * 3 * (1 - float(p1.get("VAL_FRACTION", 0.25)))
    side = prompt_tokens(source) + int(p1.get("REWRITE_MAX_NEW_TOKENS", 384))
    return pairs, side


def _02(nb, p, pp):
    launcher = p.get("LAUNCHER", "inprocess")
    if p.get("USE_CPU", True) or launcher not in ("accelerate", "inprocess"):
        return []  # CPU, or the dry run's CPU stand-in
    arch = _arch(p["MODEL"], nb).reward_model()
    bf16 = bool(p.get("BF16"))
    sharded = launcher == "accelerate"
    procs = int(p.get("NUM_PROCESSES", 1)) if sharded else 1
    cfg = launch_config() if sharded else {"num_machines": 1, "zero_stage": 0, "live_params": 1e9}
    zero3 = cfg["zero_stage"] == 3
    # The RM keeps fp32 master weights (recode_lib.models.training_dtype): 16 B/param either
    # way. In process, bf16 autocast over fp32 weights: 4 + fp32 grads 4 + AdamW m, v 8; under
    # accelerate + DeepSpeed ZeRO-3 (recode_lib.training.rm_launch), its bf16 optimizer: bf16
    # weights 2 + bf16 grads 2 + fp32 master 4 + Adam 8, sharded over the processes.
    if not bf16:
        precision = "fp32 + fp32 Adam"
    elif zero3:
        precision = "bf16 + fp32 master + fp32 Adam"
    else:
        precision = "bf16 autocast over fp32 weights + fp32 Adam"
    batch = int(p.get("BATCH_SIZE", 4))
    max_len = int(p.get("MAX_LENGTH", 1024))
    total = 16 * arch.params
    trainer = Trainer(
        p["MODEL"],
        arch,
        processes=procs,
        bytes_per_param=16,
        precision=precision,
        zero3=zero3,
        micro_batch=2 * batch,
        seq_len=max_len,
        gradient_checkpointing=bool(p.get("GRADIENT_CHECKPOINTING")),
        live_params=cfg["live_params"],
        lm_head=False,
        one_machine=cfg["num_machines"] == 1,
        fix=None
        if zero3 and procs > 1
        else (
            f"shard the {total / 1e9:.0f} GB with ZeRO-3: set LAUNCHER: accelerate and "
            "NUM_PROCESSES: N (16 B/param / N per GPU)"
        ),
    )
    pairs, side = crpl_pairs(pp)
    epochs = float(p.get("EPOCHS", 1.0))
    if int(p.get("MAX_STEPS", -1)) > 0:
        pairs, epochs = int(p["MAX_STEPS"]) * batch * int(p.get("GRAD_ACCUM", 1)) * procs, 1.0
    models = 2 if p.get("ABLATION") else 1
    tokens = pairs * epochs * 2 * min(side, max_len)
    work = Work(
        train_tokens=tokens,
        formula=(
            f"{models} RM(s) x {pairs:,.0f} pairs x {epochs:g} "
            f"epoch(s) x 2 sides x {min(side, max_len):,} tok"
        ),
    )
    notes = ["scores with ProcessRewardScorer on its default device (CPU, float32)"]
    if zero3 and procs > 1:
        notes.append(
            f"fp32 master weights + Adam: 16 B/param = {total / 1e9:.0f} GB, ZeRO-3 "
            f"over {procs} GPUs ({total / procs / 1e9:.1f} GB each; LAUNCHER accelerate)"
        )
    else:
        notes.append(
            f"fp32 master weights + Adam: 16 B/param = {total / 1e9:.0f} GB in one "
            "process; LAUNCHER accelerate shards it with ZeRO-3 over NUM_PROCESSES"
        )
    return [
        Stage(
            nb,
            "RM training" + (" (x2: ablation)" if models > 1 else ""),
            trainer=trainer,
            work=work,
            runs=models,
            notes=notes,
        )
    ]


def _03(nb, p, pp):
    out = []
    sources = _list(p.get("SOURCES", ""))
    per = int(p.get("N_PROBLEMS", 0))
    problems = sum(n_problems(s, per) for s in sources)
    samples = int(p.get("SAMPLES_PER_PROBLEM", 1))
    max_new = int(p.get("MAX_NEW_TOKENS", 256))
    prompt = max([prompt_tokens(s) for s in sources] or [PROMPT_TOKENS["contest"]])
    if is_vllm(p.get("BACKEND")):
        out.append(
            _engine_stage(
                nb,
                "policy traces",
                p["MODEL"],
                requests=problems * samples,
                max_new=max_new,
                prompt=prompt,
                batch=p.get("BATCH_SIZE", 8),
                sandbox=problems * samples,
                workers=1,
            )
        )  # 03 declares no WORKERS
        seeded = _list(p.get("SEEDED_SOURCES", ""))
        if seeded:
            n = len(seeded) * int(p.get("N_SEEDED", 0)) * (2 + int(p.get("N_MUTANTS", 0)))
            out.append(
                _engine_stage(
                    nb,
                    "seeded traces",
                    p["MODEL"],
                    requests=n,
                    max_new=max_new,
                    prompt=prompt + max_new,
                    batch=p.get("BATCH_SIZE", 8),
                    sandbox=n,
                )
            )
    if is_vllm(p.get("JUDGE_BACKEND")):
        pairs = problems * int(p.get("MAX_PAIRS_PER_PROBLEM", 1))
        synth, side = crpl_pairs(pp)
        synth *= float(pp.get("01_crpl_synthesis", {}).get("VAL_FRACTION", 0.25)) / max(
            1e-9, 1 - float(pp.get("01_crpl_synthesis", {}).get("VAL_FRACTION", 0.25))
        )
        calls = pairs * (2 + 2 + 2) + 2 * synth * (2 + 2)  # consistency, pointwise, pairwise
        trace = max(max_new, side)
        out.append(
            _engine_stage(
                nb,
                "judges",
                p["JUDGE_MODEL"],
                requests=calls,
                max_new=p.get("JUDGE_MAX_NEW_TOKENS", 16),
                prompt=prompt + 2 * trace + INSTRUCTION_TOKENS,
                batch=p.get("BATCH_SIZE", 8),
                tp=p.get("JUDGE_TP", 1),
                tp_param="JUDGE_TP" if "JUDGE_TP" in p else None,
                notes=["the RM baselines score on CPU (ProcessRewardScorer's default device)"],
            )
        )
    return out


def n_seeds(p: dict) -> int:
    """Training runs per variant: the notebook's SEEDS (one run per seed; absent: one)."""
    return max(1, len(_list(p.get("SEEDS", ""))))


def seeded(runs: dict[str, list[str]], seeds: int) -> dict[str, list[str]]:
    """Each run once per seed (names as training.launch.seeded_variants gives them)."""
    if seeds <= 1:
        return runs
    return {f"{name}_seed{i}": rewards for name, rewards in runs.items() for i in range(seeds)}


# 04's cross-model transfer: the gated run and its outcome-only baseline on the other policy
TRANSFER_RUNS = {"transfer": ["gated"], "transfer_outcome_only": ["outcome_only"]}


def _04(nb, p, pp):
    variants = _list(p.get("VARIANTS", ""))
    seeds = n_seeds(p)
    out = _grpo_group(nb, p, pp, p["RECIPE"], p["MODEL"], seeded({v: [v] for v in variants}, seeds))
    transfer = p.get("TRANSFER_MODEL")
    if transfer:
        out += _grpo_group(
            nb,
            p,
            pp,
            p.get("TRANSFER_RECIPE") or p["RECIPE"],
            transfer,
            seeded(TRANSFER_RUNS, seeds),
        )
    bench, problems = eval_problems(p)
    models = {p["MODEL"]: 1 + len(variants) * seeds}
    if transfer:  # its start model and each transfer run
        models[transfer] = models.get(transfer, 0) + 1 + len(TRANSFER_RUNS) * seeds
    out += _eval_stages(
        nb,
        p,
        models,
        bench=bench,
        problems=problems,
        samples=int(p.get("EVAL_N_SAMPLES", 1)),
        max_new=int(p.get("EVAL_MAX_NEW_TOKENS", 256)),
        backend=p.get("BACKEND"),
    )
    return out


def _05(nb, p, pp):
    if not is_vllm(p.get("BACKEND")):
        return []
    p4 = pp.get("04_cg_grpo", {})
    seeds = n_seeds(p4)  # 05 evaluates every seed's policy of 04
    models = {p["MODEL"]: 1 + len(_list(p.get("VARIANTS", ""))) * seeds}
    if p.get("TRANSFER") and p4.get("TRANSFER_MODEL"):
        models[p4["TRANSFER_MODEL"]] = (
            models.get(p4["TRANSFER_MODEL"], 0) + 1 + len(TRANSFER_RUNS) * seeds
        )
    out = []
    per = int(p.get("N_PROBLEMS", 0))
    benches = _list(p.get("BENCHMARKS", ""))
    problems = sum(n_problems(b, per) for b in benches)
    prompt = max([prompt_tokens(b) for b in benches] or [PROMPT_TOKENS["function"]])
    for model, count in models.items():
        requests = count * problems * int(p.get("N_SAMPLES", 1))
        st = _engine_stage(
            nb,
            f"evaluation ({model.split('/')[-1]})" if len(models) > 1 else "evaluation",
            model,
            requests=requests,
            max_new=p.get("MAX_NEW_TOKENS", 320),
            prompt=prompt,
            batch=256,
            tp=p.get("TENSOR_PARALLEL_SIZE", 1),
            tp_param="TENSOR_PARALLEL_SIZE",
            sandbox=requests,
            workers=p.get("WORKERS", 1),
            formula=(
                f"{count} checkpoint(s) x {problems:,} problems ({len(benches)} "
                f"benchmarks) x {p.get('N_SAMPLES', 1)} samples x "
                f"{int(p.get('MAX_NEW_TOKENS', 320)):,} tok"
            ),
        )
        st.runs = count
        st.work.overlap_sandbox = True  # single setting: judged while generating
        out.append(st)
    return out


def _06(nb, p, pp):
    ks = _list(p.get("KS", "")) + ["inf"]
    runs = {f"k{k}": [f"strict_{k}"] for k in ks}
    runs.update({f"partial_{c}": [f"partial_{c}"] for c in _list(p.get("PARTIAL_CREDIT", ""))})
    runs = seeded(runs, n_seeds(p))
    out = _grpo_group(nb, p, pp, p["RECIPE"], p["MODEL"], runs)
    bench, problems = eval_problems(p)
    out += _eval_stages(
        nb,
        p,
        {p["MODEL"]: len(runs)},
        bench=bench,
        problems=problems,
        samples=int(p.get("EVAL_N_SAMPLES", 1)),
        max_new=int(p.get("EVAL_MAX_NEW_TOKENS", 256)),
        backend=p.get("BACKEND"),
    )
    return out


def _07(nb, p, pp):
    if not is_vllm(p.get("BACKEND")):
        return []
    p6 = pp.get("06_strictness_sweep", {})
    sweep = p.get("ENDPOINTS", "sweep") == "sweep" and p6
    model = p6.get("MODEL", p["MODEL"]) if sweep else p["MODEL"]
    if sweep and p.get("SWEEP_PROBLEMS", True):
        bench, problems = eval_problems(p6)
        if p.get("N_PROBLEMS"):
            problems = min(problems, int(p["N_PROBLEMS"]))
    else:
        bench = p.get("BENCHMARK", "microbench")
        problems = n_problems(bench, p.get("N_PROBLEMS", 0), p.get("DIFFICULTY", "") or "")
    max_new = int(
        p6.get("EVAL_MAX_NEW_TOKENS", p.get("MAX_NEW_TOKENS", 192))
        if sweep and p.get("SPEC_FROM_SWEEP", True)
        else p.get("MAX_NEW_TOKENS", 192)
    )
    alphas = len(_list(p.get("ALPHAS", "")))
    # with sweep endpoints and SWEEP_RUNS, 06's other runs (every seed's; the two endpoints
    # are alphas 0 and 1) are evaluated with the same spec, for 08's best single checkpoint
    others = 0
    if sweep and p.get("SWEEP_RUNS", True):
        ks6 = len(_list(p6.get("KS", ""))) + 1 + len(_list(p6.get("PARTIAL_CREDIT", "")))
        others = max(0, ks6 * n_seeds(p6) - 2)
    requests = (alphas + others) * problems * int(p.get("N_SAMPLES", 1))
    st = _engine_stage(
        nb,
        f"alpha sweep ({alphas} alphas, in place)" + (f" + {others} sweep runs" if others else ""),
        model,
        requests=requests,
        max_new=max_new,
        prompt=prompt_tokens(bench),
        batch=256,
        tp=p.get("TENSOR_PARALLEL_SIZE", 1),
        tp_param="TENSOR_PARALLEL_SIZE",
        sandbox=requests,
        workers=p.get("WORKERS", 1),
        formula=(
            f"({alphas} alphas + {others} runs) x {problems:,} {bench} x "
            f"{p.get('N_SAMPLES', 1)} samples x {max_new:,} tok"
        ),
        notes=["both endpoints are read into host memory (float32) for the in-place merge"],
    )
    # data parallel: whole alphas per engine in waves, each wave judged while the next one
    # generates (recode_lib.weights.sweep); the other runs' evaluations judge while generating
    st.work.overlap_sandbox = True
    st.work.judge_batch = problems * int(p.get("N_SAMPLES", 1))
    return [st]


def _09(nb, p, pp):
    rounds = int(p.get("ROUNDS", 1))
    steps = int(read_recipe(p["RECIPE"], run_fields(p, p["MODEL"]))["max_steps"])  # per round
    reward = p.get("REWARD", "strict_inf")
    out = _grpo_group(
        nb,
        p,
        pp,
        p["RECIPE"],
        p["MODEL"],
        {"original_only": [reward], "failure_conditioned": [reward]},
        steps=rounds * steps,
    )
    bench, problems = eval_problems(p)
    n_train = n_problems(p.get("BENCHMARK", ""), p.get("N_TRAIN", 0))
    samples = int(p.get("EVAL_N_SAMPLES", 1))
    repair = problems * int(p.get("REPAIR_PER_PROBLEM", 1))
    if is_vllm(p.get("BACKEND")):
        out += _eval_stages(
            nb,
            p,
            {p["MODEL"]: 1},
            bench=bench,
            problems=n_train * rounds + problems,
            samples=samples,
            max_new=int(p.get("EVAL_MAX_NEW_TOKENS", 128)),
            backend=p.get("BACKEND"),
            name="attempts (start + each round)",
        )
        out += _eval_stages(
            nb,
            p,
            {p["MODEL"]: 3},
            bench=bench,
            problems=problems + repair,
            samples=samples,
            max_new=int(p.get("EVAL_MAX_NEW_TOKENS", 128)),
            backend=p.get("BACKEND"),
            name="comparison (original + repair)",
        )
        if p.get("PAPER_B_EVAL"):  # the same comparison under paper B's protocol, beside it
            hard = n_problems(bench, p.get("N_EVAL", 0), p.get("PAPER_B_DIFFICULTY", "") or "")
            out += _eval_stages(
                nb,
                p,
                {p["MODEL"]: 3},
                bench=bench,
                problems=hard * (1 + int(p.get("REPAIR_PER_PROBLEM", 1))),
                samples=samples,
                max_new=int(p.get("PAPER_B_MAX_NEW_TOKENS", 8192)),
                backend=p.get("BACKEND"),
                name="comparison under paper B's protocol (original + repair)",
            )
    return out


def _10(nb, p, pp):
    variants = _list(p.get("VARIANTS", ""))
    out = _grpo_group(
        nb,
        p,
        pp,
        p["RECIPE"],
        p["MODEL"],
        {v: [v] for v in variants},
        extra={"benchmark": p.get("TRAIN_SET", "math_train")},
    )
    bench = p.get("EVAL_BENCHMARK", "aime24")
    problems = n_problems(bench, p.get("N_EVAL", 0))
    if is_vllm(p.get("BACKEND")):
        for st in _eval_stages(
            nb,
            p,
            {p["MODEL"]: 1 + len(variants)},
            bench=bench,
            problems=problems,
            samples=int(p.get("EVAL_N_SAMPLES", 1)),
            max_new=int(p.get("EVAL_MAX_NEW_TOKENS", 384)),
            backend=p.get("BACKEND"),
        ):
            st.work.sandbox_records = 0.0  # answers are compared, not executed
            out.append(st)
    return out


def _11(nb, p, pp):
    settings = _list(p.get("SETTINGS", "single"))
    ks = _list(p.get("KS", "")) + ["inf"]
    extra = {"max_tool_calls": p.get("MAX_TOOL_CALLS")}
    out = []
    for s in settings:
        recipe = p.get("SINGLE_RECIPE") if s == "single" else str(p.get("RECIPE")).format(setting=s)
        for st in _grpo_group(
            nb,
            p,
            pp,
            recipe,
            p["MODEL"],
            {f"k{k}": [f"strict_{k}"] for k in ks},
            extra={k: v for k, v in extra.items() if v is not None},
        ):
            st.name = f"{s}: {st.name}"
            out.append(st)
    bench, problems = eval_problems(p)
    max_new = int(p.get("EVAL_MAX_NEW_TOKENS", 192))
    turns_of = {s: (1 if s == "single" else int(p.get("MAX_TURNS", 1))) for s in settings}
    for s in settings:
        out += _eval_stages(
            nb,
            p,
            {p["MODEL"]: len(ks)},
            bench=bench,
            problems=problems,
            samples=int(p.get("EVAL_N_SAMPLES", 1)),
            max_new=max_new,
            backend=p.get("BACKEND"),
            turns=turns_of[s],
            name=f"{s}: evaluation",
        )
        alphas = len(_list(p.get("ALPHAS", "")))
        out += _eval_stages(
            nb,
            p,
            {p["MODEL"]: alphas},
            bench=bench,
            problems=problems,
            samples=int(p.get("ALPHA_N_SAMPLES", 1)),
            max_new=max_new,
            backend=p.get("BACKEND"),
            turns=turns_of[s],
            name=f"{s}: alpha grid ({alphas} alphas)",
        )
    return out


BUILDERS = {
    "00": _00,
    "01": _01,
    "02": _02,
    "03": _03,
    "04": _04,
    "05": _05,
    "06": _06,
    "07": _07,
    "09": _09,
    "10": _10,
    "11": _11,
}


def notebook_stages(stem: str, params: dict, profile_params: dict | None = None) -> list[Stage]:
    """The GPU stages of notebook `stem` under `params` (empty: it runs on CPU, or touches no
    model, as 08 and 99)."""
    builder = BUILDERS.get(stem[:2])
    return builder(stem, dict(params), dict(profile_params or {})) if builder else []
