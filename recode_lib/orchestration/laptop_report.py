"""The laptop profile's report: each of its claims, its numbers with CIs, observed or not.

    from recode_lib.orchestration.laptop_report import build_report, write_report
    report = write_report(paths.runs_dir("laptop"))   # -> 99_paper_figures/laptop_report.{json,md}

It does not run anything and does not draw figures (recode_lib.analysis.plots does).
More: docs/modules/orchestration.md (recode_lib.orchestration.laptop_report).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from recode_lib.core.jsonl import read_jsonl, write_json_atomic
from recode_lib.core.run_files import (
    FIGURES,
    GRPO,
    HEADLINE_FILE,
    REWARD_MODEL,
    SETTINGS_SWEEP,
    WEIGHT_AVERAGING,
    read_metrics,
    step_dir,
)
from recode_lib.metrics import bootstrap_ci, sigmoid
from recode_lib.process_reward.scale import paired_difference

RM_CHANCE = 0.55
MULTI_TURN = ("tool", "agentic")  # the settings whose rollouts call tools
STALE = ".stale-"  # recode_lib.core.paths.set_aside's suffix: an older evaluation


def read_json_or_none(path: Path):
    return json.loads(path.read_text()) if path.is_file() else None


def wilson(k: float, n: int, z: float = 1.96) -> list:
    """Wilson score interval of k successes out of n (None for n = 0)."""
    if n <= 0:
        return [None, None]
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return [max(0.0, c - h), min(1.0, c + h)]


def thirds_rise(values: list[float], n_boot: int = 1000, seed: int = 0) -> dict | None:
    """Mean of the last third of `values` minus the first third, with a percentile bootstrap CI
    (each third resampled with replacement); None with fewer than 2 values."""
    import numpy as np

    vals = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if len(vals) < 2:
        return None
    k = max(1, len(vals) // 3)
    first, last = np.array(vals[:k]), np.array(vals[-k:])
    rng = np.random.default_rng(seed)
    boots = [
        rng.choice(last, last.size).mean() - rng.choice(first, first.size).mean()
        for _ in range(n_boot)
    ]
    lo, hi = np.quantile(boots, [0.025, 0.975])
    return {
        "first": float(first.mean()),
        "last": float(last.mean()),
        "rise": float(last.mean() - first.mean()),
        "ci": [float(lo), float(hi)],
        "steps": len(vals),
        "window": k,
    }


def metric_series(run_dir: Path, key: str) -> list[float]:
    return [r[key] for r in read_metrics(run_dir) if isinstance(r.get(key), (int, float))]


def claim_learning(run: Path) -> dict:
    d = run / GRPO
    evals = {
        p.parent.name: read_json_or_none(p)
        for p in sorted((d / "eval").glob("*/summary.json"))
        if "." not in p.parent.name
    }
    start = evals.get("start")
    declared = (read_json_or_none(d / "metrics.json") or {}).get("seed_runs") or {}
    if declared:  # the runs 04 trained last (a folder of an earlier SEEDS is not one of them)
        variants = sorted({run for by in declared.values() for run in by.values()})
    else:
        variants = sorted(
            p.parent.name for p in d.glob("*/metrics.jsonl") if "." not in p.parent.name
        )  # not runs set aside (<name>.stale-<k>)
    out = {
        "claim": "GRPO learns: training reward and held-out pass@1 rise over the start model",
        "variants": {},
    }
    if not variants or not start:
        return out | {
            "observed": None,
            "why": f"no trained runs or no start-model evaluation in {d}",
        }
    out["start"] = {
        "pass@1": start["pass@1"],
        "ci": start.get("pass@1_ci"),
        "n_problems": start.get("n_problems"),
        "n_samples": start.get("n_samples"),
    }
    for v in variants:
        s = evals.get(v)
        rise = thirds_rise(metric_series(d / v, "reward"))
        row = {"train_reward": rise}
        if s:
            row |= {
                "pass@1": s["pass@1"],
                "ci": s.get("pass@1_ci"),
                "delta_pass@1": s["pass@1"] - start["pass@1"],
                "ci_separated": bool(s.get("pass@1_ci") and s["pass@1_ci"][0] > start["pass@1"]),
            }
        row["observed"] = bool(rise and rise["rise"] > 0 and s and row["delta_pass@1"] > 0)
        out["variants"][v] = row
    out["observed"] = any(r["observed"] for r in out["variants"].values())
    seed_runs = (read_json_or_none(d / "metrics.json") or {}).get("seed_runs") or {}
    seeds = sorted({s for by in seed_runs.values() for s in by}, key=str)
    if len(seeds) > 1:  # replication: some variant learns on every seed
        out["observed_per_seed"] = {
            s: any(
                out["variants"].get(by.get(s), {}).get("observed", False)
                for by in seed_runs.values()
            )
            for s in seeds
        }
        out["replicated"] = all(out["observed_per_seed"].values())
    return out


def gate_runs(d: Path) -> dict[str, dict[str, str]]:
    """{seed: {"additive": run, "gated": run}} of 04's folder: its metrics.json `seed_runs`
    (one pair per seed both variants trained), else the single-seed folders ({"": ...})."""
    runs = (read_json_or_none(d / "metrics.json") or {}).get("seed_runs") or {}
    if "additive" in runs and "gated" in runs:
        seeds = [s for s in runs["additive"] if s in runs["gated"]]
        if seeds:
            return {s: {"additive": runs["additive"][s], "gated": runs["gated"][s]} for s in seeds}
    return {"": {"additive": "additive", "gated": "gated"}}


def gate_of_seed(d: Path, names: dict, metrics: dict, margin: float) -> dict:
    """Claim (b) for one seed's pair of runs (names: {"additive": run, "gated": run})."""
    comp = {}
    for v in ("additive", "gated"):
        if (d / names[v] / "metrics.jsonl").is_file():
            comp[v] = {
                c: thirds_rise(metric_series(d / names[v], f"{v}/{c}")) for c in ("proc", "out")
            }
    out = {"runs": dict(names), "components": comp}
    if set(comp) != {"additive", "gated"} or not all(
        comp[v]["proc"] and comp[v]["out"] for v in comp
    ):
        return out | {
            "observed": None,
            "why": f"needs additive and gated runs with proc/out in {d}",
        }
    held_all = (metrics.get("held_out_proc") or {}).get("models", {})
    models = {"start": "start", **names}
    held = {role: held_all[m] for role, m in models.items() if m in held_all}
    scores = {role: d / "eval" / m / "rm_scores.jsonl" for role, m in models.items()}
    if set(held) == set(models) and all(p.is_file() for p in scores.values()):
        return out | held_out_gate(
            held, scores, (metrics.get("held_out_proc") or {}).get("scale") or {}, margin
        )
    add, gat = comp["additive"], comp["gated"]
    return out | {
        "basis": "training_curves",
        "observed": bool(
            add["proc"]["rise"] > margin
            and abs(add["out"]["rise"]) < margin
            and gat["proc"]["rise"] < add["proc"]["rise"]
        ),
    }


def claim_gate(run: Path, margin: float = 0.05, rm_chance: float = RM_CHANCE) -> dict:
    """Claim (b) per seed (gate_of_seed); the top-level fields are the first seed's, and with
    several seeds `seeds` holds each and `observed` needs every seed's."""
    d = run / GRPO
    rm = read_json_or_none(step_dir(run, REWARD_MODEL) / HEADLINE_FILE)
    out = {
        "claim": "with 02's RM, additive raises R_proc while R_out stays flat; gated does not",
        "margin": margin,
        "rm_accuracy": rm.get("accuracy") if rm else None,
        "rm_n_eval": rm.get("n_eval") if rm else None,
    }
    acc, n = out["rm_accuracy"], out["rm_n_eval"]
    out["rm_ci"] = wilson(acc * n, n) if acc is not None and n else [None, None]
    # usable signal: the accuracy's 95% interval lies above chance (without n: above rm_chance)
    out["rm_signal"] = (
        None
        if acc is None
        else out["rm_ci"][0] > 0.5
        if out["rm_ci"][0] is not None
        else acc > rm_chance
    )
    metrics = read_json_or_none(d / "metrics.json") or {}
    out["proc_scale"] = metrics.get("proc_scale")
    per_seed = {s: gate_of_seed(d, names, metrics, margin) for s, names in gate_runs(d).items()}
    out |= next(iter(per_seed.values()))
    if len(per_seed) > 1:
        out["seeds"] = per_seed
        verdicts = [r["observed"] for r in per_seed.values()]
        out["observed"] = None if None in verdicts else all(verdicts)
        out["observed_seeds"] = sum(bool(v) for v in verdicts)
    if out["rm_signal"] and out.get("observed") is False:
        out["why"] = gate_why(per_seed, margin)
    if out["rm_signal"] is False:
        out["why"] = (
            f"the reward model's held-out pair accuracy {out['rm_accuracy']:.2f} "
            f"(95% CI {fmt_ci(out['rm_ci'])}, n={out['rm_n_eval']}) does not exclude "
            f"chance: R_proc carries no usable signal"
        )
    return out


def gate_why(per_seed: dict, margin: float = 0.05) -> str:
    """Why claim (b) was not observed with a usable RM, from the measured numbers: per seed,
    each of held_out_gate's conditions that failed (additive's R_proc over the start's and
    over gated's, CIs above 0; additive's R_out not above gated's by more than `margin`), then
    what the RM prefers (R_proc of passing minus failing samples)."""
    parts = []
    for seed, r in per_seed.items():
        paired = r.get("paired") or {}
        label = f"seed {seed}" if seed else "the run"
        failed = []
        for key, who in (("additive-start", "the start's"), ("additive-gated", "gated's")):
            d = (paired.get(key) or {}).get("proc")
            if d and not d["ci"][0] > 0:
                failed.append(
                    f"additive's R_proc - {who} {d['mean']:+.3f} CI {fmt_ci(d['ci'])} (not above 0)"
                )
        d = (paired.get("additive-gated") or {}).get("out")
        if d and d["mean"] > margin:
            failed.append(
                f"additive's R_out - gated's {d['mean']:+.3f} (more correct, by more than {margin})"
            )
        if failed:
            parts.append(f"{label}: " + "; ".join(failed))
    why = "not every condition held (" + " | ".join(parts) + ")" if parts else "not observed"
    prefers = [
        v
        for r in per_seed.values()
        for m, v in (r.get("rm_prefers_passing") or {}).items()
        if m != "start"
    ]
    if prefers and all(v > 0 for v in prefers):
        why += (
            "; the RM scores the trained policies' passing held-out samples above their failing "
            "ones (" + ", ".join(f"{v:+.3f}" for v in prefers) + "), so raising R_proc and "
            "raising R_out go together here: gated, rewarded R_proc on its passing samples, "
            "raises it as much, and additive found no direction the RM rewards that costs "
            "correctness within these steps"
        )
    elif prefers and all(v < 0 for v in prefers):
        why += (
            "; the RM scores the trained policies' failing held-out samples above their "
            "passing ones (" + ", ".join(f"{v:+.3f}" for v in prefers) + "): R_proc rewards "
            "something other than correctness on these samples"
        )
    return why


def held_out_gate(held: dict, scores: dict, scale: dict, margin: float) -> dict:
    """Claim (b) on 04's held-out samples scored by the RM (rm_scores.jsonl per model), every
    difference paired by problem with a bootstrap CI over problems. ReCode's reward-hacking
    obstacle: a neural process reward is loose, so a policy can inflate it without
    writing more correct code. Observed when additive's R_proc rises over the start model's and
    over gated's (both CIs above 0) while its R_out is not above gated's by more than `margin`:
    additive's extra process reward buys no extra correctness. Both variants learn from R_out,
    so R_out rising over the start model is expected of both; `observed_literal` is the
    stricter reading (additive's R_out within `margin` of the start model's as well)."""
    center, temperature = scale.get("center", 0.0), scale.get("temperature", 1.0)
    rows = {m: read_jsonl(p) for m, p in scores.items()}

    def proc(r):
        return sigmoid((r["score"] - center) / temperature)

    def out_(r):
        return float(r["passed"])

    pairs = {
        f"{a}-{b}": {
            "proc": paired_difference(rows[a], rows[b], proc),
            "out": paired_difference(rows[a], rows[b], out_),
        }
        for a, b in (("additive", "start"), ("gated", "start"), ("additive", "gated"))
    }
    add_up = all(
        pairs[k]["proc"] and pairs[k]["proc"]["ci"][0] > 0
        for k in ("additive-start", "additive-gated")
    )
    no_more_correct = bool(
        pairs["additive-gated"]["out"] and pairs["additive-gated"]["out"]["mean"] <= margin
    )
    flat_vs_start = bool(
        pairs["additive-start"]["out"] and abs(pairs["additive-start"]["out"]["mean"]) <= margin
    )
    keep = ("proc", "proc_ci", "out", "out_ci", "proc_passed", "proc_failed", "proc_failed_ci")
    prefers = {
        m: held[m]["proc_passed"] - held[m]["proc_failed"]
        for m in ("start", "additive", "gated")
        if held[m].get("proc_passed") is not None and held[m].get("proc_failed") is not None
    }
    return {
        "basis": "held_out",
        "rm_prefers_passing": prefers,
        "held_out": {m: {k: held[m].get(k) for k in keep} for m in ("start", "additive", "gated")},
        "paired": pairs,
        "observed": add_up and no_more_correct,
        "observed_literal": add_up and no_more_correct and flat_vs_start,
    }


def weights_digest(folder) -> str | None:
    """sha256 over a checkpoint folder's *.safetensors files (name and bytes, sorted); None when
    the folder has none."""
    import hashlib

    files = sorted(Path(folder).glob("*.safetensors")) if folder else []
    if not files:
        return None
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def claim_extrapolation(run: Path) -> dict:
    """Claim (c) on 07's frontier (the sweep's first seed) and, when 07 replicated the grid on
    the sweep's other seeds (07_weight_averaging/seed<s>/frontier.json), on each of them:
    `seeds` {s: result}, `replicated` when every replica is observed too."""
    out = {
        "claim": "merging the two trained endpoints: the format-error share grows for |alpha| "
        "beyond the stable range"
    }
    out |= extrapolation_of(
        read_json_or_none(run / WEIGHT_AVERAGING / "frontier.json"),
        "07_weight_averaging/frontier.json",
    )
    replicas = {
        p.parent.name.removeprefix("seed"): p
        for p in sorted((run / WEIGHT_AVERAGING).glob("seed*/frontier.json"))
    }
    if replicas:
        out["seeds"] = {
            s: extrapolation_of(read_json_or_none(p), str(p)) for s, p in replicas.items()
        }
        out["replicated"] = bool(out.get("observed")) and all(
            r.get("observed") for r in out["seeds"].values()
        )
    return out


def extrapolation_of(front: dict | None, where: str) -> dict:
    """Claim (c) on one frontier.json payload (module docstring)."""
    out = {}
    if not front or not front.get("rows"):
        return out | {"observed": None, "why": f"no {where}"}
    rows = front["rows"]
    t = float(front.get("format_error_rise", {}).get("threshold", 2.0))
    out["threshold"] = t
    out["endpoints"] = front.get("endpoints")
    out["by_alpha"] = [
        {
            "alpha": r["alpha"],
            "format_error": r["format_error"],
            "n_samples": r["n_samples"],
            "pass@1": r.get("pass@1"),
            "ci": wilson(r["format_error"] * r["n_samples"], r["n_samples"]),
        }
        for r in rows
    ]
    for side, pick in (("inside", lambda a: abs(a) <= t), ("beyond", lambda a: abs(a) > t)):
        sel = [r for r in rows if pick(r["alpha"])]
        n = sum(r["n_samples"] for r in sel)
        k = sum(r["format_error"] * r["n_samples"] for r in sel)
        out[side] = {"format_error": k / n if n else None, "n_samples": n, "ci": wilson(k, n)}
    if out["inside"]["n_samples"] == 0 or out["beyond"]["n_samples"] == 0:
        return out | {"observed": None, "why": f"no alphas on both sides of |alpha| = {t}"}
    ends = out["endpoints"] or {}
    low, high = weights_digest(ends.get("low")), weights_digest(ends.get("high"))
    out["endpoints_identical"] = low is not None and low == high
    if out["endpoints_identical"]:
        return out | {
            "observed": False,
            "observed_point": False,
            "why": "the two endpoints have identical weights (their runs got the same "
            "reward at every step: the lenient and the strict reward agreed on "
            "every sampled completion), so every alpha is the same model",
        }
    out["observed_point"] = out["beyond"]["format_error"] > out["inside"]["format_error"]
    out["observed"] = bool(
        out["observed_point"] and out["beyond"]["ci"][0] > out["inside"]["ci"][1]
    )
    return out


def mean_ci(values: list[float], n_boot: int = 1000, seed: int = 0) -> dict | None:
    """Mean of `values` with a percentile bootstrap 95% CI over them (metrics.bootstrap_ci);
    None when empty."""
    if not values:
        return None
    mean, lo, hi = bootstrap_ci(values, n_boot=n_boot, seed=seed)
    return {"mean": mean, "ci": [lo, hi], "n": len(values)}


def setting_rollouts(folder: Path) -> list[dict]:
    """Every evaluated rollout under one setting's folder of notebook 11 (its sweep runs' and its
    alpha points' samples.jsonl), set-aside evaluations excluded."""
    rows = []
    for path in sorted(folder.rglob("samples.jsonl")):
        rel = path.relative_to(folder).parts
        if "eval" in rel and not any(STALE in part for part in rel):
            rows += read_jsonl(path)
    return rows


def setting_tool_use(folder: Path) -> dict:
    rows = setting_rollouts(folder)
    calls = [int(r.get("tool_calls") or 0) for r in rows]
    errors = [int(r.get("tool_errors") or 0) for r in rows]
    with_call = sum(c > 0 for c in calls)
    ran = [
        max(0, c - e) for c, e in zip(calls, errors, strict=True)
    ]  # parsed, known tool, ran without error
    front = read_json_or_none(folder / "frontier.json") or {}
    alpha = read_json_or_none(folder / "alpha" / "frontier.json") or {}
    return {
        "n_rollouts": len(rows),
        "tool_calls": mean_ci(calls),
        "tool_errors": mean_ci(errors),
        "tool_calls_ran": mean_ci(ran),
        "with_tool_call_ran": {
            "share": sum(r > 0 for r in ran) / len(rows) if rows else None,
            "ci": wilson(sum(r > 0 for r in ran), len(rows)),
        },
        "with_tool_call": {
            "share": with_call / len(rows) if rows else None,
            "ci": wilson(with_call, len(rows)),
        },
        "runs": [{"run": r.get("run"), "pass@1": r.get("pass@1")} for r in front.get("rows", [])],
        "alphas": [
            {
                "alpha": r.get("alpha"),
                "pass@1": r.get("pass@1"),
                "format_error": r.get("format_error"),
            }
            for r in alpha.get("rows", [])
        ],
    }


def claim_tool_use(run: Path) -> dict:
    sweep = run / SETTINGS_SWEEP
    out = {
        "claim": "starting from the SFT checkpoint, the tool and agentic settings' rollouts "
        "call tools"
    }
    settings = (
        {p.name: setting_tool_use(p) for p in sorted(sweep.iterdir()) if p.is_dir()}
        if sweep.is_dir()
        else {}
    )
    settings = {s: v for s, v in settings.items() if v["n_rollouts"]}
    out["settings"] = settings
    multi = [s for s in MULTI_TURN if s in settings]
    if not multi:
        return out | {"observed": None, "why": "no tool or agentic rollouts in 11_settings_sweep"}
    below = [s for s in multi if settings[s]["tool_calls"]["ci"][0] <= 0]
    if below:
        return out | {
            "observed": False,
            "why": f"tool calls per rollout not above 0 (CI reaches 0) in: {', '.join(below)}",
        }
    return out | {"observed": True}


def build_report(run_dir) -> dict:
    run = Path(run_dir)
    return {
        "run_dir": str(run),
        "claims": {
            "learning": claim_learning(run),
            "gate_signature": claim_gate(run),
            "extrapolation": claim_extrapolation(run),
            "tool_use": claim_tool_use(run),
        },
    }


def fmt(x, nd=3):
    return "n/a" if x is None else f"{x:.{nd}f}"


def fmt_ci(ci):
    return "n/a" if not ci or ci[0] is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def verdict(c: dict) -> str:
    return {True: "observed", False: "NOT observed", None: "not measured"}[c.get("observed")]


def gate_lines(g: dict) -> list[str]:
    """The markdown lines of one seed's claim (b) (held-out and paired differences, curves)."""
    lines = []
    if g.get("basis"):
        lines.append(f"- judged on: {g['basis'].replace('_', ' ')}")
    for v, h in g.get("held_out", {}).items():
        lines.append(
            f"- held-out {v}: R_proc {fmt(h['proc'])} CI {fmt_ci(h['proc_ci'])} "
            f"(passing samples {fmt(h['proc_passed'])}, failing {fmt(h['proc_failed'])}), "
            f"R_out {fmt(h['out'])} CI {fmt_ci(h['out_ci'])}"
        )
    for pair, d in g.get("paired", {}).items():
        for c in ("proc", "out"):
            if d.get(c):
                lines.append(
                    f"- paired by problem, {pair.replace('-', ' - ')}: R_{c} "
                    f"{d[c]['mean']:+.3f} CI {fmt_ci(d[c]['ci'])} ({d[c]['n_problems']} problems)"
                )
    if g.get("rm_prefers_passing"):
        lines.append(
            "- what the RM prefers: R_proc of passing minus failing held-out samples, "
            + ", ".join(f"{m} {v:+.3f}" for m, v in g["rm_prefers_passing"].items())
        )
    if "observed_literal" in g:
        lines.append(
            f"- the stricter reading (additive's R_out also flat against the start model's): "
            f"{'observed' if g['observed_literal'] else 'NOT observed'}"
        )
    for v, comp in g.get("components", {}).items():
        for c, s in comp.items():
            if s:
                lines.append(
                    f"- training {v} R_{c}: {fmt(s['first'])} -> {fmt(s['last'])} "
                    f"(rise {fmt(s['rise'])} CI {fmt_ci(s['ci'])})"
                )
    if g.get("why") and g.get("observed") is None:
        lines.append(f"- {g['why']}")
    return lines


def side_lines(e: dict) -> list[str]:
    """Claim (c)'s two lines: the format-error share inside and beyond the threshold."""
    return [
        f"- |alpha| {'<=' if side == 'inside' else '>'} {e['threshold']}: format-error share "
        f"{fmt(e[side]['format_error'])} CI {fmt_ci(e[side]['ci'])} "
        f"({e[side]['n_samples']} samples)"
        for side in ("inside", "beyond")
        if e.get(side)
    ]


def report_markdown(rep: dict) -> str:
    lines = [f"# Laptop profile report ({rep['run_dir']})", ""]
    a = rep["claims"]["learning"]
    lines += [f"## (a) {a['claim']}: **{verdict(a)}**", ""]
    if a.get("start"):
        lines.append(
            f"- start model held-out pass@1 {fmt(a['start']['pass@1'])} "
            f"CI {fmt_ci(a['start']['ci'])} ({a['start']['n_problems']} problems, "
            f"{a['start']['n_samples']} samples)"
        )
    for v, r in a["variants"].items():
        tr = r.get("train_reward") or {}
        lines.append(
            f"- {v}: training reward {fmt(tr.get('first'))} -> {fmt(tr.get('last'))} "
            f"(rise {fmt(tr.get('rise'))} CI {fmt_ci(tr.get('ci'))}, {tr.get('steps')} steps); "
            f"held-out pass@1 {fmt(r.get('pass@1'))} CI {fmt_ci(r.get('ci'))}, "
            f"delta {fmt(r.get('delta_pass@1'))}; CI above start: {r.get('ci_separated')}"
        )
    if a.get("observed_per_seed"):
        per = ", ".join(
            f"seed {k}: {verdict({'observed': v})}" for k, v in a["observed_per_seed"].items()
        )
        lines.append(f"- replicated on every seed: {a['replicated']} ({per})")
    if a.get("why"):
        lines.append(f"- {a['why']}")
    g = rep["claims"]["gate_signature"]
    lines += [
        "",
        f"## (b) {g['claim']}: **{verdict(g)}**",
        "",
        f"- reward model held-out pair accuracy {fmt(g.get('rm_accuracy'))} "
        f"CI {fmt_ci(g.get('rm_ci'))} (n={g.get('rm_n_eval')}); usable signal (CI above 0.5): "
        f"{g.get('rm_signal')}",
    ]
    if g.get("proc_scale"):
        lines.append(
            f"- R_proc = sigmoid((score - {g['proc_scale']['proc_center']:.3f}) / "
            f"{g['proc_scale']['proc_temperature']:.3f}) (scaled on the start model's samples)"
        )
    if g.get("seeds"):
        lines.append(f"- observed on {g['observed_seeds']} of {len(g['seeds'])} seeds")
        for seed, sub in g["seeds"].items():
            lines += [
                "",
                f"### seed {seed} ({sub['runs']['additive']} vs {sub['runs']['gated']}): "
                f"**{verdict(sub)}**",
                "",
            ] + gate_lines(sub)
        lines.append("")
    else:
        lines += gate_lines(g)
    if g.get("why"):
        lines.append(f"- {g['why']}")
    e = rep["claims"]["extrapolation"]
    lines += ["", f"## (c) {e['claim']}: **{verdict(e)}**", ""]
    lines += side_lines(e)
    for r in e.get("by_alpha", []):
        lines.append(
            f"  - alpha {r['alpha']:+.2f}: format errors {fmt(r['format_error'])} "
            f"CI {fmt_ci(r['ci'])}, pass@1 {fmt(r['pass@1'])}"
        )
    if e.get("why"):
        lines.append(f"- {e['why']}")
    for seed, sub in (e.get("seeds") or {}).items():
        lines += [
            "",
            f"### seed {seed} (07's grid between that seed's endpoints): **{verdict(sub)}**",
            "",
        ]
        lines += side_lines(sub)
        if sub.get("why"):
            lines.append(f"- {sub['why']}")
    if "replicated" in e:
        lines.append(f"- replicated on every seed: {e['replicated']}")
    t = rep["claims"].get("tool_use")
    if t:
        lines += ["", f"## (d) {t['claim']}: **{verdict(t)}**", ""]
        for s, v in t.get("settings", {}).items():
            calls, errs, share = v["tool_calls"], v["tool_errors"], v["with_tool_call"]
            lines.append(
                f"- {s}: {v['n_rollouts']} rollouts; tool calls per rollout {fmt(calls['mean'])} "
                f"CI {fmt_ci(calls['ci'])}, tool errors per rollout {fmt(errs['mean'])} "
                f"CI {fmt_ci(errs['ci'])}; rollouts with a tool call {fmt(share['share'])} "
                f"CI {fmt_ci(share['ci'])}"
            )
            ran = v.get("tool_calls_ran")
            if ran:
                lines.append(
                    f"  - calls that ran (parsed, a known tool, no tool error) per rollout "
                    f"{fmt(ran['mean'])} CI {fmt_ci(ran['ci'])}; rollouts with one "
                    f"{fmt(v['with_tool_call_ran']['share'])} "
                    f"CI {fmt_ci(v['with_tool_call_ran']['ci'])}"
                )
            for r in v["runs"]:
                lines.append(f"  - run {r['run']}: pass@1 {fmt(r['pass@1'])}")
            for r in v["alphas"]:
                lines.append(
                    f"  - alpha {r['alpha']:+.2f}: pass@1 {fmt(r['pass@1'])}, "
                    f"format errors {fmt(r['format_error'])}"
                )
        if t.get("why"):
            lines.append(f"- {t['why']}")
    return "\n".join(lines) + "\n"


def write_report(run_dir, out_dir=None) -> dict:
    """build_report(run_dir) written to out_dir (default run_dir/99_paper_figures) as
    laptop_report.json and laptop_report.md; returns the report."""
    rep = build_report(run_dir)
    out = Path(out_dir) if out_dir else Path(run_dir) / FIGURES
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "laptop_report.json", rep)
    tmp = out / ".laptop_report.md.tmp"
    tmp.write_text(report_markdown(rep))
    tmp.replace(out / "laptop_report.md")
    return rep
