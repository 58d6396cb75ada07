"""recode_lib: the tested library behind the recode notebooks.

Notebooks orchestrate; this package computes. Heavy optional dependencies (vllm, deepspeed)
are imported lazily inside the functions that need them, so a CPU install never needs them.

Importing it chooses how torch's OpenMP threads wait (recode_lib.core.openmp, before torch is
imported, which reads the choice once): OMP_WAIT_POLICY=PASSIVE when other processes keep the
machine busy, OpenMP's own default (spin briefly, then sleep) when it is quiet, and whatever
the environment already says when it says something.
"""

from recode_lib.core import openmp

openmp.choose_wait_policy()

__version__ = "0.1.0"
