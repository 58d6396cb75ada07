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
