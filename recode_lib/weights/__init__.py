"""Weights: one-pass interpolation/extrapolation between two checkpoints, and what feeds it.

Modules: merge (merge_grid: theta = alpha*high + (1-alpha)*low in float32, one checkpoint per
alpha), safetensors_io (streaming sharded safetensors reads and writes), endpoints (choosing the
low/high endpoints of a strictness sweep). The `recode merge` arguments live in recode_lib.cli.merge.
"""
