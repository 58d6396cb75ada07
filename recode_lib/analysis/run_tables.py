"""Result tables of GRPO runs, rebuilt from their files alone (figures: recode_lib.analysis.plots).

    curves = reward_curves({"gated": "runs/smoke/04_cg_grpo/gated", ...})   # long DataFrame
    wide = curves_wide(curves)                   # one row per (run, step), one column per metric
    stats = train_stats("runs/smoke/04_cg_grpo/gated", "gated")   # steps, last rewards, time split

`reward_curves` reads each run's metrics.jsonl (recode_lib.core.run_files.read_metrics) and keeps,
per step, the total reward, every reward component the reward functions logged
("<reward>/<component>", e.g. "gated/out", "gated/proc", "strict_2/r_k"), the mean completion
length and the time split; recode_lib.analysis.plots.fig_reward_curves draws it. (The strictness
sweep's frontier is written by recode_lib.analysis.frontier.write_sweep_frontier.)
Nothing here trains, generates or executes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recode_lib.core.run_files import read_metrics

if TYPE_CHECKING:
    import pandas as pd

COMPONENT_SUFFIXES = ("/fmt", "/out", "/proc", "/proc_raw", "/r_k", "/reward", "/error_rate")
KEEP = (
    "reward",
    "reward_std",
    "completions/mean_length",
    "loss",
    "kl",
    "entropy",
    "time/step_s",
    "time/generation_s",
    "time/reward_s",
    "time/optimizer_s",
    "sandbox/per_s",
)


def reward_curves(runs: dict) -> pd.DataFrame:
    """Long table (run, step, metric, value) from each run folder's metrics.jsonl."""
    import pandas as pd

    rows = []
    for name, folder in runs.items():
        for m in read_metrics(folder):
            for k, v in m.items():
                keep = k in KEEP or (
                    k.endswith(COMPONENT_SUFFIXES) and not k.startswith("rewards/")
                )
                if keep and isinstance(v, (int, float)) and not isinstance(v, bool):
                    rows.append({"run": name, "step": m["step"], "metric": k, "value": float(v)})
    return pd.DataFrame(rows, columns=["run", "step", "metric", "value"])


def curves_wide(curves) -> pd.DataFrame:
    """(run, step) rows, metric columns."""
    return curves.pivot_table(index=["run", "step"], columns="metric", values="value").reset_index()


def train_stats(run_dir, reward: str) -> dict:
    """One run's training summary from its metrics.jsonl: steps, the last step's total reward
    and `reward`'s components ("<reward>/..."), and the mean time split per step (without
    the first step, which includes warm-up, when there are more)."""
    rows = read_metrics(run_dir)
    last = rows[-1] if rows else {}
    steady = rows[1:] or rows

    def mean(key):
        return sum(r.get(key) or 0.0 for r in steady) / max(len(steady), 1)

    return {
        "steps": len(rows),
        "last": {k: v for k, v in last.items() if k.startswith(f"{reward}/") or k == "reward"},
        "s_per_step": mean("time/step_s"),
        "generation_s": mean("time/generation_s"),
        "reward_s": mean("time/reward_s"),
        "optimizer_s": mean("time/optimizer_s"),
    }
