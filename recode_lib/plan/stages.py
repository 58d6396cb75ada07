"""What each notebook puts on GPUs, read from its parameters: the stages of the resource plan.

    stages = notebook_stages("01_crpl_synthesis", params, profile_params)
    stages[1].engine.arch.name, stages[1].engine.tp, stages[1].work.gen_out_tokens

`params` are one notebook's effective parameters (its defaults with the profile's values, as
recode_lib.runner.pipeline.effective_parameters returns them) and `profile_params` all notebooks' (a
notebook that uses another's model, e.g. 04's reward model is 02's backbone, reads it there).
Each builder (`_00` ... `_11`) gets them as its step's typed parameters (recode_lib.steps.catalog:
`p.RECIPE`, another step's through `other(pp, RewardModelParams)`), so a renamed parameter is
an attribute error, which tests/test_steps.py finds statically.
Training stages also read their recipe (recode_lib/training/recipes/<RECIPE>.yaml, with
RecodeGRPOConfig's defaults for the fields a recipe leaves out, under the notebook's RECIPE_FIELDS:
see recode_lib.training.recipe_check) and the launch configs (configs/accelerate,
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from recode_lib.core.errors import RecodeError
from recode_lib.core.paths import PROJECT_ROOT
from recode_lib.plan.architectures import Architecture, ArchitectureError, model_arch
from recode_lib.rewards import Need, reward_needs
from recode_lib.steps.base import ParameterError, StepParams
from recode_lib.steps.catalog import (
    STEPS,
    CgGrpoParams,
    CodegenEvalParams,
    CrplSynthesisParams,
    DataAndModelsParams,
    LcbRbParams,
    MathDomainParams,
    RepairParams,
    RewardModelParams,
    SettingsSweepParams,
    StrictnessSweepParams,
    WeightAveragingParams,
)
from recode_lib.training.grpo import RECIPES_DIR, config_fields, field_default
from recode_lib.training.launch_configs import DEFAULT_ACCELERATE_CONFIG
from recode_lib.training.recipe_check import recipe_fields

S = TypeVar("S", bound=StepParams)
# the profile's parameters: {notebook stem: its effective parameters}, as recode_lib.runner.pipeline
# gives them (a builder reads another step's typed, through other())
Profile = Mapping[str, Mapping[str, Any]]

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


def eval_problems(
    benchmark: str, n_train: int, n_eval: int, eval_benchmark: str = "", difficulty: str = ""
) -> tuple[str, int]:
    """(benchmark, count) of a training notebook's held-out problems (recode_lib.data.split):
    the first n_eval of eval_benchmark (of that difficulty) when it names one, else those of
    `benchmark` after its first n_train."""
    if eval_benchmark:
        return eval_benchmark, n_problems(eval_benchmark, n_eval, difficulty or "")
    return benchmark, min(int(n_eval), max(0, benchmark_size(benchmark) - int(n_train)))


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


@dataclass(frozen=True)
class GrpoRuns:
    """What a GRPO notebook's parameters say of every run it trains: how they launch, its
    RECIPE_FIELDS, and the parameters it passes as recipe fields (BENCHMARK as `benchmark`,
    WORKERS as `sandbox_workers`; None: the notebook has none)."""

    launcher: str
    num_processes: int
    recipe_fields: Mapping[str, Any]
    benchmark: str | None = None
    workers: int | None = None


def rm_arch(pp: Profile, recipe: dict, notebook: str) -> Architecture:
    """The reward model a run loads: the recipe's rm_path when it holds a checkpoint, else
    notebook 02's backbone as a reward model."""
    path = recipe.get("rm_path")
    for cand in [Path(path), PROJECT_ROOT / path] if path else []:
        if (cand / "config.json").is_file():
            return _arch(str(cand), notebook)
    p2 = other(pp, RewardModelParams)
    return _arch(p2.MODEL if p2 else "smollm2", notebook).reward_model()


def run_fields(runs: GrpoRuns, model: str, extra: dict | None = None) -> dict:
    """The recipe fields a GRPO notebook sets: its RECIPE_FIELDS (recode_lib.training.recipe_check)
    and the fields it passes from its own parameters (BENCHMARK, WORKERS; `model`, `extra`)."""
    own = {"benchmark": runs.benchmark, "sandbox_workers": runs.workers}
    own = {k: v for k, v in own.items() if v is not None} | dict(extra or {}) | {"model": model}
    return recipe_fields(runs.recipe_fields, **own)


def grpo_stage(
    notebook: str,
    name: str,
    runs_of: GrpoRuns,
    pp: Profile,
    *,
    recipe_name: str,
    model: str,
    rewards: list[str],
    runs: int = 1,
    steps: int | None = None,
    extra: dict | None = None,
) -> Stage | None:
    """One GRPO training configuration (None when it trains on CPU)."""
    r = read_recipe(recipe_name, run_fields(runs_of, model, extra))
    launcher = runs_of.launcher
    if launcher not in ("accelerate", "inprocess") or r["use_cpu"]:
        return None
    procs = int(runs_of.num_processes) if launcher == "accelerate" else 1
    cfg = (
        launch_config()
        if launcher == "accelerate"
        else {"num_machines": 1, "zero_stage": 0, "live_params": 1e9}
    )
    arch = _arch(model, notebook)
    prompt = prompt_tokens(r.get("benchmark") or runs_of.benchmark or "")
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
            rm_arch(pp, r, notebook),
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
        sandbox_workers=int(r["sandbox_workers"] or runs_of.workers or 1),
        formula=(f"{runs} run(s) x {n_steps} steps x {per_step} completions x {completion:,} tok"),
    )
    notes = []
    if needs_rm and rm is None:
        notes.append("the reward model scores on CPU (rm_placement cpu)")
    if r.get("setting", "single") != "single":
        notes.append(f"{r['setting']} setting: max_completion_length covers every turn")
    return Stage(notebook, name, trainer=trainer, work=work, runs=runs, notes=notes)


def _grpo_group(
    notebook, runs_of: GrpoRuns, pp: Profile, recipe, model, runs, steps=None, extra=None
) -> list[Stage]:
    """One stage per distinct memory configuration (runs that need the RM vs not); `runs`:
    {run name: its reward names}."""
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
            runs_of,
            pp,
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
    models: dict[str, int],
    *,
    bench: str,
    problems: int,
    samples: int,
    max_new: int,
    backend: str,
    workers: int,
    tp: int = 1,
    tp_param=None,
    turns: int = 1,
    name: str = "evaluation",
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
            workers=workers,
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
# Each builder takes its step's typed parameters (recode_lib.steps.catalog) and the profile's
# (Profile: every step that runs, by stem), so a renamed parameter is an attribute error.


def _00(nb: str, p: DataAndModelsParams, pp: Profile) -> list[Stage]:
    out = []
    if is_vllm(p.BACKEND):
        out.append(
            _engine_stage(
                nb,
                "chat generation",
                p.MODEL,
                requests=1,
                max_new=p.MAX_NEW_TOKENS,
                prompt=128,
                batch=1,
            )
        )
        if p.CALIBRATE:
            n = p.CAL_N_EASY + p.CAL_N_EFFICIENCY + 2 * p.CAL_N_EASIEST
            out.append(
                _engine_stage(
                    nb,
                    "calibration",
                    p.MODEL,
                    requests=n,
                    samples_per_request=p.CAL_N_SAMPLES,
                    max_new=p.CAL_MAX_NEW_TOKENS,
                    prompt=PROMPT_TOKENS["function"],
                    batch=256,
                    sandbox=n * p.CAL_N_SAMPLES,
                    workers=p.WORKERS,
                )
            )
    return out


def _01(nb: str, p: CrplSynthesisParams, pp: Profile) -> list[Stage]:
    out = []
    problems = n_problems(p.SOURCE, p.N_PROBLEMS)
    traces = problems * int(p.TRACES_PER_PROBLEM)
    prompt = prompt_tokens(p.SOURCE)
    if is_vllm(p.BACKEND):
        out.append(
            _engine_stage(
                nb,
                "base traces",
                p.MODEL,
                requests=traces,
                max_new=p.POLICY_MAX_NEW_TOKENS,
                prompt=prompt,
                batch=p.BATCH_SIZE,
                sandbox=traces,
                workers=1,
            )
        )  # 01 declares no WORKERS
    dims = len(_list(p.DIMENSIONS))
    requests = traces * dims * 2  # every trace usable: an upper bound
    rewrite_prompt = prompt + int(p.POLICY_MAX_NEW_TOKENS) + INSTRUCTION_TOKENS
    for label, model, tp, tp_param in (
        ("main", p.GENERATOR_MODEL, p.GENERATOR_TP, "GENERATOR_TP"),
        ("second", p.SECOND_GENERATOR, p.SECOND_GENERATOR_TP, "SECOND_GENERATOR_TP"),
    ):
        if not model or model == "rules" or not is_vllm(p.GENERATOR_BACKEND):
            continue
        out.append(
            _engine_stage(
                nb,
                f"rewrites [{label}]",
                model,
                requests=requests,
                samples_per_request=int(p.N_CANDIDATES),
                max_new=p.REWRITE_MAX_NEW_TOKENS,
                prompt=rewrite_prompt,
                batch=int(p.BATCH_SIZE) * int(p.N_CANDIDATES),
                tp=tp,
                tp_param=tp_param,
            )
        )
    return out


# what the plan reads of 01 when the profile does not run it: every MBPP+ problem, one trace
# each, the paper's three dimensions and 384-token rewrites (an upper bound)
CRPL_NOT_RUN = CrplSynthesisParams(
    SOURCE="mbppplus",
    N_PROBLEMS=0,
    TRACES_PER_PROBLEM=1,
    DIMENSIONS="factual_correctness,logical_rigor,logical_coherence",
    VAL_FRACTION=0.25,
    REWRITE_MAX_NEW_TOKENS=384,
)


def crpl_pairs(pp: Profile) -> tuple[float, int]:
    """(train pairs, tokens per side) notebook 01 can produce: every trace usable, three pair
    types per dimension (an upper bound)."""
    p1 = other(pp, CrplSynthesisParams) or CRPL_NOT_RUN
    traces = n_problems(p1.SOURCE, p1.N_PROBLEMS) * int(p1.TRACES_PER_PROBLEM)
    dims = len(_list(p1.DIMENSIONS))
    pairs = traces * dims * 3 * (1 - float(p1.VAL_FRACTION))
    side = prompt_tokens(p1.SOURCE) + int(p1.REWRITE_MAX_NEW_TOKENS)
    return pairs, side


def _02(nb: str, p: RewardModelParams, pp: Profile) -> list[Stage]:
    launcher = p.LAUNCHER
    if p.USE_CPU or launcher not in ("accelerate", "inprocess"):
        return []  # CPU, or the dry run's CPU stand-in
    arch = _arch(p.MODEL, nb).reward_model()
    bf16 = bool(p.BF16)
    sharded = launcher == "accelerate"
    procs = int(p.NUM_PROCESSES) if sharded else 1
    cfg = launch_config() if sharded else {"num_machines": 1, "zero_stage": 0, "live_params": 1e9}
    zero3 = cfg["zero_stage"] == 3
    # The RM keeps fp32 master weights (recode_lib.core.models.training_dtype): 16 B/param either
    # way. In process, bf16 autocast over fp32 weights: 4 + fp32 grads 4 + AdamW m, v 8; under
    # accelerate + DeepSpeed ZeRO-3 (recode_lib.training.rm_launch), its bf16 optimizer: bf16
    # weights 2 + bf16 grads 2 + fp32 master 4 + Adam 8, sharded over the processes.
    if not bf16:
        precision = "fp32 + fp32 Adam"
    elif zero3:
        precision = "bf16 + fp32 master + fp32 Adam"
    else:
        precision = "bf16 autocast over fp32 weights + fp32 Adam"
    batch = int(p.BATCH_SIZE)
    max_len = int(p.MAX_LENGTH)
    total = 16 * arch.params
    trainer = Trainer(
        p.MODEL,
        arch,
        processes=procs,
        bytes_per_param=16,
        precision=precision,
        zero3=zero3,
        micro_batch=2 * batch,
        seq_len=max_len,
        gradient_checkpointing=bool(p.GRADIENT_CHECKPOINTING),
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
    epochs = float(p.EPOCHS)
    if int(p.MAX_STEPS) > 0:
        pairs, epochs = int(p.MAX_STEPS) * batch * int(p.GRAD_ACCUM) * procs, 1.0
    models = 2 if p.ABLATION else 1
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


def _03(nb: str, p: LcbRbParams, pp: Profile) -> list[Stage]:
    out = []
    sources = _list(p.SOURCES)
    per = int(p.N_PROBLEMS)
    problems = sum(n_problems(s, per) for s in sources)
    samples = int(p.SAMPLES_PER_PROBLEM)
    max_new = int(p.MAX_NEW_TOKENS)
    prompt = max([prompt_tokens(s) for s in sources] or [PROMPT_TOKENS["contest"]])
    if is_vllm(p.BACKEND):
        out.append(
            _engine_stage(
                nb,
                "policy traces",
                p.MODEL,
                requests=problems * samples,
                max_new=max_new,
                prompt=prompt,
                batch=p.BATCH_SIZE,
                sandbox=problems * samples,
                workers=1,
            )
        )  # 03 declares no WORKERS
        seeded_sources = _list(p.SEEDED_SOURCES)
        if seeded_sources:
            n = len(seeded_sources) * int(p.N_SEEDED) * (2 + int(p.N_MUTANTS))
            out.append(
                _engine_stage(
                    nb,
                    "seeded traces",
                    p.MODEL,
                    requests=n,
                    max_new=max_new,
                    prompt=prompt + max_new,
                    batch=p.BATCH_SIZE,
                    sandbox=n,
                )
            )
    if is_vllm(p.JUDGE_BACKEND):
        pairs = problems * int(p.MAX_PAIRS_PER_PROBLEM)
        synth, side = crpl_pairs(pp)
        val = float((other(pp, CrplSynthesisParams) or CRPL_NOT_RUN).VAL_FRACTION)
        synth *= val / max(1e-9, 1 - val)
        calls = pairs * (2 + 2 + 2) + 2 * synth * (2 + 2)  # consistency, pointwise, pairwise
        trace = max(max_new, side)
        out.append(
            _engine_stage(
                nb,
                "judges",
                p.JUDGE_MODEL,
                requests=calls,
                max_new=p.JUDGE_MAX_NEW_TOKENS,
                prompt=prompt + 2 * trace + INSTRUCTION_TOKENS,
                batch=p.BATCH_SIZE,
                tp=p.JUDGE_TP,
                tp_param="JUDGE_TP",
                notes=["the RM baselines score on CPU (ProcessRewardScorer's default device)"],
            )
        )
    return out


def n_seeds(seeds: str) -> int:
    """Training runs per variant: a notebook's SEEDS (one run per seed; empty: one)."""
    return max(1, len(_list(seeds)))


def seeded(runs: dict[str, list[str]], seeds: int) -> dict[str, list[str]]:
    """Each run once per seed (names as training.launch.seeded_variants gives them)."""
    if seeds <= 1:
        return runs
    return {f"{name}_seed{i}": rewards for name, rewards in runs.items() for i in range(seeds)}


# 04's cross-model transfer: the gated run and its outcome-only baseline on the other policy
TRANSFER_RUNS = {"transfer": ["gated"], "transfer_outcome_only": ["outcome_only"]}


def _04(nb: str, p: CgGrpoParams, pp: Profile) -> list[Stage]:
    variants = _list(p.VARIANTS)
    seeds = n_seeds(p.SEEDS)
    runs_of = GrpoRuns(p.LAUNCHER, p.NUM_PROCESSES, p.RECIPE_FIELDS, p.BENCHMARK, p.WORKERS)
    out = _grpo_group(nb, runs_of, pp, p.RECIPE, p.MODEL, seeded({v: [v] for v in variants}, seeds))
    transfer = p.TRANSFER_MODEL
    if transfer:
        out += _grpo_group(
            nb, runs_of, pp, p.TRANSFER_RECIPE or p.RECIPE, transfer, seeded(TRANSFER_RUNS, seeds)
        )
    bench, problems = eval_problems(p.BENCHMARK, p.N_TRAIN, p.N_EVAL, p.EVAL_BENCHMARK)
    models = {p.MODEL: 1 + len(variants) * seeds}
    if transfer:  # its start model and each transfer run
        models[transfer] = models.get(transfer, 0) + 1 + len(TRANSFER_RUNS) * seeds
    out += _eval_stages(
        nb,
        models,
        bench=bench,
        problems=problems,
        samples=int(p.EVAL_N_SAMPLES),
        max_new=int(p.EVAL_MAX_NEW_TOKENS),
        backend=p.BACKEND,
        workers=p.WORKERS,
    )
    return out


def _05(nb: str, p: CodegenEvalParams, pp: Profile) -> list[Stage]:
    if not is_vllm(p.BACKEND):
        return []
    p4 = other(pp, CgGrpoParams)
    seeds = n_seeds(p4.SEEDS if p4 else "")  # 05 evaluates every seed's policy of 04
    models = {p.MODEL: 1 + len(_list(p.VARIANTS)) * seeds}
    if p.TRANSFER and p4 and p4.TRANSFER_MODEL:
        models[p4.TRANSFER_MODEL] = (
            models.get(p4.TRANSFER_MODEL, 0) + 1 + len(TRANSFER_RUNS) * seeds
        )
    out = []
    per = int(p.N_PROBLEMS)
    benches = _list(p.BENCHMARKS)
    problems = sum(n_problems(b, per) for b in benches)
    prompt = max([prompt_tokens(b) for b in benches] or [PROMPT_TOKENS["function"]])
    for model, count in models.items():
        requests = count * problems * int(p.N_SAMPLES)
        st = _engine_stage(
            nb,
            f"evaluation ({model.split('/')[-1]})" if len(models) > 1 else "evaluation",
            model,
            requests=requests,
            max_new=p.MAX_NEW_TOKENS,
            prompt=prompt,
            batch=256,
            tp=p.TENSOR_PARALLEL_SIZE,
            tp_param="TENSOR_PARALLEL_SIZE",
            sandbox=requests,
            workers=p.WORKERS,
            formula=(
                f"{count} checkpoint(s) x {problems:,} problems ({len(benches)} "
                f"benchmarks) x {p.N_SAMPLES} samples x "
                f"{int(p.MAX_NEW_TOKENS):,} tok"
            ),
        )
        st.runs = count
        st.work.overlap_sandbox = True  # single setting: judged while generating
        out.append(st)
    return out


def _06(nb: str, p: StrictnessSweepParams, pp: Profile) -> list[Stage]:
    ks = _list(p.KS) + ["inf"]
    runs = {f"k{k}": [f"strict_{k}"] for k in ks}
    runs.update({f"partial_{c}": [f"partial_{c}"] for c in _list(p.PARTIAL_CREDIT)})
    runs = seeded(runs, n_seeds(p.SEEDS))
    runs_of = GrpoRuns(p.LAUNCHER, p.NUM_PROCESSES, p.RECIPE_FIELDS, p.BENCHMARK, p.WORKERS)
    out = _grpo_group(nb, runs_of, pp, p.RECIPE, p.MODEL, runs)
    bench, problems = eval_problems(
        p.BENCHMARK, p.N_TRAIN, p.N_EVAL, p.EVAL_BENCHMARK, p.EVAL_DIFFICULTY
    )
    out += _eval_stages(
        nb,
        {p.MODEL: len(runs)},
        bench=bench,
        problems=problems,
        samples=int(p.EVAL_N_SAMPLES),
        max_new=int(p.EVAL_MAX_NEW_TOKENS),
        backend=p.BACKEND,
        workers=p.WORKERS,
    )
    return out


def _07(nb: str, p: WeightAveragingParams, pp: Profile) -> list[Stage]:
    if not is_vllm(p.BACKEND):
        return []
    p6 = other(pp, StrictnessSweepParams) if p.ENDPOINTS == "sweep" else None
    model = p6.MODEL if p6 else p.MODEL
    if p6 and p.SWEEP_PROBLEMS:
        bench, problems = eval_problems(
            p6.BENCHMARK, p6.N_TRAIN, p6.N_EVAL, p6.EVAL_BENCHMARK, p6.EVAL_DIFFICULTY
        )
        if p.N_PROBLEMS:
            problems = min(problems, int(p.N_PROBLEMS))
    else:
        bench = p.BENCHMARK
        problems = n_problems(bench, p.N_PROBLEMS, p.DIFFICULTY or "")
    max_new = int(p6.EVAL_MAX_NEW_TOKENS if p6 and p.SPEC_FROM_SWEEP else p.MAX_NEW_TOKENS)
    alphas = len(_list(p.ALPHAS))
    # with sweep endpoints and SWEEP_RUNS, 06's other runs (every seed's; the two endpoints
    # are alphas 0 and 1) are evaluated with the same spec, for 08's best single checkpoint
    others = 0
    if p6 and p.SWEEP_RUNS:
        ks6 = len(_list(p6.KS)) + 1 + len(_list(p6.PARTIAL_CREDIT))
        others = max(0, ks6 * n_seeds(p6.SEEDS) - 2)
    requests = (alphas + others) * problems * int(p.N_SAMPLES)
    st = _engine_stage(
        nb,
        f"alpha sweep ({alphas} alphas, in place)" + (f" + {others} sweep runs" if others else ""),
        model,
        requests=requests,
        max_new=max_new,
        prompt=prompt_tokens(bench),
        batch=256,
        tp=p.TENSOR_PARALLEL_SIZE,
        tp_param="TENSOR_PARALLEL_SIZE",
        sandbox=requests,
        workers=p.WORKERS,
        formula=(
            f"({alphas} alphas + {others} runs) x {problems:,} {bench} x "
            f"{p.N_SAMPLES} samples x {max_new:,} tok"
        ),
        notes=["both endpoints are read into host memory (float32) for the in-place merge"],
    )
    # data parallel: whole alphas per engine in waves, each wave judged while the next one
    # generates (recode_lib.weights.sweep); the other runs' evaluations judge while generating
    st.work.overlap_sandbox = True
    st.work.judge_batch = problems * int(p.N_SAMPLES)
    return [st]


def _09(nb: str, p: RepairParams, pp: Profile) -> list[Stage]:
    rounds = int(p.ROUNDS)
    runs_of = GrpoRuns(p.LAUNCHER, p.NUM_PROCESSES, p.RECIPE_FIELDS, p.BENCHMARK, p.WORKERS)
    steps = int(read_recipe(p.RECIPE, run_fields(runs_of, p.MODEL))["max_steps"])  # per round
    out = _grpo_group(
        nb,
        runs_of,
        pp,
        p.RECIPE,
        p.MODEL,
        {"original_only": [p.REWARD], "failure_conditioned": [p.REWARD]},
        steps=rounds * steps,
    )
    bench, problems = eval_problems(p.BENCHMARK, p.N_TRAIN, p.N_EVAL, p.EVAL_BENCHMARK)
    n_train = n_problems(p.BENCHMARK, p.N_TRAIN)
    samples = int(p.EVAL_N_SAMPLES)
    repair = problems * int(p.REPAIR_PER_PROBLEM)
    if is_vllm(p.BACKEND):
        out += _eval_stages(
            nb,
            {p.MODEL: 1},
            bench=bench,
            problems=n_train * rounds + problems,
            samples=samples,
            max_new=int(p.EVAL_MAX_NEW_TOKENS),
            backend=p.BACKEND,
            workers=p.WORKERS,
            name="attempts (start + each round)",
        )
        out += _eval_stages(
            nb,
            {p.MODEL: 3},
            bench=bench,
            problems=problems + repair,
            samples=samples,
            max_new=int(p.EVAL_MAX_NEW_TOKENS),
            backend=p.BACKEND,
            workers=p.WORKERS,
            name="comparison (original + repair)",
        )
        if p.PAPER_B_EVAL:  # the same comparison under paper B's protocol, beside it
            hard = n_problems(bench, p.N_EVAL, p.PAPER_B_DIFFICULTY or "")
            out += _eval_stages(
                nb,
                {p.MODEL: 3},
                bench=bench,
                problems=hard * (1 + int(p.REPAIR_PER_PROBLEM)),
                samples=samples,
                max_new=int(p.PAPER_B_MAX_NEW_TOKENS),
                backend=p.BACKEND,
                workers=p.WORKERS,
                name="comparison under paper B's protocol (original + repair)",
            )
    return out


def _10(nb: str, p: MathDomainParams, pp: Profile) -> list[Stage]:
    variants = _list(p.VARIANTS)
    out = _grpo_group(
        nb,
        GrpoRuns(p.LAUNCHER, p.NUM_PROCESSES, p.RECIPE_FIELDS),  # 10 has no WORKERS
        pp,
        p.RECIPE,
        p.MODEL,
        {v: [v] for v in variants},
        extra={"benchmark": p.TRAIN_SET},
    )
    bench = p.EVAL_BENCHMARK
    problems = n_problems(bench, p.N_EVAL)
    if is_vllm(p.BACKEND):
        for st in _eval_stages(
            nb,
            {p.MODEL: 1 + len(variants)},
            bench=bench,
            problems=problems,
            samples=int(p.EVAL_N_SAMPLES),
            max_new=int(p.EVAL_MAX_NEW_TOKENS),
            backend=p.BACKEND,
            workers=1,
        ):
            st.work.sandbox_records = 0.0  # answers are compared, not executed
            out.append(st)
    return out


def _11(nb: str, p: SettingsSweepParams, pp: Profile) -> list[Stage]:
    settings = _list(p.SETTINGS)
    ks = _list(p.KS) + ["inf"]
    runs_of = GrpoRuns(p.LAUNCHER, p.NUM_PROCESSES, p.RECIPE_FIELDS, p.BENCHMARK, p.WORKERS)
    out = []
    for s in settings:
        recipe = p.SINGLE_RECIPE if s == "single" else str(p.RECIPE).format(setting=s)
        for st in _grpo_group(
            nb,
            runs_of,
            pp,
            recipe,
            p.MODEL,
            {f"k{k}": [f"strict_{k}"] for k in ks},
            extra={"max_tool_calls": p.MAX_TOOL_CALLS},
        ):
            st.name = f"{s}: {st.name}"
            out.append(st)
    bench, problems = eval_problems(
        p.BENCHMARK, p.N_TRAIN, p.N_EVAL, p.EVAL_BENCHMARK, p.EVAL_DIFFICULTY
    )
    max_new = int(p.EVAL_MAX_NEW_TOKENS)
    turns_of = {s: (1 if s == "single" else int(p.MAX_TURNS)) for s in settings}
    for s in settings:
        out += _eval_stages(
            nb,
            {p.MODEL: len(ks)},
            bench=bench,
            problems=problems,
            samples=int(p.EVAL_N_SAMPLES),
            max_new=max_new,
            backend=p.BACKEND,
            workers=p.WORKERS,
            turns=turns_of[s],
            name=f"{s}: evaluation",
        )
        alphas = len(_list(p.ALPHAS))
        out += _eval_stages(
            nb,
            {p.MODEL: alphas},
            bench=bench,
            problems=problems,
            samples=int(p.ALPHA_N_SAMPLES),
            max_new=max_new,
            backend=p.BACKEND,
            workers=p.WORKERS,
            turns=turns_of[s],
            name=f"{s}: alpha grid ({alphas} alphas)",
        )
    return out


BUILDERS: dict[type[StepParams], Callable[[str, Any, Profile], list[Stage]]] = {
    DataAndModelsParams: _00,
    CrplSynthesisParams: _01,
    RewardModelParams: _02,
    LcbRbParams: _03,
    CgGrpoParams: _04,
    CodegenEvalParams: _05,
    StrictnessSweepParams: _06,
    WeightAveragingParams: _07,
    RepairParams: _09,
    MathDomainParams: _10,
    SettingsSweepParams: _11,
}


def step_parameters(stem: str, params: Mapping[str, Any]) -> StepParams:
    """A notebook's effective parameters (a dict, as recode_lib.runner.pipeline gives them) as its
    step's typed parameters; StageError naming the step and the bad name or value."""
    cls = STEPS.get(stem)
    if cls is None:
        raise StageError(f"{stem}: no such pipeline step (recode_lib.steps.catalog)")
    unknown = sorted(set(params) - set(cls.fields()))
    if unknown:
        raise StageError(f"{stem}: unknown parameter(s) {unknown}")
    try:
        return cls(**params)
    except ParameterError as exc:
        raise StageError(str(exc)) from None


def other(pp: Profile, cls: type[S]) -> S | None:
    """The typed parameters of step `cls` in the profile (None: the profile does not run it)."""
    got = pp.get(cls.STEP)
    return None if got is None else cls(**got)


def notebook_stages(stem: str, params: dict, profile_params: dict | None = None) -> list[Stage]:
    """The GPU stages of notebook `stem` under `params` (empty: it runs on CPU, or touches no
    model, as 08 and 99). `params` and `profile_params` ({stem: parameters}) are dicts, as
    recode_lib.runner.pipeline gives them; the builders get them typed (step_parameters)."""
    p = step_parameters(stem, params)
    builder = BUILDERS.get(type(p))
    return builder(stem, p, dict(profile_params or {})) if builder else []
