"""New weights into a running vLLM model, on vLLM's CPU target as on GPUs.

    load_into_runner(worker.model_runner, named_tensors)     # inside a vLLM worker
    has_repacked_layers(worker.model_runner.model)            # True on vLLM's CPU target

It does not choose what to load (recode_lib.weights.live, recode_lib.training.vllm_sync do).
More: docs/modules/generation.md (recode_lib.generation.vllm_weights).
"""

from __future__ import annotations

from collections.abc import Iterable


def has_repacked_layers(model) -> bool:
    """True when vLLM's CPU backend packed this model's linear layers for its GEMM kernel
    (every such layer carries `cpu_linear`), so `load_weights` cannot write into them. False
    for an object that is not a torch module (a stand-in engine's model)."""
    modules = getattr(model, "modules", None)
    return modules is not None and any(hasattr(m, "cpu_linear") for m in modules())


def repack_kept_weights(model) -> int:
    """Re-run the CPU GEMM packing of every unquantized layer that keeps its weight beside a
    packed copy (`cpu_linear` set, non-empty `weight`, one of vLLM's `Unquantized*Method`s):
    the tied lm_head after a reload. Quantized layers are left alone (their processing
    rewrites the weight, so running it twice would corrupt it). Returns how many."""
    n = 0
    for module in model.modules():
        weight = getattr(module, "weight", None)
        method = getattr(module, "quant_method", None)
        if (
            not hasattr(module, "cpu_linear")
            or weight is None
            or weight.numel() == 0
            or not type(method).__name__.startswith("Unquantized")
        ):
            continue
        method.process_weights_after_loading(module)
        n += 1
    return n


def load_into_runner(model_runner, named_tensors: Iterable) -> None:
    """Load (HF name, tensor) pairs into the live model of one vLLM worker's `model_runner`
    (see the module docstring for the two paths)."""
    model = model_runner.model
    if not has_repacked_layers(model):
        model.load_weights(named_tensors)
        return
    model_runner.reload_weights(weights_iterator=iter(named_tensors), is_checkpoint_format=True)
    repack_kept_weights(model)


__all__ = ["has_repacked_layers", "load_into_runner", "repack_kept_weights"]
