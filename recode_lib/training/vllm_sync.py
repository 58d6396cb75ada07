"""TRL's GRPO weight sync into its colocated vLLM engine, made to work on vLLM's CPU build.

    with cpu_colocate_engine():          # the trainer is built inside (use_vllm, colocate)
        trainer = GRPOTrainer(...)
    patch_colocate_sync(trainer)         # True when the sync was wrapped

TRL's `VLLMGeneration.sync_weights` (trl/generation/vllm_generation.py) in colocate mode
pushes the policy into the in-process engine one tensor at a time:
`llm.llm_engine.model_executor.driver_worker.model_runner.model.load_weights([(name, param)])`.
On vLLM's CPU target that fails at the first linear layer (`AttributeError: 'Parameter' object
has no attribute 'weight_loader'` in vllm/model_executor/layers/linear.py): the CPU backend
repacks linear weights after loading and leaves an empty Parameter in their place
(recode_lib.generation.vllm_weights explains the mechanism). The fix cannot be per tensor --
vLLM's in-place reload rebuilds a fused layer (qkv_proj) from all of its parts -- so on an
engine with repacked layers `patch_colocate_sync` wraps the trainer's `sync_weights`: TRL's
own method runs unchanged (sleep-mode wake-up, DeepSpeed/FSDP gathering, PEFT merge and
unmerge, name fixing) while the engine model's `load_weights` only collects a copy of each
(name, tensor) it is handed (a copy: PEFT unmerges and ZeRO-3 re-partitions them right after);
then all of them go into the engine at once through
recode_lib.generation.vllm_weights.load_into_runner (vLLM's `reload_weights` plus the tied
lm_head repack), and the prefix cache is reset again. Host memory: one extra copy of the
policy's weights during the sync. On a GPU engine nothing is patched (TRL's path works there).

`cpu_colocate_engine()` gives the engine TRL builds (trl/generation/vllm_generation.py,
`VLLMGeneration._init_vllm`: `LLM(model=..., gpu_memory_utilization=..., ...)`, no dtype) the
CPU defaults of recode_lib.generation.vllm_backend.CPU_ENGINE_DEFAULTS when vLLM runs on the
CPU, under TRL's own keywords: dtype float32 (vLLM's "auto" makes a float32 checkpoint
bfloat16, while the CPU policy trains in float32: the sampler's log-probs would differ from the
trainer's by ~0.03 nats per token before any update), enforce_eager (no inductor compile at
start-up) and an explicit KV-cache size (TRL passes only `gpu_memory_utilization`, which on a
CPU is the share of the NUMA node's RAM the engine may claim *including* the trainer already
in the process, so the KV cache vLLM derives can be negative and it refuses to start;
vllm/v1/worker/cpu_worker.py, `determine_available_memory`). It replaces the module global
`trl.generation.vllm_generation.LLM` while the block runs and restores it after; on a GPU
engine it changes nothing.
It does not touch server mode (TRL's VLLMClient sends weights over NCCL, which vLLM's CPU
build cannot do: tests/test_vllm_real.py names the failure).
"""

from __future__ import annotations

from contextlib import contextmanager

from recode_lib.generation.vllm_backend import CPU_ENGINE_DEFAULTS, vllm_on_cpu
from recode_lib.generation.vllm_weights import has_repacked_layers, load_into_runner


def colocate_engine_kwargs(trl_kwargs: dict) -> dict:
    """vllm.LLM keywords for TRL's colocated engine on vLLM's CPU target: CPU_ENGINE_DEFAULTS
    under TRL's (pure)."""
    return dict(CPU_ENGINE_DEFAULTS) | dict(trl_kwargs)


@contextmanager
def cpu_colocate_engine():
    """While the block runs, TRL's colocate engine is built with colocate_engine_kwargs when
    vLLM runs on the CPU (module docstring); yields whether it does."""
    if not vllm_on_cpu():
        yield False
        return
    import trl.generation.vllm_generation as trl_vllm

    made = trl_vllm.LLM

    def cpu_llm(*args, **kwargs):
        return made(*args, **colocate_engine_kwargs(kwargs))

    trl_vllm.LLM = cpu_llm
    try:
        yield True
    finally:
        trl_vllm.LLM = made


def colocated_runner(trainer):
    """The colocated engine's model runner of a TRL GRPOTrainer (None: no colocated vLLM)."""
    gen = getattr(trainer, "vllm_generation", None)
    if gen is None or getattr(gen, "mode", None) != "colocate":
        return None
    return gen.llm.llm_engine.model_executor.driver_worker.model_runner


def patch_colocate_sync(trainer) -> bool:
    """Wrap `trainer.vllm_generation.sync_weights` when its colocated engine has repacked
    layers (vLLM's CPU target); False (nothing changed) otherwise."""
    runner = colocated_runner(trainer)
    if runner is None or not has_repacked_layers(runner.model):
        return False
    gen = trainer.vllm_generation
    trl_sync = gen.sync_weights

    def sync_weights():
        model = runner.model
        pending: list = []
        model.load_weights = lambda weights: pending.extend(
            (name, t.detach().clone()) for name, t in weights
        )
        try:
            trl_sync()
        finally:
            del model.load_weights  # the class's method again
        load_into_runner(runner, pending)
        gen.llm.reset_prefix_cache()

    gen.sync_weights = sync_weights
    return True


__all__ = [
    "colocate_engine_kwargs",
    "colocated_runner",
    "cpu_colocate_engine",
    "patch_colocate_sync",
]
