"""GRPO's first-step completions drawn once and reused by later runs that would draw the very same.

    # recipe: share_first_generations: true     (default false; the smoke profile sets it)
    Trainer = shared_generations_class(sampling_copy_class(timed_trainer_class()))
    trainer = Trainer(...); trainer.share_first_generations = True  # as grpo.train does

A notebook trains several runs from one start model, seed and prompts that differ only in their
reward (04's variants, 06's k1/kinf/partial runs, 10's, 11's two rewards per setting): their
first generation batch is the same computation on the same inputs. The first run of a process
draws it; a later run whose draw is identical takes it from STORE instead of recomputing it.
"Identical" is a key (generation_key) over every weight and buffer of the policy, its class and
config, the prompt token ids, the number of completions, the generation settings, torch's CPU
RNG state before the draw, the thread count and the library versions. A hit returns the stored
completions and sets the RNG to the state the draw left it in, so the trained weights are
bit-identical with and without sharing (tests/test_shared_generations.py).
Only at global_step 0, one process, a CPU device, transformers' generation (TRL's or the
sampling copy's), text-only prompts; not with vLLM or continuous batching, nor DeepSpeed/FSDP.
The store is this process's memory (MAX_ENTRIES draws); nothing is written to disk. It does not
change which completions any run trains on. More: docs/modules/training.md.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from collections import OrderedDict

MAX_ENTRIES = 16  # draws kept: a notebook's runs share one or a few
STORE: OrderedDict[str, dict] = OrderedDict()  # key -> {"completion_ids", "logprobs", "rng_after"}
STATS = {"hits": 0, "misses": 0}  # this process's lookups, for the tests and the log


def weights_digest(model) -> str:
    """sha256 of every parameter and buffer of `model`: name, dtype, shape and bytes."""
    import torch

    h = hashlib.sha256()
    seen = set()
    tensors = [*model.named_parameters(remove_duplicate=False), *model.named_buffers()]
    for name, t in tensors:
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|{t.device.type}\n".encode())
        if id(t) in seen:  # a tied weight: its name is hashed, its bytes once
            continue
        seen.add(id(t))
        flat = t.detach().to("cpu").contiguous().reshape(-1)
        h.update(flat.view(torch.uint8).numpy().data if flat.numel() else b"")
    return h.hexdigest()


def generation_key(model, prompt_ids, num_generations: int, settings: dict) -> str:
    """The key of one draw: sha256 over the policy (weights_digest, class, config), the prompts,
    the number of completions, `settings` (generation config, stop ids, precision, ...: JSON)
    and the engine's state (torch's CPU RNG state, thread count, library versions)."""
    import torch
    import transformers
    import trl

    config = getattr(model, "config", None)
    parts = {
        "weights": weights_digest(model),
        "class": f"{type(model).__module__}.{type(model).__qualname__}",
        "config": config.to_json_string(use_diff=False) if config is not None else None,
        "training": bool(model.training),
        "prompt_ids": [list(map(int, p)) for p in prompt_ids],
        "num_generations": int(num_generations),
        "settings": settings,
        "rng": hashlib.sha256(torch.get_rng_state().numpy().tobytes()).hexdigest(),
        "threads": torch.get_num_threads(),
        "versions": [torch.__version__, transformers.__version__, trl.__version__],
    }
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


def shared_generations_class(base):
    """`base` (a GRPOTrainer class) whose first-step generation, when `share_first_generations`
    is set and the draw qualifies (see the module docstring), is looked up in STORE by
    generation_key: a hit returns the stored completions and restores the RNG state the draw
    left; a miss draws with `base` and stores."""

    class SharedGenerationsTrainer(base):
        share_first_generations = False

        def generation_shareable(self, images, multimodal_fields, has_tool_images) -> bool:
            """Whether this draw is wholly determined by generation_key."""
            return bool(
                self.share_first_generations
                and self.state.global_step == 0
                and not self.use_vllm
                and not getattr(self, "use_transformers_continuous_batching", False)
                and not getattr(self, "is_deepspeed_enabled", False)
                and not getattr(self, "is_fsdp_enabled", False)
                and self.accelerator.num_processes == 1
                and self.accelerator.device.type == "cpu"
                and not (images is not None and any(images))
                and not multimodal_fields
                and not has_tool_images
            )

        def generation_settings(self) -> dict:
            """What, besides the policy, prompts and RNG, decides this trainer's draws."""
            args = self.args
            return {
                "generation_config": self.generation_config.to_json_string(use_diff=False),
                "generation_kwargs": self.generation_kwargs,
                "eos_token_ids": list(self.eos_token_ids),
                "pad_token_id": self._tokenizer.pad_token_id,
                "pad_to_multiple_of": self.pad_to_multiple_of,
                "generation_precision": getattr(self, "generation_precision", "native"),
                "bf16": args.bf16,
                "fp16": args.fp16,
                "cast_lm_head_to_fp32": getattr(args, "cast_lm_head_to_fp32", None),
                "device": str(self.accelerator.device),
            }

        def _generate_single_turn(
            self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False
        ):
            if not self.generation_shareable(images, multimodal_fields, has_tool_images):
                return super()._generate_single_turn(
                    prompt_ids, images, multimodal_fields, num_generations, has_tool_images
                )
            import torch

            policy = self.accelerator.unwrap_model(self.model)
            key = generation_key(policy, prompt_ids, num_generations, self.generation_settings())
            hit = STORE.get(key)
            if hit is not None:
                STORE.move_to_end(key)
                STATS["hits"] += 1
                torch.set_rng_state(hit["rng_after"].clone())
                print(
                    f"shared_generations: reused {len(hit['completion_ids'])} first-step "
                    f"completions of an identical earlier draw (key {key[:12]})",
                    file=sys.stderr,
                )
                return copy.deepcopy(hit["completion_ids"]), copy.deepcopy(hit["logprobs"])
            completion_ids, logprobs = super()._generate_single_turn(
                prompt_ids, images, multimodal_fields, num_generations, has_tool_images
            )
            STATS["misses"] += 1
            STORE[key] = {
                "completion_ids": copy.deepcopy(completion_ids),
                "logprobs": copy.deepcopy(logprobs),
                "rng_after": torch.get_rng_state().clone(),
            }
            while len(STORE) > MAX_ENTRIES:
                STORE.popitem(last=False)
            return completion_ids, logprobs

    SharedGenerationsTrainer.__name__ = f"SharedGenerations{base.__name__}"
    SharedGenerationsTrainer.__qualname__ = SharedGenerationsTrainer.__name__
    return SharedGenerationsTrainer
