"""GRPO's completions sampled from a copy of the policy: merged, held in a lower precision,
refreshed after every optimizer step.

    # recipe: generation_precision: int8        (default native: TRL's own generation)
    Trainer = sampling_copy_class(timed_trainer_class())  # what recode_lib.training.grpo.train does
    trainer = Trainer(...); trainer.generation_precision = "int8"

Why: without vLLM, TRL samples a CPU run's completions with the live policy itself, its LoRA
adapters unmerged and its weights float32; that was 60% of a laptop GRPO step (23-43 s of 45-77 s,
docs/measured.md). The copy plays the part vLLM plays in the paper profile: an inference model
holding the policy's weights, refreshed when the optimizer has changed them (TRL's own
`sync_weights` merges a LoRA adapter the same way before pushing it to vLLM). Its cost is the
same as vLLM's too: the completions come from a distribution close to, not equal to, the
policy's (int8 rounding here, bf16 kernels there), so the update is slightly off-policy. TRL
corrects that only for vLLM (`vllm_importance_sampling_correction`, which needs the sampler's
log-probabilities); here it is not corrected, and `benchmarks/bench_sampling_copy.py` measures
the gap (the mean per-token log-probability difference of the two models on sampled
completions) and the speed. The copy runs its class's own forward (own_forward): TRL's fused-LM-
head patch on the policy calls the live policy from a closure, which a deep copy keeps.

Precisions are recode_lib.core.models.PRECISIONS (int8 = torch dynamic quantization, CPU only;
bfloat16). It changes only where completions are sampled: the loss, the log-probabilities it
uses (TRL recomputes them with the float32 policy), the rewards and the saved weights are TRL's.
Text-only prompts (a multimodal batch raises); not with vLLM or transformers' continuous
batching (the recipe check refuses both), nor under DeepSpeed ZeRO / FSDP (sharded weights:
the trainer raises at its first generation).
"""

from __future__ import annotations

import copy
import gc
import time

from recode_lib.core.models import PRECISIONS, inference_precision
from recode_lib.training.lora import is_peft


def sampling_copy(model, precision: str, device: str = "cpu"):
    """A generation-only copy of `model` (the unwrapped policy): its LoRA adapter merged in,
    eval mode, weights held in `precision`, the class's own forward (own_forward). The policy
    itself is not touched."""
    if precision not in PRECISIONS or precision == "native":
        raise ValueError(
            f"a sampling copy's precision must be one of "
            f"{[p for p in PRECISIONS if p != 'native']}, got {precision!r}"
        )
    dup = copy.deepcopy(model)
    if is_peft(dup):
        dup = dup.merge_and_unload()
    for m in dup.modules():  # the model itself included
        own_forward(m)
    for p in dup.parameters():
        p.requires_grad_(False)
    dup.eval()
    if getattr(dup.config, "use_cache", True) is False:  # set off for gradient checkpointing
        dup.config.use_cache = True
    return inference_precision(dup, precision, device=device)


def own_forward(module) -> bool:
    """Drop an instance-level `forward` (a patch over the class's own), so that the module runs
    the model's own computation with its own weights. Returns whether one was dropped.

    Why: TRL's GRPOTrainer patches the policy's forward with a fused LM head
    (trl.trainer.utils.add_fused_lm_head) whose closure holds the *original* model's bound
    forward; deepcopy copies the patch but not the closure, so a copy that kept it computed
    every token with the live float32 peft policy: not the bf16 (or int8) copy the recipe asks
    for, and 1.7x slower (a laptop GRPO step's 8 x 96 tokens: 19.0-20.9 s with the patch,
    12.5-14.3 s on the same copy without it; docs/measured.md). accelerate's mixed-precision
    wrapper (`forward` with `_original_forward`) is dropped the same way."""
    wrapped = module.__dict__.pop("forward", None)
    module.__dict__.pop("_original_forward", None)
    return wrapped is not None


def sample_completions(
    model,
    prompt_ids: list[list[int]],
    *,
    pad_token_id: int,
    eos_token_ids,
    generation_config,
    pad_to_multiple_of=None,
) -> list[list[int]]:
    """One completion per prompt (token ids, each cut after its first EOS, the EOS kept): the
    prompts left-padded into one batch and sampled with `generation_config`, as TRL's own
    transformers path does."""
    import torch

    width = max(len(p) for p in prompt_ids)
    if pad_to_multiple_of:
        width = -(-width // pad_to_multiple_of) * pad_to_multiple_of
    ids = torch.full((len(prompt_ids), width), pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(prompt_ids), width), dtype=torch.long)
    for i, p in enumerate(prompt_ids):
        if p:
            ids[i, width - len(p) :] = torch.tensor(p, dtype=torch.long)
            mask[i, width - len(p) :] = 1
    with torch.no_grad():
        out = model.generate(
            input_ids=ids, attention_mask=mask, generation_config=generation_config
        )
    eos = set(
        int(t) for t in ([eos_token_ids] if isinstance(eos_token_ids, int) else eos_token_ids)
    )
    completions = []
    for row in out[:, width:].tolist():
        cut = next((j for j, t in enumerate(row) if t in eos), None)
        completions.append(row if cut is None else row[: cut + 1])
    return completions


def sampling_copy_class(base):
    """`base` (a GRPOTrainer class) whose generation, when `generation_precision` is not
    "native", samples from a sampling_copy of the policy rebuilt after each optimizer step
    (seconds spent rebuilding: phase_seconds["sampling_copy"] when the trainer keeps phases)."""

    class SamplingCopyTrainer(base):
        generation_precision = "native"

        def _generate_single_turn(
            self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False
        ):
            if self.generation_precision == "native":
                return super()._generate_single_turn(
                    prompt_ids, images, multimodal_fields, num_generations, has_tool_images
                )
            if (images is not None and any(images)) or multimodal_fields or has_tool_images:
                raise ValueError(
                    "generation_precision other than native samples text-only "
                    "prompts; this batch carries images or multimodal fields"
                )
            model = self.current_sampling_copy()
            return sample_completions(
                model,
                prompt_ids,
                pad_token_id=self._tokenizer.pad_token_id,
                eos_token_ids=self.eos_token_ids,
                generation_config=self.generation_config,
                pad_to_multiple_of=self.pad_to_multiple_of,
            ), None

        def current_sampling_copy(self):
            """The copy of the policy as of this optimizer step (rebuilt when the step moved)."""
            if getattr(self, "is_deepspeed_enabled", False) or getattr(
                self, "is_fsdp_enabled", False
            ):
                raise ValueError(
                    "generation_precision copies the whole policy in one process; "
                    "under DeepSpeed ZeRO or FSDP its weights are sharded: sample "
                    "with vLLM (use_vllm) or generation_precision: native there"
                )
            step = self.state.global_step
            if getattr(self, "sampling_copy_step", None) != step:
                t0 = time.perf_counter()
                self.sampling_copy_model = None
                gc.collect()
                policy = self.accelerator.unwrap_model(self.model)
                self.sampling_copy_model = sampling_copy(
                    policy, self.generation_precision, device=str(self.accelerator.device.type)
                )
                self.sampling_copy_step = step
                phases = getattr(self, "phase_seconds", None)
                if phases is not None:
                    phases["sampling_copy"] += time.perf_counter() - t0
            return self.sampling_copy_model

    SamplingCopyTrainer.__name__ = f"SamplingCopy{base.__name__}"
    SamplingCopyTrainer.__qualname__ = SamplingCopyTrainer.__name__
    return SamplingCopyTrainer
