"""The typed parameters of every pipeline step (notebooks 00-11, 99): names, types, defaults
and a docstring per field, and STEPS, the registry the runner, the plan and the dry run read.

    from recode_lib.steps.catalog import STEPS
    STEPS["04_cg_grpo"].defaults()["N_TRAIN"]   # 8: the notebook's parameters cell
    STEPS["04_cg_grpo"].doc("N_TRAIN")

A step's defaults are its notebook's parameters cell, which tests/test_steps.py keeps equal to
these classes (recode_lib.steps.cells writes the cell from them). To add a parameter: add the
field here (type, default, docstring), run `python -m recode_lib.steps --write` to put it
into the notebook's parameters cell, and set its value in the profiles that differ from the
default (notebooks/params/*.yaml). A parameter added to a cell first (a merge):
`python -m recode_lib.steps --fields` prints its line for this file. Profiles are checked against
these classes before any notebook runs (recode_lib.steps.profile). It holds no logic: what a step
does is its notebook's and the library's.
"""

from dataclasses import dataclass
from typing import ClassVar

from recode_lib.steps.base import StepParams, param
from recode_lib.training.recipe_check import check_fields


@dataclass(frozen=True)
class DataAndModelsParams(StepParams):
    """00_data_and_models.ipynb's parameters."""

    STEP: ClassVar[str] = "00_data_and_models"

    PROFILE: str = param(
        "smoke", "the profile's name (the runner always sets it); results go to runs/<PROFILE>/"
    )
    MODEL: str = param(
        "smollm2",
        "the policy: an alias, a folder or a hub id (recode_lib.core.models.resolve_model)",
    )
    BACKEND: str = param(
        "hf", "generation backend: hf | vllm | vllm_standin (recode_lib.generation)"
    )
    MAX_NEW_TOKENS: int = param(96, "new tokens per generated response")
    SEED: int = param(0, "the random seed of sampling and training")
    COUNT_PROBLEMS: bool = param(
        True,
        "load each local benchmark to count its problems (first HumanEval+/MBPP+ load computes "
        "expected outputs once)",
    )
    CALIBRATE: bool = param(
        False, "laptop profile: keep candidate problems the start model solves sometimes"
    )
    CAL_N_EASY: int = param(48, "seeded easy tasks (recode_lib.data.easy_tasks)")
    CAL_N_EFFICIENCY: int = param(
        0, "+ efficiency tasks (a quadratic answer times out on the largest input)"
    )
    CAL_N_EASIEST: int = param(
        8, "+ the easiest problems of MBPP+ and HumanEval+ each (skipped without the data)"
    )
    CAL_N_SAMPLES: int = param(8, "samples per candidate")
    CAL_TEMPERATURE: float = param(0.9, "calibration: sampling temperature")
    CAL_MAX_NEW_TOKENS: int = param(128, "calibration: new tokens per sample")
    CAL_REASONING: bool = param(False, "prompt style: must match the training recipes' `reasoning`")
    CAL_KEEP_KS: str = param(
        "inf", 'keep when 0 < rate < 1 under one of these rewards ("2,inf": also R_2-only solves)'
    )
    CAL_MAX_KEEP: int = param(0, "0: keep every 0 < rate < 1 problem")
    CAL_BATCH_SIZE: int = param(16, "calibration: prompts per generation batch")
    CAL_PRECISION: str = param(
        "native",
        "hf backend: native | bfloat16 | auto (bfloat16 where the machine computes it natively;"
        " the GRPO recipes' generation_precision: the rates their sampler sees)",
    )
    WORKERS: int = param(2, "sandbox worker processes")
    SFT_START: bool = param(
        True,
        "the shared SFT start: LoRA SFT of MODEL on program-written transcripts (single, tool, "
        "agentic)",
    )
    SFT_MODEL: str = param(
        "", 'instead: any SFT checkpoint folder every RL run starts from ("": none)'
    )
    SFT_BENCHMARK: str = param(
        "mbpp_train", "problems with reference solutions, minus every task of SFT_HELD_OUT"
    )
    SFT_HELD_OUT: str = param(
        "humaneval,humanevalplus,mbpp,mbppplus,microbench,leetcode,easy",
        "every benchmark the profile evaluates or calibrates on",
    )
    SFT_N_PROBLEMS: int = param(4, "0: all that remain")
    SFT_SETTINGS: str = param(
        "single,tool,agentic",
        "comma-separated settings the SFT transcripts cover: single, tool, agentic",
    )
    SFT_SINGLE_PROMPTS: str = param(
        "reasoning,direct",
        "prompt styles of the single-turn transcripts (the recipes' `reasoning`)",
    )
    SFT_MULTITURN_STATEMENTS: str = param(
        "shown",
        'tool/agentic transcripts: "shown" (the statement\'s own examples), "hidden" (prose + '
        "signature, own checks), or both",
    )
    SFT_MAX_STEPS: int = param(2, "0: SFT_EPOCHS passes")
    SFT_EPOCHS: float = param(1.0, "SFT passes over the transcripts (with SFT_MAX_STEPS 0)")
    SFT_BATCH_SIZE: int = param(2, "transcripts per micro-batch (1 keeps CPU memory low)")
    SFT_GRAD_ACCUM: int = param(1, "micro-batches per optimizer step")
    SFT_LEARNING_RATE: float = param(0.0002, "the SFT learning rate")
    SFT_LORA_R: int = param(16, "the SFT LoRA rank")
    SFT_MAX_LENGTH: int = param(2048, "tokens; longer transcripts are left out")
    SFT_BF16: bool | str = param(
        False,
        'bf16 autocast over fp32 weights; "auto": where the CPU/GPU computes bf16 natively '
        "(recode_lib.core.bf16)",
    )


@dataclass(frozen=True)
class CrplSynthesisParams(StepParams):
    """01_crpl_synthesis.ipynb's parameters."""

    STEP: ClassVar[str] = "01_crpl_synthesis"

    PROFILE: str = param(
        "smoke", "the profile's name (the runner always sets it); results go to runs/<PROFILE>/"
    )
    MODEL: str = param("smollm2", "the policy writing base traces")
    BACKEND: str = param(
        "hf", "generation backend: hf | vllm | vllm_standin (recode_lib.generation)"
    )
    GENERATOR_MODEL: str = param(
        "smollm2", "the rewrite generator (paper: Qwen2.5-Coder-32B-Instruct)"
    )
    GENERATOR_BACKEND: str = param(
        "hf", "the generator's backend: hf | vllm | vllm_standin | openai"
    )
    GENERATOR_TP: int = param(
        1, "vLLM tensor-parallel size of the generator (`recode plan` chooses it)"
    )
    SECOND_GENERATOR: str = param("rules", 'cross-generator ablation partner; "" to skip')
    SECOND_GENERATOR_TP: int = param(
        1, "the same for the second generator (paper: Llama-3.1-70B, 4 on 80 GB GPUs)"
    )
    SOURCE: str = param(
        "mbpp_train", "training problems: never a benchmark the pipeline evaluates on"
    )
    HELD_OUT_BENCHMARKS: str = param(
        "humanevalplus,mbppplus,microbench",
        "what 05 evaluates: SOURCE must share no problem with them",
    )
    N_PROBLEMS: int = param(8, "problems used (the first N; 0: all)")
    TRACES_PER_PROBLEM: int = param(1, "policy traces per problem")
    POLICY_MAX_NEW_TOKENS: int = param(160, "new tokens of a policy trace")
    REWRITE_MAX_NEW_TOKENS: int = param(160, "new tokens of a rewritten trace")
    N_CANDIDATES: int = param(1, "rewrites generated per trace (the first usable one is kept)")
    RULE_FALLBACK: bool = param(True, "a rule-based rewrite when the generator gives no usable one")
    TRAILING_REASONING: bool = param(
        True, "use prose after the code as reasoning when none precedes it (small models)"
    )
    DIMENSIONS: str = param(
        "factual_correctness,logical_rigor,logical_coherence",
        "comma-separated CRPL reasoning dimensions a trace is rewritten along",
    )
    VAL_FRACTION: float = param(0.25, "the fraction of pairs held out for validation")
    BATCH_SIZE: int = param(8, "prompts per generation batch (hf backend)")
    SEED: int = param(0, "the random seed of sampling and training")


@dataclass(frozen=True)
class RewardModelParams(StepParams):
    """02_reward_model.ipynb's parameters."""

    STEP: ClassVar[str] = "02_reward_model"

    PROFILE: str = param(
        "smoke", "the profile's name (the runner always sets it); results go to runs/<PROFILE>/"
    )
    MODEL: str = param("smollm2", "RM backbone (paper: Qwen2.5-Coder-7B-Instruct)")
    MAX_LENGTH: int = param(1024, "tokens per training sequence (longer ones are truncated)")
    EPOCHS: float = param(2.0, "training epochs")
    MAX_STEPS: int = param(-1, "optimizer steps (-1: by EPOCHS)")
    LEARNING_RATE: float = param(2e-05, "the optimizer's learning rate")
    BATCH_SIZE: int = param(4, "prompts per generation batch (hf backend)")
    GRAD_ACCUM: int = param(1, "gradient accumulation steps")
    USE_CPU: bool = param(True, "train on the CPU")
    BF16: bool = param(False, "bfloat16 mixed precision")
    GRADIENT_CHECKPOINTING: bool = param(
        False, "activation checkpointing (less memory, more compute)"
    )
    LAUNCHER: str = param(
        "inprocess",
        "inprocess (CPU / one GPU) | accelerate (ZeRO-3 over NUM_PROCESSES GPUs) | dryrun",
    )
    NUM_PROCESSES: int = param(1, "accelerate processes (GPUs) with LAUNCHER accelerate")
    SAVE_STEPS: int = param(0, "> 0: a checkpoint every SAVE_STEPS steps, resumed after a failure")
    ABLATION: bool = param(
        False, "also train a second RM on the cross-generator pairs (the generator ablation)"
    )
    RETRAIN: bool = param(False, "train the reward model again even when a finished one is on disk")
    SCORE_BATCH_SIZE: int = param(8, "traces per reward-model forward pass when scoring")
    N_BOOT: int = param(1000, "bootstrap resamples of the confidence intervals")
    SEED: int = param(0, "the random seed of sampling and training")


@dataclass(frozen=True)
class LcbRbParams(StepParams):
    """03_lcb_rb.ipynb's parameters."""

    STEP: ClassVar[str] = "03_lcb_rb"

    PROFILE: str = param(
        "smoke", "the profile's name (the runner always sets it); results go to runs/<PROFILE>/"
    )
    MODEL: str = param("smollm2", "the policy sampling traces")
    BACKEND: str = param(
        "hf", "generation backend: hf | vllm | vllm_standin (recode_lib.generation)"
    )
    JUDGE_MODEL: str = param(
        "smollm2", "the open LLM judge: baselines, and the consistency judge unless set below"
    )
    JUDGE_BACKEND: str = param("hf", "the judge's backend: hf | vllm | vllm_standin")
    JUDGE_TP: int = param(1, "vLLM tensor-parallel size of the judge (`recode plan` chooses it)")
    CONSISTENCY_JUDGE_MODEL: str = param(
        "",
        'the consistency filter\'s judge at JUDGE_BASE_URL (paper: a GPT-4o-class model; "": '
        "JUDGE_MODEL)",
    )
    JUDGE_BASE_URL: str = param("", "OpenAI-compatible endpoint of the endpoint judges")
    JUDGE_API_KEY_ENV: str = param(
        "OPENAI_API_KEY", "the variable holding its key (a localhost endpoint needs none)"
    )
    API_JUDGES: str = param(
        "", "endpoint baseline judges, comma-separated (paper: a GPT-4-Turbo-class model)"
    )
    BASELINE_CLASSIFIERS: str = param(
        "", "public reward-model classifiers (Hugging Face ids), comma-separated"
    )
    ON_MISSING_JUDGE: str = param(
        "error", 'endpoint or key missing: "error", or "fallback" to JUDGE_MODEL (recorded)'
    )
    SOURCES: str = param(
        "leetcode,humanevalplus", "comma-separated benchmarks the policy traces come from"
    )
    N_PROBLEMS: int = param(4, "per source")
    SAMPLES_PER_PROBLEM: int = param(4, "policy samples per problem")
    SEEDED_SOURCES: str = param(
        "microbench,humanevalplus", "empty: policy traces only (the paper's construction)"
    )
    N_SEEDED: int = param(4, "seeded problems per source")
    N_MUTANTS: int = param(2, "single-fault mutants of each reference")
    TRAILING_REASONING: bool = param(
        True, "prose after the code counts as reasoning (small models); off in paper"
    )
    TEMPERATURE: float = param(0.8, "sampling temperature (0: greedy)")
    MAX_NEW_TOKENS: int = param(160, "new tokens per generated response")
    MAX_PAIRS_PER_PROBLEM: int = param(2, "benchmark pairs kept per problem")
    ON_UNPARSABLE: str = param("keep", '"reject" in the paper profile')
    ADJUDICATION: str = param("auto", '"widget": adjudicate interactively in JupyterLab')
    AUTO_POLICY: str = param("pending", 'what batch runs record: "pending" or "accept"')
    VERSION: str = param(
        "smoke-1", "the benchmark file's version: lcb_rb-v<VERSION>[-unverified].jsonl"
    )
    JUDGE_MAX_NEW_TOKENS: int = param(16, "new tokens of one judge verdict")
    N_BOOT: int = param(1000, "bootstrap resamples of the confidence intervals")
    BATCH_SIZE: int = param(8, "prompts per generation batch (hf backend)")
    SEED: int = param(0, "the random seed of sampling and training")


@dataclass(frozen=True)
class CgGrpoParams(StepParams):
    """04_cg_grpo.ipynb's parameters."""

    STEP: ClassVar[str] = "04_cg_grpo"

    PROFILE: str = param(
        "smoke", "the profile's name (the runner always sets it); results go to runs/<PROFILE>/"
    )
    MODEL: str = param("smollm2", "the shared start of every variant")
    BACKEND: str = param("hf", "evaluation generation backend: hf | vllm")
    RECIPE: str = param("cg_grpo_smoke", "recode_lib/training/recipes/<RECIPE>.yaml")
    RECIPE_FIELDS: dict = param(
        {},
        "recipe fields by their own names, over the recipe file, e.g. {max_steps: 1} "
        "(recode_lib.training.recipe_check)",
        check=check_fields,
    )
    VARIANTS: str = param("gated,outcome_only,additive", "reward names (recode_lib.rewards)")
    RM_PATH: str = param("", "empty: RUN/02_reward_model/rm")
    PROC_SCALE: str = param(
        "",
        'R_proc\'s scale: "" sigmoid(RM score); "start": centred and scaled by the RM\'s scores '
        "of the start model's samples on the training problems",
    )
    TRANSFER_MODEL: str = param(
        "", 'cross-model RM transfer: another policy trained with the same RM ("": off)'
    )
    TRANSFER_RECIPE: str = param("", "its recipe (empty: RECIPE); paper: cg_grpo_transfer_paper")
    BENCHMARK: str = param(
        "mbppplus", "training problems: the first N_TRAIN; evaluation: the next N_EVAL"
    )
    EVAL_BENCHMARK: str = param(
        "", "empty: held-out problems of BENCHMARK; else the first N_EVAL of this one"
    )
    N_TRAIN: int = param(8, "training problems: the first N_TRAIN of BENCHMARK")
    N_EVAL: int = param(
        8, "held-out evaluation problems: the next N_EVAL (or the first of EVAL_BENCHMARK)"
    )
    LAUNCHER: str = param(
        "inprocess",
        "inprocess | accelerate (multi-GPU, configs/accelerate/zero3.yaml) | dryrun (CPU check)",
    )
    NUM_PROCESSES: int = param(1, "accelerate processes (GPUs)")
    EVAL_MAX_NEW_TOKENS: int = param(256, "evaluation: new tokens per response")
    EVAL_N_SAMPLES: int = param(
        1, "held-out samples per problem (pass@1 and its CI average over them)"
    )
    EVAL_TEMPERATURE: float = param(0.0, "0: greedy, with one sample per problem")
    REASONING: bool = param(True, "reasoning-then-code prompt, in training and evaluation alike")
    EVAL_BATCH_SIZE: int = param(8, "hf backend")
    EVAL_PRECISION: str = param(
        "native",
        "hf backend: native | bfloat16 | float32 | int8 "
        "(recode_lib.core.models.inference_precision) | auto (bfloat16 where native)",
    )
    WORKERS: int = param(2, "sandbox workers (rewards and evaluation)")
    SEED: int = param(0, "the random seed of sampling and training")
    SEEDS: str = param(
        "0", "training seeds: every variant (and transfer run) once per seed; 05 reports the spread"
    )


@dataclass(frozen=True)
class CodegenEvalParams(StepParams):
    """05_codegen_eval.ipynb's parameters."""

    STEP: ClassVar[str] = "05_codegen_eval"

    PROFILE: str = param(
        "smoke", "the profile's name (the runner always sets it); results go to runs/<PROFILE>/"
    )
    MODEL: str = param("smollm2", "policy to evaluate (recode_lib.core.models.resolve_model)")
    BACKEND: str = param("hf", "hf | vllm | openai")
    BENCHMARKS: str = param(
        "humanevalplus,mbppplus,microbench",
        "comma-separated benchmarks evaluated (recode_lib.data)",
    )
    N_PROBLEMS: int = param(10, "first N problems of each benchmark (0: all)")
    N_SAMPLES: int = param(1, "samples per problem")
    PASS_K: str = param("1", "comma-separated k values (each at most N_SAMPLES)")
    TEMPERATURE: float = param(0.0, "0: greedy")
    TOP_P: float = param(0.95, "nucleus sampling top-p")
    MAX_NEW_TOKENS: int = param(320, "new tokens per generated response")
    REASONING: bool = param(True, "ask for <think> reasoning before the code")
    BATCH_SIZE: int = param(8, "hf backend")
    PRECISION: str = param(
        "native",
        "hf backend: native | bfloat16 | int8 (CPU: ~2x faster decoding; other numerics, part "
        "of the protocol)",
    )
    TENSOR_PARALLEL_SIZE: int = param(1, "vllm backend")
    BASE_URL: str = param("http://localhost:8000/v1", "openai backend")
    WORKERS: int = param(2, "sandbox workers")
    SEED: int = param(0, "the random seed of sampling and training")
    VARIANTS: str = param(
        "outcome_only,gated,additive", 'notebook-04 policies to evaluate too ("": start model only)'
    )
    HEADLINE_BENCHMARKS: str = param(
        "", 'benchmarks averaged in the headline table ("": all BENCHMARKS)'
    )
    TRANSFER: bool = param(
        False,
        "also 04's cross-model RM transfer policies and their start model (run 04 with "
        "TRANSFER_MODEL)",
    )
    LCB_START_DATE: str = param(
        "",
        "LiveCodeBench: only problems released on or after this date (after the policy's release)",
    )
    GREEDY: bool = param(
        True, "greedy pass@1 beside the sampled one (free when sampling is greedy with one sample)"
    )
    N_BOOT: int = param(1000, "bootstrap resamples of the gains' intervals over problems")
    API_MODEL: str = param(
        "",
        "an API model's comparison row (paper: gpt-4-turbo; key and URL "
        'from $OPENAI_API_KEY, $OPENAI_BASE_URL; "": none)',
    )


@dataclass(frozen=True)
class StrictnessSweepParams(StepParams):
    """06_strictness_sweep.ipynb's parameters."""

    STEP: ClassVar[str] = "06_strictness_sweep"

    PROFILE: str = param(
        "smoke", "the profile's name (the runner always sets it); results go to runs/<PROFILE>/"
    )
    MODEL: str = param("smollm2", "the shared start checkpoint of every run")
    BACKEND: str = param("hf", "evaluation generation backend: hf | vllm")
    RECIPE: str = param("strictness_smoke", "recode_lib/training/recipes/<RECIPE>.yaml")
    RECIPE_FIELDS: dict = param(
        {},
        "recipe fields by their own names, over the recipe file, e.g. {max_steps: 1} "
        "(recode_lib.training.recipe_check)",
        check=check_fields,
    )
    KS: str = param("1,2,3", "finite k of the sweep (R_inf is always added)")
    PARTIAL_CREDIT: str = param(
        "discrete,continuous",
        "static partial-credit runs on the same frontier: discrete | continuous | empty",
    )
    RK_RULE: str = param(
        "smallest",
        'R_k of a problem with no test below 10^k: "smallest" (judged on its smallest tests) | '
        '"literal" (vacuously 1); recode_lib.sandbox.rk',
    )
    BENCHMARK: str = param(
        "microbench", "problems with size-annotated tests (codecontests_plus in the paper profile)"
    )
    N_TRAIN: int = param(8, "first N_TRAIN problems train, the next N_EVAL evaluate")
    N_EVAL: int = param(
        8, "held-out evaluation problems: the next N_EVAL (or the first of EVAL_BENCHMARK)"
    )
    EVAL_BENCHMARK: str = param(
        "", "empty: held-out problems of BENCHMARK; else this one (livecodebench in the paper)"
    )
    EVAL_DIFFICULTY: str = param(
        "", "empty: every held-out problem; e.g. hard (the paper's frontier is on LCB-hard)"
    )
    LAUNCHER: str = param("inprocess", "inprocess | accelerate | dryrun (CPU check of accelerate)")
    NUM_PROCESSES: int = param(1, "accelerate processes (GPUs) with LAUNCHER accelerate")
    EVAL_N_SAMPLES: int = param(2, "samples per problem (temperature EVAL_TEMPERATURE)")
    EVAL_TEMPERATURE: float = param(
        0.8, "the evaluation protocol (recorded in frontier.json; notebook 07 reuses it)"
    )
    EVAL_TOP_P: float = param(1.0, "evaluation: nucleus sampling top-p")
    EVAL_MAX_NEW_TOKENS: int = param(256, "evaluation: new tokens per response")
    EVAL_BATCH_SIZE: int = param(8, "evaluation: prompts per generation batch (hf backend)")
    REASONING: bool = param(True, "reasoning-then-code prompt, in training and evaluation alike")
    WORKERS: int = param(2, "sandbox worker processes")
    SEED: int = param(0, "the random seed of sampling and training")
    SEEDS: str = param(
        "0", "training seeds, comma-separated: one GRPO run per (run, seed), each evaluated"
    )


@dataclass(frozen=True)
class WeightAveragingParams(StepParams):
    """07_weight_averaging.ipynb's parameters."""

    STEP: ClassVar[str] = "07_weight_averaging"

    PROFILE: str = param(
        "smoke", "the profile's name (the runner always sets it); results go to runs/<PROFILE>/"
    )
    MODEL: str = param(
        "smollm2",
        "stand-in endpoints' base (only with ENDPOINTS fallback): notebook 00's SFT start of "
        "it, else it",
    )
    BACKEND: str = param("hf", "hf | vllm | openai")
    ENDPOINTS: str = param("sweep", "sweep (falls back to finetune, loudly) | finetune")
    ALPHAS: str = param(
        "-2.5,-1.0,-0.5,0.0,0.5,1.0,1.5,3.5",
        "comma-separated grid (inside [0, 1] and beyond |alpha| > 2 on both sides)",
    )
    SAVE_ALPHAS: str = param(
        "", "checkpoints are written only for these alphas (the sweep runs in memory)"
    )
    BENCHMARK: str = param(
        "microbench", "training problems: the first N_TRAIN; evaluation: the next N_EVAL"
    )
    DIFFICULTY: str = param(
        "",
        "empty: every problem; e.g. hard keeps problems whose difficulty is hard (also the "
        "sweep's)",
    )
    SPEC_FROM_SWEEP: bool = param(
        True,
        "with sweep endpoints: sample exactly as notebook 06 evaluated (its recorded spec); "
        "TEMPERATURE, TOP_P, MAX_NEW_TOKENS, REASONING below then apply to stand-ins only",
    )
    N_PROBLEMS: int = param(5, "first N problems, 0 for all")
    N_SAMPLES: int = param(
        4, "samples per problem and alpha, at least the largest k of notebook 08"
    )
    PASS_K: str = param("1", "comma-separated k of pass@k")
    TEMPERATURE: float = param(0.8, "sampling temperature (0: greedy)")
    TOP_P: float = param(0.95, "nucleus sampling top-p")
    MAX_NEW_TOKENS: int = param(192, "new tokens per generated response")
    REASONING: bool = param(
        True, "reasoning-then-code prompt (recode_lib.core.prompts.build_messages)"
    )
    BATCH_SIZE: int = param(8, "hf backend")
    TENSOR_PARALLEL_SIZE: int = param(1, "vllm backend")
    WORKERS: int = param(2, "sandbox workers")
    FORMAT_THRESHOLD: float = param(2.0, "format-error rise reported beyond this |alpha|")
    SWEEP_PROBLEMS: bool = param(
        True, "with sweep endpoints: evaluate on the sweep's held-out problems"
    )
    SEED_REPLICAS: bool = param(
        True,
        "with sweep endpoints of a sweep of several seeds: the same grid between each other "
        "seed's endpoints (OUT/seed<s>/)",
    )
    SWEEP_RUNS: bool = param(
        True,
        "with sweep endpoints: also evaluate 06's other runs (same spec and n) for 08's best "
        "single",
    )
    FINETUNE_SOURCE: str = param(
        "microbench", "stand-in endpoints: reference solutions of problems not evaluated"
    )
    FINETUNE_PROBLEMS: int = param(16, "the fine-tuned endpoint's training problems")
    FINETUNE_STEPS: int = param(4, "the fine-tuned endpoint's optimizer steps")
    FINETUNE_LR: float = param(1e-05, "the fine-tuned endpoint's learning rate")
    SEED: int = param(0, "the random seed of sampling and training")


@dataclass(frozen=True)
class EnsemblePasskParams(StepParams):
    """08_ensemble_passk.ipynb's parameters."""

    STEP: ClassVar[str] = "08_ensemble_passk"

    PROFILE: str = param(
        "smoke", "the profile's name (the runner always sets it); results go to runs/<PROFILE>/"
    )
    PASS_K: str = param("1,2,4", "budgets k, total samples per problem, split over a pool")
    STABLE_MIN: float = param(-1.0, "the extended pool keeps alphas in [STABLE_MIN, STABLE_MAX]")
    STABLE_MAX: float = param(2.0, "the extended pool keeps alphas <= STABLE_MAX")
    N_BOOT: int = param(1000, "bootstrap resamples of the confidence intervals")
    SEED: int = param(0, "the random seed of sampling and training")


@dataclass(frozen=True)
class RepairParams(StepParams):
    """09_repair.ipynb's parameters."""

    STEP: ClassVar[str] = "09_repair"

    PROFILE: str = param(
        "smoke", "the profile's name (the runner always sets it); results go to runs/<PROFILE>/"
    )
    MODEL: str = param("smollm2", "the start checkpoint of both runs")
    BACKEND: str = param("hf", "evaluation generation backend: hf | vllm")
    RECIPE: str = param("repair_smoke", "recode_lib/training/recipes/<RECIPE>.yaml")
    RECIPE_FIELDS: dict = param(
        {},
        "recipe fields by their own names, over the recipe file, e.g. {max_steps: 1} "
        "(recode_lib.training.recipe_check)",
        check=check_fields,
    )
    REWARD: str = param("strict_inf", "one registered reward name, the same for both runs")
    BENCHMARK: str = param(
        "microbench", "training problems: the first N_TRAIN; evaluation: the next N_EVAL"
    )
    EVAL_BENCHMARK: str = param("", "empty: held-out problems of BENCHMARK")
    N_TRAIN: int = param(4, "first N_TRAIN problems train, the next N_EVAL evaluate")
    N_EVAL: int = param(
        3, "held-out evaluation problems: the next N_EVAL (or the first of EVAL_BENCHMARK)"
    )
    REPAIR_PER_PROBLEM: int = param(1, "repair tasks per problem with a failed attempt")
    ROUNDS: int = param(1, "> 1: online failure-conditioned training (tasks rebuilt each round)")
    LAUNCHER: str = param("inprocess", "inprocess | accelerate | dryrun (CPU check of accelerate)")
    NUM_PROCESSES: int = param(1, "accelerate processes (GPUs) with LAUNCHER accelerate")
    EVAL_N_SAMPLES: int = param(1, "samples per problem / repair task")
    EVAL_TEMPERATURE: float = param(0.8, "evaluation: sampling temperature (0: greedy)")
    EVAL_MAX_NEW_TOKENS: int = param(128, "evaluation: new tokens per response")
    EVAL_BATCH_SIZE: int = param(8, "evaluation: prompts per generation batch (hf backend)")
    WORKERS: int = param(2, "sandbox worker processes")
    PAPER_B_EVAL: bool = param(
        False, "also evaluate under paper B's protocol (below) beside the one above"
    )
    PAPER_B_TEMPERATURE: float = param(1.0, "paper B: temperature 1.0 ...")
    PAPER_B_MAX_NEW_TOKENS: int = param(8192, "... 8,192 tokens ...")
    PAPER_B_DIFFICULTY: str = param("hard", '... on the hard held-out problems ("": every one)')
    N_BOOT: int = param(1000, "bootstrap resamples of the confidence intervals")
    SEED: int = param(0, "the random seed of sampling and training")


@dataclass(frozen=True)
class MathDomainParams(StepParams):
    """10_math_domain.ipynb's parameters."""

    STEP: ClassVar[str] = "10_math_domain"

    PROFILE: str = param(
        "smoke", "the profile's name (the runner always sets it); results go to runs/<PROFILE>/"
    )
    MODEL: str = param(
        "smollm2",
        "the policy: an alias, a folder or a hub id (recode_lib.core.models.resolve_model)",
    )
    BACKEND: str = param(
        "hf", "generation backend: hf | vllm | vllm_standin (recode_lib.generation)"
    )
    RECIPE: str = param("math_smoke", "the GRPO recipe: recode_lib/training/recipes/<RECIPE>.yaml")
    RECIPE_FIELDS: dict = param(
        {},
        "recipe fields by their own names, over the recipe file, e.g. {max_steps: 1} "
        "(recode_lib.training.recipe_check)",
        check=check_fields,
    )
    VARIANTS: str = param(
        "math_gated,math_outcome_only",
        "comma-separated reward variants, one GRPO run each (recode_lib.rewards)",
    )
    RM_PATH: str = param("", "empty: RUN/02_reward_model/rm")
    PROC_SCALE: str = param(
        "",
        'R_proc\'s scale: "" sigmoid(RM score); "start": centred and scaled by the RM\'s scores '
        "of MODEL's samples on the training problems at the recipe's training temperature and "
        "length (the rule of 04's runs)",
    )
    TRAIN_SET: str = param(
        "math_synth", "math_synth (offline, generated) | math_train (MATH_DATASET)"
    )
    MATH_DATASET: str = param("", "math_train: a Hugging Face dataset id or a local file/folder")
    MATH_SPLIT: str = param("train", "the MATH dataset's split the training problems come from")
    TRAIN_SEED: int = param(0, "math_synth: the generator's seed")
    EVAL_BENCHMARK: str = param("aime24", "never trained on")
    N_TRAIN: int = param(32, "0: the whole training set")
    N_EVAL: int = param(4, "0: all 30 AIME 2024 problems")
    EVAL_N_SAMPLES: int = param(4, "samples per problem: avg@n and pass@k")
    EVAL_TEMPERATURE: float = param(0.6, "evaluation: sampling temperature (0: greedy)")
    EVAL_TOP_P: float = param(0.95, "evaluation: nucleus sampling top-p")
    PASS_K: str = param("1,4", "each at most EVAL_N_SAMPLES")
    N_BOOT: int = param(1000, "bootstrap resamples of the confidence intervals")
    LAUNCHER: str = param(
        "inprocess",
        "inprocess | accelerate (multi-GPU, configs/accelerate/zero3.yaml) | dryrun (CPU check)",
    )
    NUM_PROCESSES: int = param(1, "accelerate processes (GPUs) with LAUNCHER accelerate")
    EVAL_MAX_NEW_TOKENS: int = param(384, "evaluation: new tokens per response")
    EVAL_BATCH_SIZE: int = param(8, "evaluation: prompts per generation batch (hf backend)")
    SEED: int = param(0, "the random seed of sampling and training")


@dataclass(frozen=True)
class SettingsSweepParams(StepParams):
    """11_settings_sweep.ipynb's parameters."""

    STEP: ClassVar[str] = "11_settings_sweep"

    PROFILE: str = param(
        "smoke", "the profile's name (the runner always sets it); results go to runs/<PROFILE>/"
    )
    MODEL: str = param("smollm2", "the shared start checkpoint of every run")
    BACKEND: str = param("hf", "evaluation generation backend: hf | vllm")
    SETTINGS: str = param("single,tool,agentic", "paper B's settings")
    RECIPE: str = param(
        "{setting}_smoke",
        "recode_lib/training/recipes/<RECIPE with the setting>.yaml (tool, agentic)",
    )
    RECIPE_FIELDS: dict = param(
        {},
        "recipe fields by their own names, over the recipe file, e.g. {max_steps: 1} "
        "(recode_lib.training.recipe_check)",
        check=check_fields,
    )
    SINGLE_RECIPE: str = param(
        "strictness_smoke", "the single-turn setting's recipe (notebook 06's)"
    )
    KS: str = param("1", "finite k of the sweep (R_inf is always added)")
    BENCHMARK: str = param(
        "microbench", "training problems: the first N_TRAIN; evaluation: the next N_EVAL"
    )
    N_TRAIN: int = param(4, "first N_TRAIN problems train, the next N_EVAL evaluate")
    N_EVAL: int = param(
        4, "held-out evaluation problems: the next N_EVAL (or the first of EVAL_BENCHMARK)"
    )
    EVAL_BENCHMARK: str = param("", "empty: held-out problems of BENCHMARK")
    EVAL_DIFFICULTY: str = param(
        "", "empty: every held-out problem; hard in the paper profile (LCB-hard, as 06/07)"
    )
    MAX_TOOL_CALLS: int = param(2, "tool calls per episode")
    MAX_TURNS: int = param(3, "evaluation: assistant turns per episode")
    TOOL_TIME_LIMIT_S: float = param(5.0, "one tool call's wall clock in the sandbox")
    LAUNCHER: str = param("inprocess", "inprocess | accelerate")
    NUM_PROCESSES: int = param(1, "accelerate processes (GPUs) with LAUNCHER accelerate")
    EVAL_N_SAMPLES: int = param(1, "samples per problem of each sweep run")
    EVAL_TEMPERATURE: float = param(
        0.8,
        "the evaluation protocol (sweep runs and alpha points alike; 06's in the paper profile)",
    )
    EVAL_TOP_P: float = param(1.0, "evaluation: nucleus sampling top-p")
    EVAL_MAX_NEW_TOKENS: int = param(192, "per turn")
    EVAL_BATCH_SIZE: int = param(8, "evaluation: prompts per generation batch (hf backend)")
    ALPHAS: str = param(
        "-1.0,0.5,2.0",
        "the alpha grid per setting (must hold one alpha in [0, 1]; 07's in the paper profile)",
    )
    ALPHA_N_SAMPLES: int = param(2, "samples per problem and alpha, at least the largest PASS_K")
    FORMAT_THRESHOLD: float = param(2.0, "format-error rise reported beyond this |alpha|")
    PASS_K: str = param("1,2", "ensemble budgets k (total samples per problem, split over a pool)")
    STABLE_MIN: float = param(-1.0, "the extended pool keeps alphas in [STABLE_MIN, STABLE_MAX]")
    STABLE_MAX: float = param(2.0, "the extended pool keeps alphas <= STABLE_MAX")
    N_BOOT: int = param(1000, "bootstrap resamples of the confidence intervals")
    WORKERS: int = param(2, "sandbox worker processes")
    SEED: int = param(0, "the random seed of sampling and training")


@dataclass(frozen=True)
class PaperFiguresParams(StepParams):
    """99_paper_figures.ipynb's parameters."""

    STEP: ClassVar[str] = "99_paper_figures"

    PROFILE: str = param(
        "smoke", "the profile's name (the runner always sets it); results go to runs/<PROFILE>/"
    )
    FIGURES_DIR: str = param(
        "figures", 'figures/<PROFILE>/ (paths.figures_dir), or "run": RUN/99_paper_figures/figures'
    )
    CLAIMS_REPORT: bool = param(
        False, "laptop profile: laptop_report.{json,md}, each laptop claim observed or not"
    )


# every pipeline step, in pipeline order: its notebook's stem -> its parameters
STEPS: dict[str, type[StepParams]] = {
    "00_data_and_models": DataAndModelsParams,
    "01_crpl_synthesis": CrplSynthesisParams,
    "02_reward_model": RewardModelParams,
    "03_lcb_rb": LcbRbParams,
    "04_cg_grpo": CgGrpoParams,
    "05_codegen_eval": CodegenEvalParams,
    "06_strictness_sweep": StrictnessSweepParams,
    "07_weight_averaging": WeightAveragingParams,
    "08_ensemble_passk": EnsemblePasskParams,
    "09_repair": RepairParams,
    "10_math_domain": MathDomainParams,
    "11_settings_sweep": SettingsSweepParams,
    "99_paper_figures": PaperFiguresParams,
}
