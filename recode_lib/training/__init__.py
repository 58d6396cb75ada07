"""Training: GRPO on TRL from YAML recipes (recipes/), its launch, callbacks and repair tasks.

Modules: config (RecodeGRPOConfig: trl.GRPOConfig plus the project's fields), grpo (recipes,
unbuilt RecodeGRPOConfigs: load_recipe; train), launch (in process or through accelerate),
rm_launch (the same for notebook 02's reward model: `recode rm` under accelerate ZeRO-3),
callbacks (the local metrics.jsonl and timing), repair (failure-conditioned repair tasks),
plain_sft (a few plain supervised fine-tuning steps: notebook 07's stand-in endpoints),
sft_data (program-written transcripts from reference solutions in the single, tool and agentic
settings' own format), sft_start (the shared SFT start: LoRA SFTTrainer on them, merged).
The `recode grpo` arguments live in recode_lib.cli.grpo. Rewards come from recode_lib.rewards.
"""

from recode_lib.core.lazy import lazy_exports

# name -> the submodule defining it, imported on first access (recode_lib.core.lazy)
LAZY_EXPORTS = {
    "TranscriptConfig": "sft_data",
    "SFTStartConfig": "sft_start",
    "launch_reward_model": "rm_launch",
    "load_recipe": "grpo",
    "TRANSFER": "launch",
    "TRANSFER_BASELINE": "launch",
    "check_seeds": "launch",
    "require_reward_model": "launch",
    "reward_variants": "launch",
    "seed_groups": "launch",
    "seeded_variants": "launch",
    "train_variants": "launch",
    "transfer_variants": "launch",
    "recipe_fields": "recipe_check",
    "repair_tasks": "repair",
    "REPAIR_SETS": "repair_rounds",
    "compare_repair": "repair_rounds",
    "compare_repair_protocol": "repair_rounds",
    "repair_table": "repair_rounds",
    "train_repair_rounds": "repair_rounds",
    "override_lines": "parameter_overrides",
    "overridden_recipe_fields": "parameter_overrides",
}
__all__ = sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
