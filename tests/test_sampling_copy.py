"""GRPO completions sampled from a merged, int8/bf16 copy of the policy (recipe field
generation_precision): the copy computes what the policy computes (up to its rounding), the
policy is untouched, batching pads like TRL, and a LoRA run samples from a copy rebuilt each
optimizer step."""

from __future__ import annotations

import pytest

from recode_lib.training.lora import is_peft, lora_config
from recode_lib.training.sampling_copy import sample_completions, sampling_copy


def lora_policy(tiny_model_dir):
    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    peft = get_peft_model(
        AutoModelForCausalLM.from_pretrained(tiny_model_dir), lora_config({"r": 2})
    )
    with torch.no_grad():
        for n, p in peft.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.5)
    return peft


@pytest.mark.parametrize("precision,tol", [("int8", 0.15), ("bfloat16", 0.15), ("float32", 1e-4)])
def test_the_copy_is_merged_in_its_precision_and_close_to_the_policy(
    tiny_model_dir, precision, tol
):
    import torch

    policy = lora_policy(tiny_model_dir)
    trainable = {n for n, p in policy.named_parameters() if p.requires_grad}
    copy = sampling_copy(policy, precision)
    assert is_peft(policy) and not is_peft(copy)
    assert {n for n, p in policy.named_parameters() if p.requires_grad} == trainable
    if precision == "int8":
        assert any("quantized" in type(m).__module__ for m in copy.modules())
    else:
        assert all(p.dtype == getattr(torch, precision) for p in copy.parameters())
    ids = torch.tensor([[1, 5, 9, 13, 17, 21]])
    with torch.no_grad():
        lp = torch.log_softmax(policy(ids).logits.float(), -1)
        lq = torch.log_softmax(copy(ids).logits.float(), -1)
    p = lp.exp()
    kl = (p * (lp - lq)).sum(-1).mean().item()  # KL(policy || copy) per position
    assert -1e-6 <= kl < tol  # float32: equal up to rounding
    assert not copy.training


def test_native_is_not_a_copy_precision(tiny_model_dir):
    with pytest.raises(ValueError, match="precision"):
        sampling_copy(lora_policy(tiny_model_dir), "native")


def test_batched_completions_equal_unbatched_ones_and_stop_at_eos(tiny_model_dir):
    from transformers import AutoModelForCausalLM, GenerationConfig

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()
    gc = GenerationConfig(max_new_tokens=8, do_sample=False, pad_token_id=0, eos_token_id=[7])
    prompts = [[1, 2, 3], [4, 5, 6, 8, 9, 10, 11], [12]]
    batched = sample_completions(
        model, prompts, pad_token_id=0, eos_token_ids=[7], generation_config=gc
    )
    alone = [
        sample_completions(model, [p], pad_token_id=0, eos_token_ids=[7], generation_config=gc)[0]
        for p in prompts
    ]
    assert batched == alone  # left padding and the attention mask change nothing
    for c in batched:
        assert len(c) <= 8 and (7 not in c or c.index(7) == len(c) - 1)


def test_recipe_checks_generation_precision():
    from recode_lib.training.grpo import load_recipe, recipe_dict

    assert "generation_precision" not in recipe_dict(
        load_recipe("cg_grpo_smoke")
    )  # old fingerprints hold
    assert (
        recipe_dict(load_recipe("cg_grpo_smoke", generation_precision="int8"))[
            "generation_precision"
        ]
        == "int8"
    )
    with pytest.raises(ValueError, match="generation_precision must be one of"):
        load_recipe("cg_grpo_smoke", generation_precision="int4")
    with pytest.raises(ValueError, match="use_vllm"):
        load_recipe("cg_grpo_smoke", generation_precision="int8", use_vllm=True)
    with pytest.raises(ValueError, match="use_cpu"):
        load_recipe("cg_grpo_smoke", generation_precision="int8", use_cpu=False)


def test_a_lora_run_samples_from_a_copy_rebuilt_each_step(tiny_model_dir, tmp_path, toy_problems):
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
        save_steps=2,
        save_total_limit=1,
        sandbox_workers=2,
        lora={"r": 4, "alpha": 8},
        learning_rate=1e-3,
        generation_precision="int8",
    )
    res = train(r, probs, tmp_path / "run")
    rows = read_metrics(res.output_dir)
    assert [m["step"] for m in rows] == [1, 2]
    assert all(m["time/sampling_copy_s"] > 0 for m in rows)  # rebuilt at both steps
    assert all(m["completions/mean_length"] > 0 for m in rows)


def test_a_sharded_policy_is_refused_not_copied_empty():
    from recode_lib.training.sampling_copy import sampling_copy_class

    class Sharded:  # what a ZeRO-3 / FSDP GRPOTrainer reports
        is_deepspeed_enabled = True

    trainer = sampling_copy_class(Sharded)()
    trainer.generation_precision = "bfloat16"
    with pytest.raises(ValueError, match="sharded"):
        trainer._generate_single_turn([[1, 2]], None, {}, 1)


def test_the_copy_computes_with_its_own_weights_not_the_policys(tiny_model_dir):
    # TRL's GRPOTrainer patches the policy's forward with a fused LM head whose closure calls the
    # *original* model's forward; deepcopy does not copy closures, so a copy that kept the patch
    # computed every token with the live float32 peft policy (1.7x slower in a laptop GRPO run,
    # and not the bf16 copy the recipe asked for; docs/measured.md). The copy must not follow
    # the policy when the policy's weights change.
    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM
    from trl.trainer.utils import add_fused_lm_head

    torch.manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    add_fused_lm_head(base)  # what GRPOTrainer does before PEFT wraps it
    policy = get_peft_model(base, lora_config({"r": 2}))
    assert any("forward" in m.__dict__ for m in policy.modules())  # the patch is there
    copy = sampling_copy(policy, "bfloat16")
    assert not [m for m in copy.modules() if "forward" in m.__dict__]
    ids = torch.tensor([[1, 5, 9, 13, 17, 21]])
    with torch.no_grad():
        before = copy(ids).logits.clone()
        for n, p in policy.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 5.0)  # the policy moves; its copy must not
        assert torch.equal(copy(ids).logits, before)
        assert copy(ids).logits.dtype == torch.bfloat16
