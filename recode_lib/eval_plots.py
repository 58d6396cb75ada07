"""Figures of code-generation evaluation results, drawn from summary.json files alone.

    fig = plot_outcomes({"humanevalplus": summary_a, "mbppplus": summary_b}, "figures/eval")
    # writes figures/eval.pdf and figures/eval.png; returns the matplotlib Figure

plot_outcomes: one stacked bar per run with the four outcome classes of the extrapolation paper
(correct / optimization failure / correctness failure / format error, as fractions of samples),
pass@1 written above each bar and the mean tokens per response below it. It reads only the
dicts recode_lib.evaluation writes (summary.json); it does not evaluate anything. Kept apart
from recode_lib.plots until that module adopts it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

OUTCOME_COLORS = {"correct": "#2a9d8f", "optimization_failure": "#e9c46a",
                  "correctness_failure": "#e76f51", "format_error": "#8d99ae"}


def plot_outcomes(summaries: Mapping[str, Mapping], path: str | Path | None = None,
                  title: str | None = None):
    import matplotlib.pyplot as plt

    if not summaries:
        raise ValueError("plot_outcomes: no summaries")
    names = list(summaries)
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * len(names), 3.6))
    bottom = [0.0] * len(names)
    for outcome, color in OUTCOME_COLORS.items():
        vals = [float(summaries[n]["outcomes"].get(outcome, 0.0)) for n in names]
        ax.bar(names, vals, bottom=bottom, color=color, label=outcome.replace("_", " "),
               width=0.6)
        bottom = [b + v for b, v in zip(bottom, vals)]
    for x, n in enumerate(names):
        s = summaries[n]
        if "pass@1" in s:
            ax.text(x, 1.02, f"pass@1 {s['pass@1']:.2f}", ha="center", va="bottom", fontsize=8)
        ax.text(x, -0.1, f"{s['tokens']['mean']:.0f} tok", ha="center", va="top", fontsize=8,
                transform=ax.get_xaxis_transform())
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("fraction of samples")
    ax.set_title(title or "Outcome classes per benchmark")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    fig.tight_layout()
    if path is not None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        for ext in ("pdf", "png"):
            fig.savefig(path.with_suffix(f".{ext}"), dpi=150, bbox_inches="tight")
    return fig
