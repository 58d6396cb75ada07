"""Result tables of GRPO runs, rebuilt from their files alone (figures: recode_lib.plots).

    curves = reward_curves({"gated": "runs/smoke/04_cg_grpo/gated", ...})   # long DataFrame
    wide = curves_wide(curves)                   # one row per (run, step), one column per metric
    payload = write_sweep_frontier(RUN / "06_strictness_sweep", summaries, strictness={"k1": 1})

`reward_curves` reads each run's metrics.jsonl (recode_lib.grpo_logging) and keeps, per step,
the total reward, every reward component the reward functions logged ("<reward>/<component>",
e.g. "gated/out", "gated/proc", "strict_2/r_k"), the mean completion length and the time split;
recode_lib.plots.fig_reward_curves draws it. `write_sweep_frontier` writes the strictness
sweep's frontier.json (`{"rows": [...]}`, one row per run: run, k, pass@1, the four outcome-class
rates, tokens) and frontier.csv, the inputs of recode_lib.plots.fig_frontier(sweep=...).
Nothing here trains, generates or executes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

COMPONENT_SUFFIXES = ("/fmt", "/out", "/proc", "/proc_raw", "/r_k", "/reward", "/error_rate")
KEEP = ("reward", "reward_std", "completions/mean_length", "loss", "kl", "entropy",
        "time/step_s", "time/generation_s", "time/reward_s", "time/optimizer_s", "sandbox/per_s")


def reward_curves(runs: dict) -> "pd.DataFrame":
    """Long table (run, step, metric, value) from each run folder's metrics.jsonl."""
    import pandas as pd

    from recode_lib.grpo import read_metrics

    rows = []
    for name, folder in runs.items():
        for m in read_metrics(folder):
            for k, v in m.items():
                keep = k in KEEP or (k.endswith(COMPONENT_SUFFIXES) and not k.startswith("rewards/"))
                if keep and isinstance(v, (int, float)) and not isinstance(v, bool):
                    rows.append({"run": name, "step": m["step"], "metric": k, "value": float(v)})
    return pd.DataFrame(rows, columns=["run", "step", "metric", "value"])


def curves_wide(curves) -> "pd.DataFrame":
    """(run, step) rows, metric columns."""
    return curves.pivot_table(index=["run", "step"], columns="metric", values="value").reset_index()


def write_sweep_frontier(out_dir, summaries: dict, strictness: dict, extra: dict | None = None) -> dict:
    """summaries: run name -> recode_lib.evaluation summary; strictness: run name -> k
    (an int, or "inf"). Writes out_dir/frontier.json and frontier.csv; returns the payload."""
    from recode_lib.eval_summary import summary_table
    from recode_lib.jsonl import write_csv_atomic, write_json_atomic

    if not summaries:
        raise ValueError("write_sweep_frontier: no runs")
    missing = sorted(set(summaries) - set(strictness))
    if missing:
        raise ValueError(f"write_sweep_frontier: no strictness k for run(s) {missing}")
    rows = []
    for row in summary_table(summaries, (1,)):
        row["k"] = str(strictness[row["run"]])
        row["solved"] = len(summaries[row["run"]].get("solved", []))
        rows.append(row)
    rows.sort(key=lambda r: float("inf") if r["k"] == "inf" else float(r["k"]))
    out = Path(out_dir)
    payload = {"rows": rows, **(extra or {})}
    write_json_atomic(out / "frontier.json", payload)
    write_csv_atomic(out / "frontier.csv", rows)
    return payload
