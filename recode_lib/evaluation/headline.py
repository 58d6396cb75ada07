"""ReCode's headline table: pass@1 and response tokens per policy and benchmark, the per-benchmark
average, the relative gains over the start model and over outcome-only GRPO with paired
bootstrap intervals, the seed spread, greedy pass@1 beside sampled pass@1, the token change.

    results = evaluate_policies({"start": MODEL, "gated_seed0": ..., ...}, ["humaneval", ...],
                                spec, out_dirs, options=headline_options("2024-10-01", benchmarks),
                                greedy=True)                  # + per-problem pass@1, greedy
    table = headline_table(results, groups={"start": ["start"], "gated": ["gated_seed0", ...]})
    files = write_headline(table, RUN / "05_codegen_eval")     # headline.json + headline.csv

The table itself does no evaluation and no plotting (recode_lib.analysis.plots.fig_headline
draws it).
More: docs/modules/evaluation.md (recode_lib.evaluation.headline).
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path

from recode_lib.core.jsonl import read_json, write_json_atomic
from recode_lib.core.run_files import GRPO, HEADLINE_FILE, TRANSFER, policy_dir, step_dir
from recode_lib.data import load_benchmark
from recode_lib.evaluation.gains import (
    mean_values,
    paired_relative_gain,
    per_problem_pass1,
    seed_std,
)
from recode_lib.evaluation.spec import call_samples
from recode_lib.generation import get_generator
from recode_lib.metrics import bootstrap_ci
from recode_lib.training.launch import TRANSFER_BASELINE

__all__ = [
    "BASELINE",
    "START",
    "TRANSFER",
    "TRANSFER_BASELINE",
    "TRANSFER_START",
    "PAPER",
    "headline_table",
    "headline_rows",
    "write_headline",
    "relative_change",
    "policy_models",
    "policy_groups",
    "transfer_policies",
    "evaluate_policies",
    "headline_options",
    "greedy_spec",
    "gain_rows",
]

BASELINE = "outcome_only"
START = "start"
TRANSFER_START = "transfer_start"  # the transfer policy's start model (TRANSFER: trained)
GREEDY_DIR = "greedy"  # <policy folder>/greedy/<benchmark>: the greedy evaluation
# ReCode's figures (Qwen2.5-Coder-7B-Instruct, average over HumanEval(+), MBPP(+), LiveCodeBench,
# BigCodeBench): "50.4% -> 58.5% (+16.1% relative)", "+6.7% over outcome-only GRPO"
PAPER = {
    "start_average": 0.504,
    "gated_average": 0.585,
    "relative_gain_over_start": 0.161,
    "relative_gain_over_outcome_only": 0.067,
    "token_change_vs_outcome_only": -0.234,
}


def relative_change(value: float | None, reference: float | None) -> float | None:
    """(value - reference) / reference; None when either is None or the reference is 0."""
    if value is None or reference is None or reference == 0:
        return None
    return (value - reference) / reference


def _groups(summaries: Mapping, groups: Mapping | None) -> dict[str, list[str]]:
    """{policy: runs}: the given groups, then every run no group names as its own policy, in
    the order the runs come (a policy at its first run)."""
    groups = {p: list(r) for p, r in (groups or {}).items()}
    owner = {r: p for p, runs in groups.items() for r in runs}
    missing = sorted(set(owner) - set(summaries))
    if missing:
        raise KeyError(f"headline_table: no evaluation of run(s) {missing}")
    out: dict[str, list[str]] = {}
    for run in summaries:
        policy = owner.get(run, run)
        out.setdefault(policy, groups.get(policy, [run]))
    return out


def _cell(policy: str, b: str, runs: Sequence[Mapping]) -> dict:
    for s in runs:
        if "pass@1" not in s:
            raise KeyError(f"headline_table: {policy!r}/{b!r} summary has no 'pass@1'")
    vals = [float(s["pass@1"]) for s in runs]
    correct = [s["tokens"].get("mean_correct") for s in runs]
    correct = [c for c in correct if c is not None]
    greedy = [s.get("greedy_pass@1") for s in runs]
    cell = {
        "pass@1": statistics.fmean(vals),
        "ci": list(runs[0].get("pass@1_ci") or [None, None]) if len(runs) == 1 else [None, None],
        "mean_tokens": statistics.fmean(s["tokens"]["mean"] for s in runs),
        "mean_tokens_correct": statistics.fmean(correct) if correct else None,
        "n_problems": runs[0].get("n_problems"),
        "n_samples": runs[0].get("n_samples"),
        "n_seeds": len(runs),
        "seed_std": seed_std(vals),
        "per_seed": vals if len(runs) > 1 else None,
        "greedy_pass@1": (statistics.fmean(greedy) if all(g is not None for g in greedy) else None),
    }
    return cell


def _per_problem(policy: str, b: str, runs: Sequence[Mapping]) -> dict[str, float] | None:
    if not all("per_problem" in s for s in runs):
        return None
    return mean_values([s["per_problem"] for s in runs], f"{policy!r}/{b!r}")


def _gain(
    policy: str, reference: str, summary: Mapping, per_problem: Mapping, n_boot: int, seed: int
) -> dict:
    """The relative gain of policy's average pass@1 over reference's: value, paired bootstrap
    ci over problems, the per-seed gains and their spread, the greedy gain."""
    s, r = summary[policy], summary[reference]
    per_p, per_r = s["per_seed_average"], r["per_seed_average"]
    if len(per_p) == len(per_r):
        per_seed = [relative_change(a, b) for a, b in zip(per_p, per_r, strict=True)]
    elif len(per_r) == 1:
        per_seed = [relative_change(a, per_r[0]) for a in per_p]
    elif len(per_p) == 1:
        per_seed = [relative_change(per_p[0], b) for b in per_r]
    else:
        per_seed = []
    out = {
        "reference": reference,
        "value": relative_change(s["average_pass@1"], r["average_pass@1"]),
        "ci": None,
        "n_problems": None,
        "seed_std": seed_std(per_seed) if len(per_seed) > 1 else None,
        "per_seed": per_seed if len(per_seed) > 1 else None,
        "greedy_value": relative_change(
            s.get("greedy_average_pass@1"), r.get("greedy_average_pass@1")
        ),
    }
    if per_problem.get(policy) is not None and per_problem.get(reference) is not None:
        g = paired_relative_gain(
            per_problem[policy], per_problem[reference], n_boot=n_boot, seed=seed
        )
        out["ci"], out["n_problems"] = g["ci"], g["n_problems"]
    return out


def headline_table(
    summaries: Mapping[str, Mapping[str, Mapping]],
    benchmarks: Sequence[str] | None = None,
    baseline: str = BASELINE,
    *,
    groups: Mapping[str, Sequence[str]] | None = None,
    start: str = START,
    n_boot: int = 2000,
    seed: int = 0,
    comparisons: Sequence[str] = (),
    not_run: Mapping[str, str] | None = None,
) -> dict:
    """{"benchmarks", "policies", "baseline", "table": {policy: {benchmark: {"pass@1", "ci",
    "seed_std", "per_seed", "n_seeds", "greedy_pass@1", "mean_tokens", "mean_tokens_correct",
    "n_problems", "n_samples"}}}, "summary": {policy: {"average_pass@1", "average_seed_std",
    "per_seed_average", "greedy_average_pass@1", "mean_tokens", "gain_vs_baseline",
    "gain_vs_baseline_seed_std", "token_change_vs_baseline"}}, "relative_gain_over_start",
    "relative_gain_over_outcome_only": {policy: {"reference", "value", "ci", "seed_std",
    "per_seed", "greedy_value", "n_problems"}}}. `summaries` maps each run to its
    {benchmark: summary}; `groups` maps a policy to its runs (seeds; default: a run is a
    policy). A cell's ci is the summary's own with one run, else a bootstrap over problems of
    the seed-averaged per-problem pass@1 (when the summaries carry "per_problem").
    `comparisons`: policies that are reference rows, not trained ones (an API model,
    recode_lib.evaluation.api_model): in the table and the summary (gain_vs_baseline too, as the
    paper's table compares every row), but with no relative_gain_* entry of their own.
    `not_run`: {policy: reason} of comparison rows that were not evaluated (e.g. "not run:
    OPENAI_API_KEY unset"), kept as "not_run" (headline_rows gives each a row with its status)."""
    if not summaries:
        raise ValueError("headline_table: no policies")
    benchmarks = (
        list(benchmarks) if benchmarks is not None else list(next(iter(summaries.values())))
    )
    if not benchmarks:
        raise ValueError("headline_table: no benchmarks")
    groups = _groups(summaries, groups)
    table: dict = {}
    per_problem: dict = {}
    for policy, runs in groups.items():
        for run in runs:
            missing = [b for b in benchmarks if b not in summaries[run]]
            if missing:
                raise KeyError(
                    f"headline_table: policy {policy!r} has no evaluation of "
                    f"benchmark(s) {missing} (has {sorted(summaries[run])})"
                )
        table[policy] = {b: _cell(policy, b, [summaries[r][b] for r in runs]) for b in benchmarks}
        pp = {b: _per_problem(policy, b, [summaries[r][b] for r in runs]) for b in benchmarks}
        per_problem[policy] = None if any(v is None for v in pp.values()) else pp
        if len(runs) > 1 and per_problem[policy] is not None:
            for b in benchmarks:
                _, lo, hi = bootstrap_ci(list(pp[b].values()), n_boot=n_boot, seed=seed)
                table[policy][b]["ci"] = [lo, hi]
    summary: dict = {}
    for policy, per in table.items():
        runs = groups[policy]
        per_seed = [
            statistics.fmean(float(summaries[r][b]["pass@1"]) for b in benchmarks) for r in runs
        ]
        greedy = [per[b]["greedy_pass@1"] for b in benchmarks]
        summary[policy] = {
            "average_pass@1": statistics.fmean(per[b]["pass@1"] for b in benchmarks),
            "n_seeds": len(runs),
            "per_seed_average": per_seed,
            "average_seed_std": seed_std(per_seed),
            "greedy_average_pass@1": (
                statistics.fmean(greedy) if all(g is not None for g in greedy) else None
            ),
            "mean_tokens": statistics.fmean(per[b]["mean_tokens"] for b in benchmarks),
        }
    ref = summary.get(baseline)
    for policy, s in summary.items():
        s["gain_vs_baseline"] = relative_change(s["average_pass@1"], ref and ref["average_pass@1"])
        s["gain_vs_baseline_seed_std"] = (
            _gain(policy, baseline, summary, {}, n_boot, seed)["seed_std"] if ref else None
        )
        s["token_change_vs_baseline"] = relative_change(
            s["mean_tokens"], ref and ref["mean_tokens"]
        )
    transfer = {TRANSFER, TRANSFER_BASELINE}
    over_start, over_outcome = {}, {}
    unknown = sorted(set(comparisons) - set(table))
    if unknown:
        raise KeyError(f"headline_table: comparison row(s) {unknown} not among the policies")
    for policy in table:
        if policy in comparisons:
            continue
        own_start = TRANSFER_START if policy in transfer else start
        own_base = (
            TRANSFER_BASELINE
            if policy == TRANSFER
            else (None if policy in transfer | {TRANSFER_START} else baseline)
        )
        if own_start in table and policy != own_start and policy != TRANSFER_START:
            over_start[policy] = _gain(policy, own_start, summary, per_problem, n_boot, seed)
        if own_base in table and policy != own_base and policy not in (start, TRANSFER_START):
            over_outcome[policy] = _gain(policy, own_base, summary, per_problem, n_boot, seed)
    return {
        "benchmarks": benchmarks,
        "policies": list(table),
        "baseline": baseline,
        "groups": groups,
        "table": table,
        "summary": summary,
        "relative_gain_over_start": over_start,
        "relative_gain_over_outcome_only": over_outcome,
        "paper": PAPER,
        "comparisons": list(comparisons),
        "not_run": dict(not_run or {}),
    }


def headline_rows(headline: Mapping) -> list[dict]:
    """One flat row per policy: pass@1 (greedy too) and mean tokens per benchmark, the summary
    block (its scalars), then the two relative gains with their intervals and seed spread;
    `status` "evaluated", and one row per not-run comparison with only its status."""
    rows = []
    for policy in headline["policies"]:
        row: dict = {"policy": policy, "status": "evaluated"}
        for b in headline["benchmarks"]:
            cell = headline["table"][policy][b]
            row[f"{b}/pass@1"] = cell["pass@1"]
            row[f"{b}/ci_low"], row[f"{b}/ci_high"] = cell["ci"]
            row[f"{b}/seed_std"] = cell.get("seed_std")
            row[f"{b}/greedy_pass@1"] = cell.get("greedy_pass@1")
            row[f"{b}/mean_tokens"] = cell["mean_tokens"]
            row[f"{b}/mean_tokens_correct"] = cell["mean_tokens_correct"]
        row.update(
            {
                k: v
                for k, v in headline["summary"][policy].items()
                if not isinstance(v, (list, dict))
            }
        )
        for key in ("relative_gain_over_start", "relative_gain_over_outcome_only"):
            g = (headline.get(key) or {}).get(policy) or {}
            ci = g.get("ci") or [None, None]
            row.update(
                {
                    key: g.get("value"),
                    f"{key}/ci_low": ci[0],
                    f"{key}/ci_high": ci[1],
                    f"{key}/seed_std": g.get("seed_std"),
                }
            )
        rows.append(row)
    for policy, reason in (headline.get("not_run") or {}).items():
        rows.append({"policy": policy, "status": reason})
    return rows


def gain_rows(headline: Mapping) -> list[dict]:
    """One row per (policy, reference) of the two relative gains: policy, over ("start" |
    "outcome_only"), reference, gain, ci_low, ci_high, seed_std, greedy_gain, paper (ReCode's
    figure for the gated policy)."""
    rows = []
    for key, over in (
        ("relative_gain_over_start", "start"),
        ("relative_gain_over_outcome_only", "outcome_only"),
    ):
        for policy, g in (headline.get(key) or {}).items():
            ci = g.get("ci") or [None, None]
            rows.append(
                {
                    "policy": policy,
                    "over": over,
                    "reference": g["reference"],
                    "gain": g["value"],
                    "ci_low": ci[0],
                    "ci_high": ci[1],
                    "seed_std": g["seed_std"],
                    "greedy_gain": g["greedy_value"],
                    "paper": PAPER[key] if policy == "gated" else None,
                }
            )
    return rows


def write_headline(
    headline: Mapping, out_dir, extra: Mapping | None = None, name: str = "headline"
) -> list[Path]:
    """<out_dir>/<name>.json (the table plus `extra` keys) and <name>.csv (headline_rows)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    js, cs = out / f"{name}.json", out / f"{name}.csv"
    write_json_atomic(js, {**(extra or {}), **headline})
    rows = headline_rows(headline)
    with open(cs, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), restval="")
        w.writeheader()
        w.writerows(rows)
    return [js, cs]


def policy_models(run_dir, variants: Sequence[str] | str) -> dict[str, str]:
    """{run: "<run_dir>/04_cg_grpo/<run>/final"} for each notebook-04 run (a variant, or one
    seed's run of it; a comma-separated string or a list; empty: none). A run without a
    finished final folder raises FileNotFoundError naming the path."""
    if isinstance(variants, str):
        variants = [v.strip() for v in variants.split(",") if v.strip()]
    out = {}
    for v in variants:
        final = policy_dir(run_dir, v)
        if not final.is_dir():
            raise FileNotFoundError(
                f"policy {v!r}: no trained checkpoint at {final} "
                "(run 04 first, with this variant in its VARIANTS)"
            )
        out[v] = str(final)
    return out


def grpo_record(run_dir) -> dict:
    """Notebook 04's headline.json ({} when 04 has not run)."""
    path = step_dir(run_dir, GRPO) / HEADLINE_FILE
    return read_json(path) if path.is_file() else {}


def policy_groups(run_dir, policies: Sequence[str] | str) -> dict[str, list[str]]:
    """{policy: its runs}: for a variant notebook 04 trained with several seeds, the runs its
    headline.json records under "seed_runs" ({variant: {seed: run}}, in seed order); any other
    policy is its own single run."""
    if isinstance(policies, str):
        policies = [v.strip() for v in policies.split(",") if v.strip()]
    recorded = grpo_record(run_dir).get("seed_runs") or {}
    return {p: list((recorded.get(p) or {p: p}).values()) for p in policies}


def transfer_policies(run_dir, enabled: bool = True) -> tuple[dict[str, str], dict]:
    """({"transfer_start": its start model, "transfer": ".../04_cg_grpo/transfer/final",
    "transfer_outcome_only": ...}, 04's "transfer" record with "policies" added) for notebook
    04's cross-model RM transfer runs (the gated one and, when 04 trained it, the same model
    with the outcome-only reward; with several seeds, one entry per seed's run, grouped by
    policy_groups); ({}, {}) when not enabled. FileNotFoundError naming the file when 04 has
    not run or ran without one."""
    if not enabled:
        return {}, {}
    path = step_dir(run_dir, GRPO) / HEADLINE_FILE
    record = grpo_record(run_dir).get("transfer")
    if not record:
        raise FileNotFoundError(
            f"{path}: no cross-model RM transfer run recorded (run 04 with "
            "TRANSFER_MODEL set, or evaluate without the transfer)"
        )
    trained = [TRANSFER] + ([TRANSFER_BASELINE] if record.get("baseline_reward") else [])
    groups = policy_groups(run_dir, trained)
    models = {TRANSFER_START: str(record["model"])}
    models |= policy_models(run_dir, [r for p in trained for r in groups[p]])
    return models, {**dict(record), "policies": [TRANSFER_START] + trained}


def headline_options(
    lcb_start_date: str = "", benchmarks: Sequence[str] | None = None
) -> dict[str, dict]:
    """Loader options per benchmark for the headline evaluation: {"livecodebench":
    {"start_date": lcb_start_date}} (problems released on or after it), {} when the date is
    empty or livecodebench is not among `benchmarks` (None: any)."""
    if not lcb_start_date or (benchmarks is not None and "livecodebench" not in benchmarks):
        return {}
    return {"livecodebench": {"start_date": str(lcb_start_date)}}


def greedy_spec(spec):
    """The spec's greedy twin (temperature 0, top_p 1, one sample, pass@1), or the spec itself
    when it already samples greedily once per problem."""
    if float(spec.temperature) == 0.0 and int(spec.n) == 1:
        return spec
    return spec.replace(temperature=0.0, top_p=1.0, n=1, k=(1,))


def evaluate_one(spec, model, problems, out_dir, benchmark: str, generator) -> dict:
    """spec.evaluate with a loaded generator, plus "per_problem": {problem id: pass@1} over
    exactly these problems and spec.n samples."""
    s = spec.evaluate(model, problems, out_dir, benchmark=benchmark, generator=generator)
    return {**s, "per_problem": per_problem_pass1(call_samples(out_dir, problems, spec.n))}


def evaluate_policies(
    policies: Mapping[str, object],
    benchmarks: Sequence[str],
    spec,
    out_dirs: Mapping[str, object],
    *,
    limit: int | None = None,
    options: Mapping[str, Mapping] | None = None,
    greedy: bool = False,
    log=print,
) -> dict[str, dict[str, dict]]:
    """{policy: {benchmark: summary + "per_problem"}}: each policy (model name or folder)
    evaluated on every benchmark (its first `limit` problems, loaded with options[benchmark],
    e.g. headline_options) with the same EvalSpec into out_dirs[policy]/<benchmark>, one
    generator per policy (resumable: finished samples are reused). With greedy=True each
    summary also gets "greedy_pass@1" / "greedy_pass@1_ci" / "greedy_per_problem": the same
    model decoded greedily (greedy_spec) into out_dirs[policy]/greedy/<benchmark> (no second
    evaluation when the spec is greedy already)."""
    missing = [p for p in policies if p not in out_dirs]
    if missing:
        raise KeyError(f"evaluate_policies: no output folder for policy(ies) {missing}")
    options = dict(options or {})
    unknown = sorted(set(options) - set(benchmarks))
    if unknown:
        raise ValueError(
            f"evaluate_policies: options for benchmark(s) {unknown} not evaluated "
            f"({list(benchmarks)})"
        )
    problems: dict[str, list] = {}
    g_spec = greedy_spec(spec) if greedy else None
    out = {}
    for name, model in policies.items():
        if log:
            log(f"policy {name}: {model}")
        generator = get_generator(spec.backend, str(model), **spec.generator_kwargs())
        per = out[name] = {}
        try:
            for b in benchmarks:
                if b not in problems:
                    problems[b] = load_benchmark(
                        b, limit=limit or None, **dict(options.get(b) or {})
                    )
                folder = Path(out_dirs[name])
                s = per[b] = evaluate_one(spec, model, problems[b], folder / b, b, generator)
                if g_spec is not None:
                    g = (
                        s
                        if g_spec is spec
                        else evaluate_one(
                            g_spec, model, problems[b], folder / GREEDY_DIR / b, b, generator
                        )
                    )
                    per[b] = {
                        **s,
                        "greedy_pass@1": g["pass@1"],
                        "greedy_pass@1_ci": g["pass@1_ci"],
                        "greedy_per_problem": g["per_problem"],
                    }
                if log:
                    log(
                        f"{name}/{b}: {s['n_problems']} problems, pass@1 {s['pass@1']:.3f}"
                        + (f", greedy {per[b]['greedy_pass@1']:.3f}" if g_spec is not None else "")
                    )
        finally:
            close = getattr(generator, "close", None)
            if close:
                close()
    return out
