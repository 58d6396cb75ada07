"""The paper figures, one function per figure, each rebuilt from result files alone.

    from recode_lib.analysis import plots
    plots.fig_frontier(RUN / "07_weight_averaging" / "frontier.json",
                       sweep=RUN / "06_strictness_sweep" / "frontier.json")
    plots.fig_outcome_classes(RUN / "07_weight_averaging" / "frontier.json")
    plots.fig_ensemble_passk(RUN / "08_ensemble_passk" / "passk.json")
    plots.fig_reward_curves({"gated": RUN / "04_cg_grpo" / "gated", ...})   # metrics.jsonl dirs
    plots.fig_rm_accuracy(RUN / "03_lcb_rb" / "metrics.json",
                          RUN / "02_reward_model" / "metrics.json")
    plots.fig_repair(RUN / "09_repair" / "repair.json")
    plots.rebuild_all(RUN)  # every figure above into figures/<RUN.name>/: {"made", "skipped", ...}

Every function takes paths to result files (never models or in-memory state), draws one
figure with the house style (seaborn "whitegrid" + the rc below, applied once), saves it to
`out_dir` as <name>.pdf and <name>.png, and returns the paths. Every profile has its own folder,
`figures/<profile>/` (recode_lib.core.paths.figures_dir), which rebuild_all writes by default; a
single figure drawn without out_dir goes to `figures/scratch/`, never next to a profile's folder.
A missing input file raises FileNotFoundError naming it, inputs with nothing to draw raise
NoData (notebook 99 turns both into a skip note). Inputs: frontier.json
(recode_lib.analysis.frontier.write_frontier: rows with alpha and the four outcome rates; a sweep
file may instead carry rows with "run"), passk.json (recode_lib.analysis.ensemble.write_ensemble),
GRPO metrics.jsonl (recode_lib.training.callbacks; read through
recode_lib.analysis.run_tables.reward_curves), the LCB-RB table (notebook 03 metrics.json
"table") and the held-out RM accuracy (notebook 02 metrics.json). It computes no metric itself
beyond selecting columns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from recode_lib.analysis.frontier import FrontierError, check_overlay
from recode_lib.analysis.run_tables import reward_curves
from recode_lib.core.errors import RecodeError
from recode_lib.core.paths import FIGURES_ROOT, figures_dir
from recode_lib.core.run_files import (
    CODEGEN_EVAL,
    ENSEMBLE,
    GRPO,
    LCB_RB,
    REPAIR,
    REWARD_MODEL,
    SETTINGS_SWEEP,
    STRICTNESS_SWEEP,
    WEIGHT_AVERAGING,
    step_dir,
)
from recode_lib.environments.settings import SETTINGS
from recode_lib.sandbox.result import OUTCOMES, Outcome

FIGURES_DIR = FIGURES_ROOT  # figures/<profile>/ below it, one folder per profile
SCRATCH_DIR = FIGURES_ROOT / "scratch"  # a figure drawn by hand without out_dir
FIGURE_SUFFIXES = (".pdf", ".png")  # what every figure function writes (save)
TABLE_SUFFIXES = {"rm_accuracy": (".csv", ".md")}  # ... and the table some write beside it
OUTCOME_COLORS = {
    Outcome.CORRECT: "#2a9d8f",
    Outcome.OPTIMIZATION_FAILURE: "#e9c46a",
    Outcome.CORRECTNESS_FAILURE: "#e76f51",
    Outcome.FORMAT_ERROR: "#8d99ae",
}
REPAIR_CLASSES = ("all",) + tuple(o for o in OUTCOMES if o != Outcome.CORRECT)
MODEL_COLORS = ("#6c757d", "#457b9d", "#e63946", "#2a9d8f", "#e9c46a")
POOL_COLORS = {"best_single": "#6c757d", "interpolation": "#457b9d", "interp+extrap": "#e63946"}
RC = {
    "figure.dpi": 110,
    "savefig.dpi": 200,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "savefig.bbox": "tight",
}
_STYLED = False


class NoData(RecodeError, LookupError):
    """The result files exist but hold nothing to draw (e.g. a smoke run that formed no pairs).
    Notebook 99 reports the figure as skipped with this message."""


def set_style() -> None:
    """Apply the house style once per process (later calls are no-ops)."""
    global _STYLED
    if _STYLED:
        return
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="paper", rc=RC)
    _STYLED = True


def save(fig, name: str, out_dir: str | Path | None = None) -> list[Path]:
    out = Path(out_dir) if out_dir is not None else SCRATCH_DIR
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.pdf", out / f"{name}.png"]
    for p in paths:
        fig.savefig(p)
    return paths


def _load(path) -> dict:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"result file {path} does not exist")
    return json.loads(path.read_text())


def _rows(path, required=("correctness_failure", "optimization_failure")) -> list[dict]:
    data = _load(path)
    rows = data["rows"] if isinstance(data, dict) else data
    for i, r in enumerate(rows):
        for f in required:
            if f not in r:
                raise ValueError(f"{path}: row {i} has no {f!r}")
    return rows


def annotate_points(ax, points, xytext=(4, 3), color=None) -> None:
    """Label points [(label, x, y), ...] on `ax`, one label per location: points that coincide
    (identical models give identical rates) share one label "a, b, c" instead of overprinting."""
    groups: dict = {}
    for label, x, y in points:
        groups.setdefault((round(float(x), 9), round(float(y), 9)), []).append(str(label))
    for (x, y), labels in groups.items():
        ax.annotate(
            ", ".join(labels),
            (x, y),
            xytext=xytext,
            textcoords="offset points",
            fontsize=7,
            **({"color": color} if color else {}),
        )


def draw_alpha_points(ax, rows) -> None:
    """The merged-alpha points of a frontier on `ax`: a grey line in alpha order, colour =
    alpha (viridis), [0, 1] filled, extrapolated hollow, each labelled with its alpha."""
    import matplotlib.pyplot as plt

    rows = sorted(rows, key=lambda r: r["alpha"])
    xs = [r["correctness_failure"] for r in rows]
    ys = [r["optimization_failure"] for r in rows]
    ax.plot(xs, ys, "-", color="#adb5bd", lw=1, zorder=1)
    cmap = plt.get_cmap("viridis")
    lo, hi = (min(r["alpha"] for r in rows), max(r["alpha"] for r in rows)) if rows else (0, 1)
    for r, x, y in zip(rows, xs, ys, strict=True):
        c = cmap((r["alpha"] - lo) / (hi - lo) if hi > lo else 0.5)
        inside = 0.0 <= r["alpha"] <= 1.0
        ax.scatter([x], [y], s=36, color=c if inside else "white", edgecolor=c, lw=1.5, zorder=2)
    annotate_points(ax, [(f"{r['alpha']:g}", x, y) for r, x, y in zip(rows, xs, ys, strict=True)])


def fig_frontier(frontier, sweep=None, out_dir=None, name="frontier") -> list[Path]:
    """Correctness-efficiency frontier: optimization- vs correctness-failure rate, one point per
    merged alpha (colour = alpha, [0, 1] filled, extrapolation hollow) and per sweep run (R_k
    runs as stars, static partial-credit runs as diamonds).
    Either input may be None (the sweep alone before any merge exists). Both given: their
    points must carry one evaluation-spec fingerprint, else FrontierError names both
    (recode_lib.analysis.frontier.check_overlay): points sampled differently are not overlaid."""
    import matplotlib.pyplot as plt

    set_style()
    if frontier is None and sweep is None:
        raise ValueError("fig_frontier: give a merged-alpha frontier and/or a sweep frontier")
    if frontier is not None and sweep is not None:
        check_overlay({str(frontier): _load(frontier), str(sweep): _load(sweep)})
    fig, ax = plt.subplots(figsize=(4.2, 3.4))
    if frontier is not None:
        draw_alpha_points(ax, _rows(frontier))
    if sweep is not None:
        runs = _rows(sweep)
        for partial in (False, True):  # R_k runs: stars; static partial-credit runs: diamonds
            rows = [r for r in runs if (r.get("k", "") is None) == partial]
            colour = "#457b9d" if partial else "#e63946"
            ax.scatter(
                [r["correctness_failure"] for r in rows],
                [r["optimization_failure"] for r in rows],
                marker="D" if partial else "*",
                s=40 if partial else 90,
                color=colour,
                zorder=3,
            )
            annotate_points(
                ax,
                [
                    (
                        r.get("run", r.get("alpha", "")),
                        r["correctness_failure"],
                        r["optimization_failure"],
                    )
                    for r in rows
                ],
                (4, -9),
                colour,
            )
    ax.set_xlabel("correctness-failure rate")
    ax.set_ylabel("optimization-failure rate")
    ax.set_title("correctness–efficiency frontier\n(labels: α; hollow markers: extrapolated)")
    paths = save(fig, name, out_dir)
    plt.close(fig)
    return paths


def fig_setting_frontiers(
    sweeps, alphas=None, out_dir=None, name="setting_frontiers"
) -> list[Path]:
    """Paper B's frontier per setting, side by side: one panel per setting (single, tool,
    agentic...), one star per strictness run (optimization- vs correctness-failure rate) and,
    when given, that setting's merged-alpha points (as in fig_frontier: [0, 1] filled,
    extrapolated hollow). `sweeps`: {setting: frontier.json path or payload}
    (write_sweep_frontier's); `alphas`: {setting: frontier.json} (write_frontier's) for some
    or all settings. A setting's alpha points and runs must carry one evaluation-spec
    fingerprint (check_overlay), else FrontierError."""
    import matplotlib.pyplot as plt

    set_style()
    if not sweeps:
        raise ValueError("fig_setting_frontiers: no settings")
    alphas = dict(alphas or {})
    unknown = sorted(set(alphas) - set(sweeps))
    if unknown:
        raise ValueError(
            f"fig_setting_frontiers: alpha frontiers for settings {unknown} "
            f"without a sweep (sweeps: {sorted(sweeps)})"
        )
    fig, axes = plt.subplots(
        1, len(sweeps), figsize=(3.4 * len(sweeps), 3.2), squeeze=False, sharex=True, sharey=True
    )
    for ax, (setting, sweep) in zip(axes[0], sweeps.items(), strict=True):
        sweep_data = sweep if isinstance(sweep, Mapping) else _load(sweep)
        rows = sweep_data["rows"]
        if setting in alphas:
            grid = (
                alphas[setting] if isinstance(alphas[setting], Mapping) else _load(alphas[setting])
            )
            check_overlay({f"{setting} sweep": sweep_data, f"{setting} alpha grid": grid})
            draw_alpha_points(ax, grid["rows"])
        xs = [r["correctness_failure"] for r in rows]
        ys = [r["optimization_failure"] for r in rows]
        if setting not in alphas:
            ax.plot(xs, ys, "-", color="#adb5bd", lw=1, zorder=1)
        ax.scatter(xs, ys, marker="*", s=90, color="#e63946", zorder=3)
        annotate_points(
            ax,
            [(r.get("run", ""), x, y) for r, x, y in zip(rows, xs, ys, strict=True)],
            (4, -9),
            "#e63946",
        )
        ax.set_title(f"{setting}")
        ax.set_xlabel("correctness-failure rate")
    axes[0][0].set_ylabel("optimization-failure rate")
    fig.suptitle(
        "frontier per setting (stars: strictness runs; circles: α, hollow: extrapolated)", y=1.04
    )
    paths = save(fig, name, out_dir)
    plt.close(fig)
    return paths


def fig_outcome_classes(frontier, out_dir=None, name="outcome_classes") -> list[Path]:
    """The four outcome-class rates (and pass@1) against alpha; [0, 1] shaded."""
    import matplotlib.pyplot as plt

    set_style()
    rows = sorted(_rows(frontier, OUTCOMES), key=lambda r: r["alpha"])
    alphas = [r["alpha"] for r in rows]
    fig, ax = plt.subplots(figsize=(4.6, 3.2))
    ax.axvspan(0, 1, color="#f1faee", zorder=0, label="interpolation")
    for o in OUTCOMES:
        ax.plot(
            alphas,
            [r[o] for r in rows],
            "-o",
            ms=3,
            color=OUTCOME_COLORS[o],
            label=o.replace("_", " "),
        )
    ax.set_xlabel("α  (θ = α·θ_strict + (1-α)·θ_lenient)")
    ax.set_ylabel("fraction of samples")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    ax.set_title("outcome classes along the weight-averaging axis")
    paths = save(fig, name, out_dir)
    plt.close(fig)
    return paths


def fig_ensemble_passk(passk, out_dir=None, name="ensemble_passk") -> list[Path]:
    """Ensemble pass@k vs k at a matched budget, one line (with bootstrap band) per pool."""
    import matplotlib.pyplot as plt

    set_style()
    data = _load(passk)
    fig, ax = plt.subplots(figsize=(4.2, 3.2))
    for pool in dict.fromkeys(r["pool"] for r in data["rows"]):
        rs = sorted((r for r in data["rows"] if r["pool"] == pool), key=lambda r: r["k"])
        ks = [r["k"] for r in rs]
        color = POOL_COLORS.get(pool)
        members = data.get("pools", {}).get(pool, [])
        label = (
            f"{pool} ({members[0]})"
            if len(members) == 1 and isinstance(members[0], str)
            else f"{pool} (α={members[0]:g})"
            if len(members) == 1
            else f"{pool} ({len(members)} ckpts)"
        )  # a single member: an alpha or a 06 run
        ax.plot(ks, [r["pass"] for r in rs], "-o", ms=3, color=color, label=label)
        ax.fill_between(ks, [r["lo"] for r in rs], [r["hi"] for r in rs], color=color, alpha=0.15)
    if len(data.get("ks", [])) > 1 and max(data["ks"]) / max(1, min(data["ks"])) >= 8:
        ax.set_xscale("log", base=2)
    else:
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("k (total samples per problem, split over the pool)")
    ax.set_ylabel("pass@k")
    ax.legend(frameon=False)
    ax.set_title("ensembles along the frontier at a matched budget")
    paths = save(fig, name, out_dir)
    plt.close(fig)
    return paths


def fig_reward_curves(
    runs: Mapping[str, str | Path],
    out_dir=None,
    name="reward_curves",
    components=("out", "proc", "fmt"),
) -> list[Path]:
    """GRPO training curves: total reward and each logged reward component vs step, per run."""
    import matplotlib.pyplot as plt

    set_style()
    missing = [
        str(Path(d) / "metrics.jsonl")
        for d in runs.values()
        if not (Path(d) / "metrics.jsonl").is_file()
    ]
    if missing:
        raise FileNotFoundError(f"GRPO metrics files do not exist: {missing}")
    curves = reward_curves({k: str(v) for k, v in runs.items()})
    if curves.empty:
        raise NoData(f"no logged steps in {list(runs.values())}")
    panels = ["reward"] + [c for c in components if curves.metric.str.endswith("/" + c).any()]
    fig, axes = plt.subplots(1, len(panels), figsize=(2.8 * len(panels), 2.6), squeeze=False)
    for ax, panel in zip(axes[0], panels, strict=True):
        for run, g in curves.groupby("run", sort=False):
            sel = (
                g[g.metric == panel] if panel == "reward" else g[g.metric.str.endswith("/" + panel)]
            )
            if len(sel):
                sel = sel.groupby("step", as_index=False).value.mean()
                ax.plot(sel.step, sel.value, "-", marker="o", ms=2, label=run)
        ax.set_title(
            {
                "reward": "total reward",
                "out": "outcome",
                "proc": "process (gated)",
                "fmt": "format",
            }.get(panel, panel)
        )
        ax.set_xlabel("step")
    axes[0][0].legend(frameon=False)
    paths = save(fig, name, out_dir)
    plt.close(fig)
    return paths


def rm_accuracy_table(lcbrb=None, rm=None) -> list[dict]:
    """Rows {dataset, method, accuracy, ci_low, ci_high, n} from notebook 03's table (pair type
    "all") and notebook 02's held-out accuracy (no CI there)."""
    rows = []
    if lcbrb is not None:
        for r in _load(lcbrb).get("table", []):
            if r.get("pair_type", "all") == "all":
                rows.append(
                    {
                        k: r.get(k)
                        for k in ("dataset", "method", "accuracy", "ci_low", "ci_high", "n")
                    }
                )
    if rm is not None:
        m = _load(rm)
        if m.get("accuracy") is not None:
            rows.append(
                {
                    "dataset": "CRPL held-out",
                    "method": "crpl_rm",
                    "accuracy": m["accuracy"],
                    "ci_low": None,
                    "ci_high": None,
                    "n": m.get("n_eval"),
                }
            )
    return rows


def fig_rm_accuracy(lcbrb=None, rm=None, out_dir=None, name="rm_accuracy") -> list[Path]:
    """Reward-model / judge accuracy on preference pairs: bars with bootstrap CIs, plus the same
    table as <name>.csv and <name>.md beside the figure."""
    import matplotlib.pyplot as plt
    import pandas as pd

    set_style()
    if lcbrb is None and rm is None:
        raise ValueError("fig_rm_accuracy: give the LCB-RB metrics and/or the RM metrics file")
    table = pd.DataFrame(rm_accuracy_table(lcbrb, rm))
    if table.empty or table.accuracy.isna().all():
        raise NoData(f"no accuracy rows in {lcbrb} / {rm}")
    table = table.dropna(subset=["accuracy"])
    labels = [f"{d}\n{m}" for d, m in zip(table.dataset, table.method, strict=True)]
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(table), 3.0))

    def gap(x, y):
        return abs(x - y) if y is not None and y == y else 0.0

    err = [
        [gap(a, lo) for a, lo in zip(table.accuracy, table.ci_low, strict=True)],
        [gap(a, hi) for a, hi in zip(table.accuracy, table.ci_high, strict=True)],
    ]
    ax.bar(range(len(table)), table.accuracy, yerr=err, capsize=3, color="#457b9d")
    ax.axhline(0.5, color="#6c757d", ls="--", lw=0.8, label="chance")
    ax.set_xticks(range(len(table)), labels, fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel("pairwise accuracy")
    ax.legend(frameon=False)
    ax.set_title("reward models on preference pairs")
    paths = save(fig, name, out_dir)
    plt.close(fig)
    base = Path(out_dir) if out_dir is not None else SCRATCH_DIR
    table.to_csv(base / f"{name}.csv", index=False)
    (base / f"{name}.md").write_text(_markdown(table))
    return paths + [base / f"{name}.csv", base / f"{name}.md"]


def _markdown(table) -> str:
    def cell(v):
        return "" if v is None or v != v else (f"{v:.3f}" if isinstance(v, float) else str(v))

    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += [
        "| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)
    ]
    return "\n".join(lines) + "\n"


def draw_eval_outcomes(ax, summaries: Mapping[str, Mapping]) -> None:
    """One stacked bar per evaluation (the four outcome classes as fractions of samples), pass@1
    above each bar and mean tokens per response below it."""
    names = list(summaries)
    bottom = [0.0] * len(names)
    for outcome in OUTCOMES:
        vals = [float(summaries[n]["outcomes"].get(outcome, 0.0)) for n in names]
        ax.bar(
            names,
            vals,
            bottom=bottom,
            color=OUTCOME_COLORS[outcome],
            width=0.6,
            label=outcome.replace("_", " "),
        )
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    for x, n in enumerate(names):
        s = summaries[n]
        if "pass@1" in s:
            ax.text(x, 1.02, f"pass@1 {s['pass@1']:.2f}", ha="center", va="bottom", fontsize=7)
        ax.text(
            x,
            -0.1,
            f"{s['tokens']['mean']:.0f} tok",
            ha="center",
            va="top",
            fontsize=7,
            transform=ax.get_xaxis_transform(),
        )
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("fraction of samples")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)


def fig_eval_outcomes(
    summaries: Mapping[str, str | Path | Mapping], out_dir=None, name="eval_outcomes", title=None
) -> list[Path]:
    """Outcome classes per benchmark/model from evaluation summary.json files (or their dicts)."""
    import matplotlib.pyplot as plt

    set_style()
    if not summaries:
        raise NoData("fig_eval_outcomes: no evaluation summaries")
    loaded = {k: (v if isinstance(v, Mapping) else _load(v)) for k, v in summaries.items()}
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * len(loaded), 3.4))
    draw_eval_outcomes(ax, loaded)
    ax.set_title(title or "outcome classes per evaluation")
    paths = save(fig, name, out_dir)
    plt.close(fig)
    return paths


def fig_headline(headline, out_dir=None, name="headline") -> list[Path]:
    """ReCode's headline table as grouped bars: pass@1 per benchmark (and the average) per
    policy, with bootstrap CIs; the legend gives each policy's gain over outcome-only GRPO and
    its token change. Input: notebook 05's headline.json (recode_lib.evaluation.headline)."""
    import matplotlib.pyplot as plt

    set_style()
    h = headline if isinstance(headline, Mapping) else _load(headline)
    policies, benchmarks = list(h.get("policies") or []), list(h.get("benchmarks") or [])
    if not policies or not benchmarks:
        raise NoData(
            f"{headline if not isinstance(headline, Mapping) else 'headline'}: "
            "no policies or benchmarks"
        )
    cols = benchmarks + ["average"]
    fig, ax = plt.subplots(figsize=(1.6 + 0.9 * len(cols) * max(1, len(policies)) / 2.5, 3.2))
    width = 0.8 / len(policies)
    for j, p in enumerate(policies):
        xs, ys, lo, hi = [], [], [], []
        for i, b in enumerate(cols):
            if b == "average":
                y, ci = h["summary"][p]["average_pass@1"], [None, None]
            else:
                cell = h["table"][p][b]
                y, ci = cell["pass@1"], cell.get("ci") or [None, None]
            xs.append(i - 0.4 + width * (j + 0.5))
            ys.append(y)
            lo.append(0.0 if ci[0] is None else max(0.0, y - ci[0]))
            hi.append(0.0 if ci[1] is None else max(0.0, ci[1] - y))
        s = h["summary"][p]
        label = p
        if s.get("gain_vs_baseline") is not None:
            label += f" ({s['gain_vs_baseline']:+.1%} pass@1"
            tc = s.get("token_change_vs_baseline")
            label += f", {tc:+.1%} tokens)" if tc is not None else ")"
        ax.bar(
            xs,
            ys,
            width=width,
            color=MODEL_COLORS[j % len(MODEL_COLORS)],
            label=label,
            yerr=[lo, hi],
            capsize=2,
            error_kw={"elinewidth": 0.8},
        )
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols, rotation=20, ha="right")
    ax.set_ylabel("pass@1")
    ax.set_ylim(0, 1)
    ax.set_title(
        "pass@1 per benchmark and policy (vs " + str(h.get("baseline", "outcome_only")) + ")"
    )
    ax.legend(loc="upper right", frameon=False)
    paths = save(fig, name, out_dir)
    plt.close(fig)
    return paths


def fig_repair(repair, out_dir=None, name="repair") -> list[Path]:
    """Repair rate per failure class (bars per model, bootstrap CIs) beside the original pass@1,
    from notebook 09's repair.json ({"rows": [{"model", "original_pass@1", "original_ci",
    "repair": {"all" | <failure class>: {"repair_rate", "ci_low", "ci_high", "n"}}}]}): bars on
    the start model's failures, a white diamond per model on its own ("repair_own", "all")."""
    import matplotlib.pyplot as plt

    set_style()
    rows = _load(repair).get("rows") or []
    rows = [r for r in rows if r.get("repair")]
    if not rows:
        raise NoData(f"{repair}: no model has repair results")
    classes = [c for c in REPAIR_CLASSES if any(c in r["repair"] for r in rows)]
    fig, (ax, ax2) = plt.subplots(
        1,
        2,
        figsize=(2.2 + 1.1 * len(classes) + 1.2, 3.0),
        gridspec_kw={"width_ratios": [max(len(classes), 1), 1.3]},
    )
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
        ax.bar(xs, ys, width=width * 0.95, yerr=[lo, hi], capsize=2, color=color, label=r["model"])
        own = (r.get("repair_own") or {}).get("all")
        if own is not None and "all" in classes:  # its rate on its own failures (a marker)
            x = classes.index("all") - 0.4 + width * (j + 0.5)
            ax.errorbar(
                [x],
                [own["repair_rate"]],
                fmt="D",
                mfc="white",
                mec="black",
                ms=4,
                ecolor="black",
                capsize=2,
                yerr=[
                    [max(0.0, own["repair_rate"] - own["ci_low"])],
                    [max(0.0, own["ci_high"] - own["repair_rate"])],
                ],
                label="on its own failures" if j == 0 else None,
            )
        p = r.get("original_pass@1")
        if p is not None:
            ci = r.get("original_ci") or [p, p]
            ax2.bar(
                [j],
                [p],
                yerr=[[max(0.0, p - ci[0])], [max(0.0, ci[1] - p)]],
                capsize=2,
                color=color,
            )
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


def _metrics_dirs(folder: Path) -> dict[str, Path]:
    if not folder.is_dir():
        return {}
    return {d.name: d for d in sorted(folder.iterdir()) if (d / "metrics.jsonl").is_file()}


def rebuild_all(run_dir, out_dir=None) -> dict:
    """Every paper figure from one run folder's result files (runs/<profile>/) into out_dir
    (default figures/<profile>/, recode_lib.core.paths.figures_dir(run_dir's name)): returns
    {"made": {figure: [pdf, png]}, "skipped": {figure: reason}, "out_dir": str, "removed": [..]};
    a figure whose inputs are missing or empty is skipped with the reason, never an error, and
    its files left in out_dir by an earlier rebuild are removed ("removed"), so the folder holds
    exactly this run's figures. Figures, in order: eval_outcomes
    (05), headline (05: pass@1 per policy and benchmark), sweep_frontier (06), frontier and
    outcome_classes (07, with 06's sweep), ensemble_passk (08), setting_frontiers (11: each
    setting's sweep and alpha grid side by side), reward_curves (04, 06 and 09 runs), rm_accuracy
    (03 and 02), repair (09). A frontier whose 07 and 06 points were sampled differently is skipped
    with check_overlay's message."""
    run = Path(run_dir)
    out_dir = Path(out_dir) if out_dir is not None else figures_dir(run.resolve().name)
    sweep = step_dir(run, STRICTNESS_SWEEP) / "frontier.json"
    front = step_dir(run, WEIGHT_AVERAGING) / "frontier.json"
    per_setting = step_dir(run, SETTINGS_SWEEP)
    setting_sweeps = {
        d.name: d / "frontier.json"
        for d in sorted(per_setting.glob("*"))
        if (d / "frontier.json").is_file()
    }
    setting_sweeps = {s: setting_sweeps[s] for s in SETTINGS if s in setting_sweeps}
    setting_alphas = {
        s: p.parent / "alpha" / "frontier.json"
        for s, p in setting_sweeps.items()
        if (p.parent / "alpha" / "frontier.json").is_file()
    }
    grpo_runs = (
        _metrics_dirs(step_dir(run, GRPO))
        | {f"sweep/{k}": v for k, v in _metrics_dirs(step_dir(run, STRICTNESS_SWEEP)).items()}
        | {f"repair/{k}": v for k, v in _metrics_dirs(step_dir(run, REPAIR)).items()}
    )
    lcbrb, rm = step_dir(run, LCB_RB) / "metrics.json", step_dir(run, REWARD_MODEL) / "metrics.json"
    evals = {
        d.name: d / "summary.json"
        for d in sorted((step_dir(run, CODEGEN_EVAL)).glob("*"))
        if (d / "summary.json").is_file()
    }
    figures = {
        "eval_outcomes": lambda: fig_eval_outcomes(evals, out_dir=out_dir),
        "headline": lambda: fig_headline(
            step_dir(run, CODEGEN_EVAL) / "headline.json", out_dir=out_dir
        ),
        "sweep_frontier": lambda: fig_frontier(
            None, sweep=sweep, out_dir=out_dir, name="sweep_frontier"
        ),
        "frontier": lambda: fig_frontier(
            front, sweep=sweep if sweep.is_file() else None, out_dir=out_dir
        ),
        "outcome_classes": lambda: fig_outcome_classes(front, out_dir=out_dir),
        "ensemble_passk": lambda: fig_ensemble_passk(
            step_dir(run, ENSEMBLE) / "passk.json", out_dir=out_dir
        ),
        "setting_frontiers": lambda: fig_setting_frontiers(
            setting_sweeps, setting_alphas, out_dir=out_dir
        ),
        "reward_curves": lambda: fig_reward_curves(grpo_runs, out_dir=out_dir),
        "rm_accuracy": lambda: fig_rm_accuracy(
            lcbrb if lcbrb.is_file() else None, rm if rm.is_file() else None, out_dir=out_dir
        ),
        "repair": lambda: fig_repair(step_dir(run, REPAIR) / "repair.json", out_dir=out_dir),
    }
    made, skipped = {}, {}
    for name, build in figures.items():
        if name == "setting_frontiers" and not setting_sweeps:
            skipped[name] = f"no <setting>/frontier.json under {per_setting}"
        elif name == "reward_curves" and not grpo_runs:
            skipped[name] = (
                f"no GRPO metrics.jsonl under {run}/04_cg_grpo, 06_strictness_sweep, 09_repair"
            )
        elif name == "rm_accuracy" and not (lcbrb.is_file() or rm.is_file()):
            skipped[name] = f"neither {lcbrb} nor {rm} exists"
        else:
            try:
                made[name] = [str(p) for p in build()]
            except (FileNotFoundError, NoData, FrontierError) as exc:
                skipped[name] = str(exc)
    removed = [
        str(f)
        for name in skipped
        for f in (out_dir / f"{name}{s}" for s in FIGURE_SUFFIXES + TABLE_SUFFIXES.get(name, ()))
        if f.is_file()
    ]
    for f in removed:
        Path(f).unlink()
    return {"made": made, "skipped": skipped, "out_dir": str(out_dir), "removed": removed}
