"""Names inside a run folder that one stage writes and a later stage reads.

    rows = read_metrics("runs/smoke/04_cg_grpo/gated")   # one dict per logged GRPO step
    out_dir / METRICS_FILE                                # "metrics.jsonl"
    out_dir / TRANSFER / "final"                          # the cross-model RM transfer's policy

A GRPO run's metrics log is `<output_dir>/metrics.jsonl`, one JSON line per logging step keyed
by `step` (written by recode_lib.training.callbacks.MetricsJsonlCallback during training);
`read_metrics` reads it for training's own checks, the analysis tables and the figures, and
tolerates a torn last line (a run killed mid-write). TRANSFER is the run name of notebook 04's
cross-model RM transfer policy (training.launch.transfer_variants trains it, the headline table
in recode_lib.evaluation.headline evaluates it). Where each step's folder lives
(runs/<profile>/NN_*) is not decided here. It writes nothing.
"""

from __future__ import annotations

from pathlib import Path

from recode_lib.jsonl import read_jsonl

METRICS_FILE = "metrics.jsonl"
TRANSFER = "transfer"      # the run name (04_cg_grpo/transfer) of the cross-model RM transfer


def read_metrics(output_dir: str | Path) -> list[dict]:
    """The rows of output_dir/metrics.jsonl, in order ([] when the run logged nothing yet)."""
    p = Path(output_dir) / METRICS_FILE
    return read_jsonl(p, allow_torn_tail=True) if p.exists() else []
