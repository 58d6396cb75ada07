"""LoRA GRPO runs: the recipe key builds a peft LoraConfig, training goes through TRL's
peft_config, and final/ is a full merged checkpoint the rest of the pipeline loads."""

from __future__ import annotations

import pytest

from recode_lib.training.lora import is_peft, lora_config, merged_model


def test_lora_config_from_the_recipe_mapping_and_its_errors():
    cfg = lora_config({"r": 4})
    assert cfg.r == 4 and cfg.lora_alpha == 8 and cfg.task_type == "CAUSAL_LM"
    with pytest.raises(ValueError, match="unknown key"):
        lora_config({"r": 4, "rank": 4})
    with pytest.raises(ValueError, match="lora.r"):
        lora_config({"alpha": 4})


def test_merged_model_computes_what_the_adapter_computes(tiny_model_dir):
    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    peft = get_peft_model(base, lora_config({"r": 2}))
    with torch.no_grad():
        for n, p in peft.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.5)  # a non-zero adapter (B starts at zero)
    ids = torch.tensor([[1, 2, 3, 4]])
    full = merged_model(peft)
    assert is_peft(peft) and not is_peft(full) and is_peft(peft)  # the trainer's copy keeps it
    assert not any("lora" in k for k in full.state_dict())
    torch.testing.assert_close(full(ids).logits, peft(ids).logits, atol=1e-4, rtol=1e-4)
    plain = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    assert not torch.allclose(full(ids).logits, plain(ids).logits)


def test_lora_run_saves_a_full_checkpoint_with_the_base_keys(
    tiny_model_dir, tmp_path, toy_problems
):
    from safetensors.torch import load_file

    from recode_lib.core.run_files import read_metrics
    from recode_lib.training.grpo import load_recipe, train

    probs = toy_problems(4)
    r = load_recipe(
        "cg_grpo_smoke",
        model=str(tiny_model_dir),
        rewards=[{"name": "outcome_only"}],
        max_steps=2,
        max_completion_length=12,
        num_generations=4,
        per_device_train_batch_size=8,
        save_steps=1,
        save_total_limit=1,
        sandbox_workers=2,
        lora={"r": 4, "alpha": 8},
        learning_rate=1e-3,
        keep_checkpoints=True,
    )  # to look at them: a finished run drops them
    res = train(r, probs, tmp_path / "run")
    assert [m["step"] for m in read_metrics(res.output_dir)] == [1, 2]
    final = load_file(str(res.final_dir / "model.safetensors"))
    base = load_file(str(tiny_model_dir / "model.safetensors"))
    assert set(final) == set(base)  # merged: no adapter keys, nothing missing
    ckpts = list(res.output_dir.glob("checkpoint-*"))
    assert ckpts and (ckpts[0] / "adapter_config.json").is_file()  # resumable: the adapter
