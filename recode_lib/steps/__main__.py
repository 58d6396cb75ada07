"""`python -m recode_lib.steps [--write]`: list (or rewrite) every notebook parameters cell that
differs from its step's typed parameters (recode_lib.steps.cells)."""

from recode_lib.steps.cells import main

raise SystemExit(main())
