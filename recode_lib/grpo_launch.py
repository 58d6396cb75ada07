"""Kept for compatibility: `python -m recode_lib.grpo_launch ...` is `recode grpo ...`.

The implementation lives in recode_lib.cli.grpo (arguments) and recode_lib.training.launch
(`launch`). This module defines nothing else.
"""

from recode_lib.cli.grpo import add_arguments, main, run  # noqa: F401
from recode_lib.training.launch import launch  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
