"""The shared kernel: one small concept per module, imported by every stage above it.

paths (where data, models and runs live), jsonl (atomic result files), locks, errors (one-line
user errors), provenance, prompts (the chat formats and the response parser), assemble (a
response into a program), math_answers, models (loading checkpoints), run_files (the runs/ layout
every step reads), bench_env (a benchmark's interpreter), plugins, linux, memory, openmp, bf16,
ray_cluster. It imports no stage, orchestration or CLI module (tests/test_import_layers.py).
`recode_lib.metrics` (pass@k) stays at the package root: its path is a public contract.
"""
