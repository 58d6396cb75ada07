"""TRL's GRPO weight sync into its colocated vLLM engine, made to work on vLLM's CPU build.

    with cpu_colocate_engine():          # the trainer is built inside (use_vllm, colocate)
        trainer = GRPOTrainer(...)
    patch_colocate_sync(trainer)         # True when the sync was wrapped

It does not touch server mode (TRL's VLLMClient sends weights over NCCL, which vLLM's CPU build
cannot do: tests/test_vllm_real.py names the failure).
More: docs/modules/training.md (recode_lib.training.vllm_sync).
"""

from __future__ import annotations

from contextlib import contextmanager

from recode_lib.generation.vllm_backend import (
    CPU_ENGINE_DEFAULTS,
    cpu_engine_environment,
    vllm_on_cpu,
)
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
        with cpu_engine_environment():  # no core kept from a small machine's engine
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
