"""The GRPO run configuration: trl.GRPOConfig plus the fields this project adds.

    from recode_lib.training.config import RecodeGRPOConfig
    args = RecodeGRPOConfig(output_dir="runs/x", rewards=[{"name": "gated"}], max_steps=4)
    GRPOTrainer(model=..., args=args, reward_funcs=...)     # TRL reads its own fields

Every trl.GRPOConfig field (and so every transformers.TrainingArguments field) is accepted
unchanged, with TRL's default, except the few re-declared below with this project's defaults
(CPU-safe smoke runs: use_cpu, bf16=False, no activation checkpointing, constant schedule,
logging every step). The project's own fields say which model, problems, rewards and reward-model
placement a run uses. Building one (TRL's __post_init__) initialises the accelerator state and
derives the per-rank batch fields, so a recipe is one made with `build=False`: its fields as
set, nothing derived or checked (recode_lib.training.grpo.load_recipe), built by the training
process (grpo.grpo_config). This module imports trl at import time; import it lazily.
It does not load recipes (recode_lib.training.grpo does) nor build rewards (recode_lib.rewards).
"""

from __future__ import annotations

import dataclasses
from dataclasses import InitVar, dataclass, field

from trl import GRPOConfig

from recode_lib.process_reward.placement import RMPlacement

# a field's metadata: added after runs were first fingerprinted, so a run records it only when
# its recipe sets it (RECORDED_FIELDS) and the runs trained before it keep their fingerprint
WHEN_SET = {"recorded": "when set"}


@dataclass
class RecodeGRPOConfig(GRPOConfig):
    """trl.GRPOConfig with the project's fields (model, problems, rewards, RM placement)."""

    # --- the project's fields ---
    name: str = field(default="cg_grpo_smoke", metadata={"help": "run name (also run_name)"})
    model: str = field(
        default="smollm2",
        metadata={"help": "policy: alias, folder or hub id (recode_lib.core.models.resolve_model)"},
    )
    domain: str = field(default="code", metadata={"help": "code | math (prompts and columns)"})
    reasoning: bool = field(
        default=True,
        metadata={"help": "reasoning-then-code prompt (recode_lib.core.prompts.build_messages)"},
    )
    rewards: list = field(
        default_factory=lambda: [{"name": "gated"}],
        metadata={"help": "[{name, weight?, **options}]: names in recode_lib.rewards.REGISTRY"},
    )
    benchmark: str = field(
        default="mbppplus",
        metadata={"help": "problems the CLI trains on (notebooks pass problems directly)"},
    )
    n_problems: int | None = field(default=None, metadata={"help": "first N problems (None: all)"})
    sandbox_workers: int | None = field(
        default=None,
        metadata={"help": "sandbox processes for the rewards (None: the sandbox's default)"},
    )
    reward_batch_timeout_s: float = field(
        default=300.0,
        metadata={"help": "a reward batch still running after this scores 0 with its reason"},
    )
    allow_in_process_tests: bool = field(
        default=False,
        metadata={
            **WHEN_SET,
            "help": "train on tests that run in the submission's own process (inline unittest-"
            "style script tests, BigCodeBench: sandbox trust 'in_process'), which the "
            "submission can forge, so a reward of 1 there is no proof of correctness; "
            "False (default): the code rewards raise naming such a problem",
        },
    )
    cpu_threads: int | None = field(
        default=None,
        metadata={
            "help": "torch.set_num_threads on CPU runs (1 avoids OpenMP spin on a busy machine)"
        },
    )
    rm_path: str | None = field(
        default=None, metadata={"help": "the process reward model, for every reward that needs one"}
    )
    rm_placement: str = field(
        default="cpu",
        metadata={
            "help": "cpu | trainer | device:N | endpoint (recode_lib.process_reward.placement)"
        },
    )
    rm_dtype: str = field(
        default="auto",
        metadata={
            "help": "auto (float32 on CPU, bfloat16 on an accelerator) | float32 | bfloat16 "
            "| float16"
        },
    )
    rm_batch_size: int = field(default=8, metadata={"help": "traces per RM forward pass/request"})
    rm_resident: bool = field(
        default=True,
        metadata={
            **WHEN_SET,
            "help": "keep the RM loaded for the whole run (default); false: load it for each "
            "scoring call and release it after, so its weights are not held through the "
            "policy's backward (the same files, the same scores; reloading costs ~1 s for a "
            "135M RM; a local placement without rm_zero3 only)",
        },
    )
    rm_endpoint: str | None = field(
        default=None, metadata={"help": "scorer server URL for rm_placement: endpoint"}
    )
    rm_zero3: bool = field(
        default=False,
        metadata={
            "help": "shard the RM with DeepSpeed ZeRO-3 (rm_placement: trainer, ZeRO-3 runs)"
        },
    )
    setting: str = field(
        default="single",
        metadata={"help": "single | tool | agentic: paper B's settings (recode_lib.environments)"},
    )
    max_tool_calls: int = field(
        default=4,
        metadata={
            "help": "tool calls an episode may make (tool and agentic settings; over it: a "
            "tool error)"
        },
    )
    tool_time_limit_s: float = field(
        default=10.0, metadata={"help": "wall clock of one tool call in the sandbox"}
    )
    tool_memory_mb: int = field(default=1024, metadata={"help": "memory of one tool call"})
    tool_max_output_chars: int = field(
        default=4096,
        metadata={"help": "stdout and stderr of one tool call, each, as returned to the model"},
    )
    lora: dict | None = field(
        default=None,
        metadata={
            **WHEN_SET,
            "help": "LoRA through peft (recode_lib.training.lora): {r, alpha, dropout?, "
            "target_modules?}; None trains every weight. final/ is the merged full model",
        },
    )
    checker_fallback: bool = field(
        default=False,
        metadata={
            **WHEN_SET,
            "help": "testlib checkers (CodeContests+) without a working C++ compiler: judge by "
            "exact comparison (recorded in the rewards' sandbox results as exact_fallback) "
            "instead of refusing to start (recode_lib.sandbox.checker)",
        },
    )
    keep_checkpoints: bool = field(
        default=False,
        metadata={
            **WHEN_SET,
            "help": "keep <output_dir>/checkpoint-* (weights, optimizer and scheduler state) once "
            "final/ is written; False (default): they are removed then, since a finished "
            "run is never resumed and a changed recipe starts a new run (a 2-step smoke "
            "run's checkpoint is 3x its final model; a 7B one's optimizer state ~85 GB)",
        },
    )
    rproc_scale: dict | None = field(
        default=None,
        metadata={
            **WHEN_SET,
            "help": "how this run's R_proc was scaled "
            "(recode_lib.process_reward.scale.provenance_of: rule, sampling, policy, RM, centre "
            "and temperature): recorded in run.json; training reads the centre and temperature "
            "from the reward's own options",
        },
    )
    generation_precision: str = field(
        default="native",
        metadata={
            **WHEN_SET,
            "help": "native (TRL samples with the live policy) | int8 | bfloat16 | float32: "
            "completions sampled from a merged copy of the policy held in that precision, "
            "rebuilt after each optimizer step (recode_lib.training.sampling_copy; int8: CPU "
            "only, not with vLLM) | auto: bfloat16 where the machine computes bf16 natively, "
            "else float32 (native with vLLM or without LoRA; recode_lib.core.bf16)",
        },
    )
    share_first_generations: bool = field(
        default=False,
        metadata={
            **WHEN_SET,
            "help": "reuse the first step's completions of an earlier run in this process whose "
            "draw was identical (same weights, prompts, generation settings, RNG state: "
            "recode_lib.training.shared_generations): the same tokens without recomputing "
            "them, the trained weights bit-identical; CPU, one process, no vLLM",
        },
    )
    # --- TRL fields whose default differs here (CPU-safe smoke runs) ---
    num_generations: int | None = 4
    max_completion_length: int | None = 256
    max_steps: int = 10
    lr_scheduler_type: str = "constant"
    seed: int = 0
    use_cpu: bool = True
    bf16: bool | None = False
    gradient_checkpointing: bool = False
    logging_steps: float = 1
    save_steps: float = 50
    save_total_limit: int | None = 2
    disable_tqdm: bool | None = False

    # --- a recipe's own record (not a TRL field, nor one a recipe sets) ---
    set_fields: tuple = field(
        default=(),
        init=False,
        repr=False,
        compare=False,
        metadata={
            "help": "the fields its recipe file and overrides set (recode_lib.training.grpo"
            ".load_recipe): a run records them, at their default too (grpo.recipe_dict)"
        },
    )
    build: InitVar[bool] = True  # False: a recipe (TRL's checks and derived fields not run)

    def __post_init__(self, build: bool = True):
        if not build:
            return
        if self.run_name is None:
            self.run_name = self.name
        super().__post_init__()

    def rm_placement_config(self) -> RMPlacement:
        """The RMPlacement of the rm_* fields."""
        return RMPlacement(
            where=str(self.rm_placement),
            dtype=str(self.rm_dtype),
            batch_size=int(self.rm_batch_size),
            endpoint=self.rm_endpoint,
            zero3=bool(self.rm_zero3),
            resident=bool(self.rm_resident),
        )


# the fields every run records, at their default too (recode_lib.training.grpo.recipe_dict): the
# recipe fields RecodeGRPOConfig declares itself (the project's and the TRL ones it gives new
# defaults), but for those added after runs were first fingerprinted (WHEN_SET)
INIT_FIELDS = {f.name: f for f in dataclasses.fields(RecodeGRPOConfig) if f.init}
RECORDED_FIELDS = tuple(
    name
    for name in RecodeGRPOConfig.__annotations__
    if name in INIT_FIELDS and INIT_FIELDS[name].metadata.get("recorded") is None
)
