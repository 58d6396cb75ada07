"""Analysis: result tables and paper figures, rebuilt from result files alone.

Modules: frontier (the correctness-efficiency frontier; the one frontier writer), ensemble
(ensemble pass@k), run_tables (GRPO metrics over steps: reward_curves, curves_wide,
train_stats), plots (one function per figure).
Nothing here trains, generates or executes. The names notebooks use are exported here
(`from recode_lib.analysis import reward_curves`), imported on first access; `plots` is a module.
"""

from recode_lib.core.lazy import lazy_exports

# name -> the submodule defining it, imported on first access (recode_lib.core.lazy)
LAZY_EXPORTS = {
    "curves_wide": "run_tables",
    "reward_curves": "run_tables",
    "train_stats": "run_tables",
    "fig_repair": "plots",
}
__all__ = sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
