"""recode_lib: the tested library behind the recode notebooks.

Notebooks orchestrate; this package computes. Heavy optional dependencies (vllm, deepspeed)
are imported lazily inside the functions that need them, so a CPU install never needs them.

Importing it sets OMP_WAIT_POLICY=PASSIVE unless the environment already says otherwise
(before torch is imported, which reads it once): torch's OpenMP threads then sleep between
parallel regions instead of spinning. On a 2-core machine with anything else running, spinning
threads steal each other's cores: a SmolLM2 decoding step (batch 8) took 1.6-6 s with two
spinning threads against 0.2-0.5 s passive; on an idle machine passive costs little.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
