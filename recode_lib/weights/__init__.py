"""Weights: one-pass interpolation/extrapolation between two checkpoints, and what feeds it.

Modules: merge (merge_grid: theta = alpha*high + (1-alpha)*low in float32, one checkpoint per
alpha), live (theta_alpha computed in memory and pushed into a live transformers model, offline
vLLM engine or `trl vllm-serve` server), sweep (sweep_alphas: evaluate every alpha with one live
model, checkpoints only for the alphas asked for), safetensors_io (streaming sharded safetensors
reads and writes). Which two checkpoints are the endpoints (a strictness sweep's runs, or
stand-ins) is recode_lib.orchestration.endpoints's. The `recode merge` arguments live in
recode_lib.cli.merge.
"""

from recode_lib.core.lazy import lazy_exports

# name -> the submodule defining it, imported on first access (recode_lib.core.lazy)
LAZY_EXPORTS = {
    "merge_grid": "merge",
    "parse_alphas": "merge",
    "sweep_alphas": "sweep",
}
__all__ = sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
