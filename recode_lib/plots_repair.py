"""The failure-conditioned repair figure (notebook 09), rebuilt from repair.json alone.

    from recode_lib.plots_repair import fig_repair
    fig_repair(RUN / "09_repair" / "repair.json", out_dir=...)

repair.json: {"rows": [{"model", "original_pass@1", "original_ci": [lo, hi],
"repair": {"all" | <failure class>: {"repair_rate", "ci_low", "ci_high", "n"}}}]} (written by
notebook 09). Left panel: repair rate per failure class, one bar per model, bootstrap CIs;
right panel: the original (single-turn) pass@1 of the same models. Same conventions as
recode_lib.plots: saved as PDF + PNG, FileNotFoundError for a missing file, NoData when there
is nothing to draw. It computes no metric.
"""

from __future__ import annotations

from pathlib import Path

from recode_lib.plots import NoData, _load, save, set_style

CLASSES = ("all", "optimization_failure", "correctness_failure", "format_error")
MODEL_COLORS = ("#6c757d", "#457b9d", "#e63946", "#2a9d8f", "#e9c46a")


def fig_repair(repair, out_dir=None, name="repair") -> list[Path]:
    import matplotlib.pyplot as plt
    set_style()
    rows = _load(repair).get("rows") or []
    rows = [r for r in rows if r.get("repair")]
    if not rows:
        raise NoData(f"{repair}: no model has repair results")
    classes = [c for c in CLASSES if any(c in r["repair"] for r in rows)]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(2.2 + 1.1 * len(classes) + 1.2, 3.0),
                                  gridspec_kw={"width_ratios": [max(len(classes), 1), 1.3]})
    width = 0.8 / len(rows)
    for j, r in enumerate(rows):
        color = MODEL_COLORS[j % len(MODEL_COLORS)]
        xs, ys, lo, hi = [], [], [], []
        for i, c in enumerate(classes):
            v = r["repair"].get(c)
            if v is None:
                continue
            xs.append(i - 0.4 + width * (j + 0.5))
            ys.append(v["repair_rate"])
            lo.append(max(0.0, v["repair_rate"] - v["ci_low"]))
            hi.append(max(0.0, v["ci_high"] - v["repair_rate"]))
            ax.text(xs[-1], -0.02, f"n={v['n']}", ha="center", va="top", fontsize=6)
        ax.bar(xs, ys, width=width * 0.95, yerr=[lo, hi], capsize=2, color=color,
               label=r["model"])
        p = r.get("original_pass@1")
        if p is not None:
            ci = r.get("original_ci") or [p, p]
            ax2.bar([j], [p], yerr=[[max(0.0, p - ci[0])], [max(0.0, ci[1] - p)]], capsize=2,
                    color=color)
    ax.set_xticks(range(len(classes)), [c.replace("_", "\n") for c in classes], fontsize=7)
    ax.set_ylim(-0.08, 1.0)
    ax.set_ylabel("repair rate (one turn)")
    ax.set_title("repairing failed attempts")
    ax.legend(frameon=False, fontsize=7)
    ax2.set_xticks(range(len(rows)), [r["model"] for r in rows], rotation=30, fontsize=7)
    ax2.set_ylim(0, 1.0)
    ax2.set_ylabel("original pass@1")
    ax2.set_title("single turn")
    fig.subplots_adjust(wspace=0.4)
    paths = save(fig, name, out_dir)
    plt.close(fig)
    return paths
