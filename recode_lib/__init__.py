"""recode_lib: the tested library behind the recode notebooks.

Notebooks orchestrate; this package computes. Heavy optional dependencies (vllm, deepspeed)
are imported lazily inside the functions that need them, so a CPU install never needs them.
"""

__version__ = "0.1.0"
