"""LoRA for GRPO runs: a recipe's `lora:` mapping -> peft.LoraConfig, and the merged final model.

    from recode_lib.training.lora import lora_config, merged_model
    cfg = lora_config({"r": 16, "alpha": 32})          # peft.LoraConfig (task CAUSAL_LM)
    GRPOTrainer(model=..., peft_config=cfg, ...)      # what recode_lib.training.grpo.train does
    full = merged_model(trainer.model)                 # a plain transformers model (LoRA merged in)

Recipe keys (all but r optional): r (rank), alpha (lora_alpha, default 2r), dropout (default
0), target_modules (default "all-linear": every linear layer but the output head), bias
("none"). An unknown key raises naming it. `train` saves <output_dir>/final as a full Hugging
Face checkpoint: the adapter merged into the base weights (peft's merge_and_unload), so
evaluation, weight merging (recode merge) and the live alpha sweep load it like any other
model; intermediate checkpoint-<N> folders hold the adapter only (what resuming needs).
It does not choose ranks or learning rates (recipes do) and imports peft lazily.
"""

from __future__ import annotations

KEYS = {"r", "alpha", "dropout", "target_modules", "bias"}


def lora_config(spec: dict):
    """peft.LoraConfig of a recipe's `lora` mapping (ValueError naming a bad key or value)."""
    from peft import LoraConfig

    if not isinstance(spec, dict):
        raise ValueError(f"recipe field lora must be a mapping, got {spec!r}")
    unknown = sorted(set(spec) - KEYS)
    if unknown:
        raise ValueError(f"recipe field lora: unknown key(s) {unknown}; known: {sorted(KEYS)}")
    r = spec.get("r")
    if not isinstance(r, int) or r < 1:
        raise ValueError(f"recipe field lora.r must be a positive integer, got {r!r}")
    return LoraConfig(
        r=r,
        lora_alpha=float(spec.get("alpha", 2 * r)),
        lora_dropout=float(spec.get("dropout", 0.0)),
        target_modules=spec.get("target_modules", "all-linear"),
        bias=spec.get("bias", "none"),
        task_type="CAUSAL_LM",
    )


def is_peft(model) -> bool:
    return hasattr(model, "merge_and_unload") and hasattr(model, "peft_config")


def merged_model(model):
    """The model with its LoRA adapter merged in (a plain transformers model); a model without
    an adapter is returned as is. Merges a copy: the trainer's model keeps its adapter."""
    import copy

    if not is_peft(model):
        return model
    return copy.deepcopy(model).merge_and_unload()
