"""A step's small result files: metrics.json (what later steps and the figures read) and
headline.json (the numbers a reader and tests/test_notebooks.py look at first).

    write_records(OUT, sweep.metrics, sweep.headline)   # -> [OUT/metrics.json, OUT/headline.json]
    write_records(OUT, None, ensemble.headline)         # a step without a metrics.json

The step functions (orchestration.sweep, alpha, ensemble, settings) build both dicts from what
they ran; this writes them, each atomically (recode_lib.core.jsonl.write_json_atomic), so a notebook
never assembles one by hand. A None record is not written (an older file stays). It checks that
a record is a dict with string keys; it does not validate what is inside.
"""

from __future__ import annotations

from pathlib import Path

from recode_lib.core.jsonl import write_json_atomic
from recode_lib.core.run_files import HEADLINE_FILE

METRICS = "metrics.json"
HEADLINE = HEADLINE_FILE


def write_records(out_dir: str | Path, metrics: dict | None, headline: dict | None) -> list[Path]:
    """Write out_dir/metrics.json and out_dir/headline.json (those given); returns the paths."""
    out_dir = Path(out_dir)
    written = []
    for name, record in ((METRICS, metrics), (HEADLINE, headline)):
        if record is None:
            continue
        if not isinstance(record, dict) or not all(isinstance(k, str) for k in record):
            raise TypeError(
                f"{out_dir / name}: a record is a dict with string keys, got "
                f"{type(record).__name__}"
            )
        out_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(out_dir / name, record)
        written.append(out_dir / name)
    return written
