"""The shared kernel: one small concept per module, imported by every stage above it.

paths (where data, models and runs live), jsonl (atomic result files), locks, errors (one-line
user errors), stamps (provenance stamps and fingerprints), prompts (the chat formats and the
response parser), assemble (a response into a program), math_answers, models (loading
checkpoints), run_files (the runs/ layout every step reads), bench_env (a benchmark's
interpreter), plugins, linux, memory, openmp, bf16, ray_cluster, lazy (the packages' lazy
exports). It imports no stage, orchestration or CLI module (tests/test_import_layers.py).
`recode_lib.metrics` (pass@k) stays at the package root: its path is a public contract.
What notebooks use is exported here (`from recode_lib.core import provenance, step_dir`),
imported on first access; `from recode_lib.core import paths` gives the module.
"""

from recode_lib.core.lazy import lazy_exports

# name -> the submodule defining it, imported on first access (recode_lib.core.lazy)
LAZY_EXPORTS = {
    "provenance": "stamps",
    "read_jsonl": "jsonl",
    "write_json_atomic": "jsonl",
    "write_jsonl_atomic": "jsonl",
    "CODEGEN_EVAL": "run_files",
    "CRPL": "run_files",
    "DATA": "run_files",
    "ENSEMBLE": "run_files",
    "FIGURES": "run_files",
    "GRPO": "run_files",
    "LCB_RB": "run_files",
    "MATH": "run_files",
    "REPAIR": "run_files",
    "REWARD_MODEL": "run_files",
    "SETTINGS_SWEEP": "run_files",
    "STRICTNESS_SWEEP": "run_files",
    "WEIGHT_AVERAGING": "run_files",
    "calibrated_path": "run_files",
    "crpl_pairs_path": "run_files",
    "reward_model_dir": "run_files",
    "step_dir": "run_files",
    "build_messages": "prompts",
    "parse_response": "prompts",
    "resolve_precision": "bf16",
    "resolve_model": "models",
}
__all__ = sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
