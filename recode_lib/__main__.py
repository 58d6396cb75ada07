"""`python -m recode_lib` is the same CLI as the `recode` console script."""

import sys

from recode_lib.cli import main

sys.exit(main())
