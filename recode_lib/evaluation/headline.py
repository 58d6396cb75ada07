"""ReCode's headline table: pass@1 and response tokens per policy and benchmark, the per-benchmark
average, the relative gain over outcome-only GRPO and the token change.

    table = headline_table({"start": {"humaneval": s, ...}, "outcome_only": {...}, "gated": {...}})
    files = write_headline(table, RUN / "05_codegen_eval")     # headline.json + headline.csv

Each summary is one `recode_lib.evaluation.summary.summarize` result (keys "pass@1",
"pass@1_ci", "tokens" {"mean", "mean_correct"}). The paper's table (ReCode): "average pass@1
50.4 → 58.5", "+6.7% over outcome-only GRPO" and "−23.4% tokens" — i.e. per policy

    average    = mean over benchmarks of pass@1
    gain       = (average - average_outcome_only) / average_outcome_only
    token_change = (mean_tokens - mean_tokens_outcome_only) / mean_tokens_outcome_only

where mean_tokens is the mean over benchmarks of the mean response length (all responses).
Every policy must have every benchmark (a missing one raises naming policy and benchmark);
without an outcome-only policy (or with its average 0) the gain and token change are None.
`policy_models(run, "outcome_only,gated")` maps each notebook-04 variant to its trained folder
(runs/<profile>/04_cg_grpo/<variant>/final; a missing one raises naming the path and "run 04
first"); `evaluate_policies` evaluates several policies on several benchmarks with one EvalSpec
(recode_lib.evaluation.spec.evaluate_benchmarks per policy). `transfer_policies(run)` adds
notebook 04's cross-model RM transfer (ReCode: another policy, Qwen3-4B-Instruct in the paper
profile, trained with the RM trained on the first policy's pairs) as two rows: "transfer" (its
trained policy) and "transfer_start" (that policy's start model), read from 04's headline.json
(its "transfer" record: model, final, rm_path, rm_policy). Their gain_vs_baseline compares with
the first policy's outcome-only run like every row; compare "transfer" with "transfer_start"
for the transfer's own gain. The table itself does no evaluation and no plotting
(recode_lib.analysis.plots.fig_headline draws it).
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path
from typing import Mapping, Sequence

from recode_lib.evaluation.spec import evaluate_benchmarks
from recode_lib.jsonl import read_json, write_json_atomic
from recode_lib.run_files import TRANSFER

__all__ = ["BASELINE", "TRANSFER", "TRANSFER_START", "headline_table", "headline_rows",
           "write_headline", "relative_change", "policy_models", "transfer_policies",
           "evaluate_policies"]

BASELINE = "outcome_only"
TRANSFER_START = "transfer_start"   # the transfer policy's start model (TRANSFER: trained)


def relative_change(value: float | None, reference: float | None) -> float | None:
    """(value - reference) / reference; None when either is None or the reference is 0."""
    if value is None or reference is None or reference == 0:
        return None
    return (value - reference) / reference


def headline_table(summaries: Mapping[str, Mapping[str, Mapping]],
                   benchmarks: Sequence[str] | None = None, baseline: str = BASELINE) -> dict:
    """{"benchmarks", "policies", "baseline", "table": {policy: {benchmark: {"pass@1", "ci",
    "mean_tokens", "mean_tokens_correct", "n_problems", "n_samples"}}}, "summary": {policy:
    {"average_pass@1", "mean_tokens", "gain_vs_baseline", "token_change_vs_baseline"}}}."""
    if not summaries:
        raise ValueError("headline_table: no policies")
    benchmarks = list(benchmarks) if benchmarks is not None else list(next(iter(summaries.values())))
    if not benchmarks:
        raise ValueError("headline_table: no benchmarks")
    table: dict = {}
    for policy, per in summaries.items():
        missing = [b for b in benchmarks if b not in per]
        if missing:
            raise KeyError(f"headline_table: policy {policy!r} has no evaluation of benchmark(s) "
                           f"{missing} (has {sorted(per)})")
        table[policy] = {}
        for b in benchmarks:
            s = per[b]
            if "pass@1" not in s:
                raise KeyError(f"headline_table: {policy!r}/{b!r} summary has no 'pass@1'")
            table[policy][b] = {"pass@1": float(s["pass@1"]),
                                "ci": list(s.get("pass@1_ci") or [None, None]),
                                "mean_tokens": s["tokens"]["mean"],
                                "mean_tokens_correct": s["tokens"].get("mean_correct"),
                                "n_problems": s.get("n_problems"), "n_samples": s.get("n_samples")}
    summary: dict = {}
    for policy, per in table.items():
        summary[policy] = {"average_pass@1": statistics.fmean(per[b]["pass@1"] for b in benchmarks),
                           "mean_tokens": statistics.fmean(per[b]["mean_tokens"] for b in benchmarks)}
    ref = summary.get(baseline)
    for s in summary.values():
        s["gain_vs_baseline"] = relative_change(s["average_pass@1"], ref and ref["average_pass@1"])
        s["token_change_vs_baseline"] = relative_change(s["mean_tokens"], ref and ref["mean_tokens"])
    return {"benchmarks": benchmarks, "policies": list(table), "baseline": baseline,
            "table": table, "summary": summary}


def headline_rows(headline: Mapping) -> list[dict]:
    """One flat row per policy: pass@1 and mean tokens per benchmark, then the summary block."""
    rows = []
    for policy in headline["policies"]:
        row: dict = {"policy": policy}
        for b in headline["benchmarks"]:
            cell = headline["table"][policy][b]
            row[f"{b}/pass@1"] = cell["pass@1"]
            row[f"{b}/ci_low"], row[f"{b}/ci_high"] = cell["ci"]
            row[f"{b}/mean_tokens"] = cell["mean_tokens"]
            row[f"{b}/mean_tokens_correct"] = cell["mean_tokens_correct"]
        row.update(headline["summary"][policy])
        rows.append(row)
    return rows


def write_headline(headline: Mapping, out_dir, extra: Mapping | None = None,
                   name: str = "headline") -> list[Path]:
    """<out_dir>/<name>.json (the table plus `extra` keys) and <name>.csv (headline_rows)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    js, cs = out / f"{name}.json", out / f"{name}.csv"
    write_json_atomic(js, {**(extra or {}), **headline})
    rows = headline_rows(headline)
    with open(cs, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return [js, cs]


def policy_models(run_dir, variants: Sequence[str] | str) -> dict[str, str]:
    """{variant: "<run_dir>/04_cg_grpo/<variant>/final"} for each notebook-04 variant (a comma-
    separated string or a list; empty: none). A variant without a finished final folder raises
    FileNotFoundError naming the path."""
    if isinstance(variants, str):
        variants = [v.strip() for v in variants.split(",") if v.strip()]
    out = {}
    for v in variants:
        final = Path(run_dir) / "04_cg_grpo" / v / "final"
        if not final.is_dir():
            raise FileNotFoundError(f"policy {v!r}: no trained checkpoint at {final} "
                                    "(run 04 first, with this variant in its VARIANTS)")
        out[v] = str(final)
    return out


def transfer_policies(run_dir, enabled: bool = True) -> tuple[dict[str, str], dict]:
    """({"transfer_start": its start model, "transfer": "<run_dir>/04_cg_grpo/transfer/final"},
    04's "transfer" record) for notebook 04's cross-model RM transfer run; ({}, {}) when not
    enabled. FileNotFoundError naming the file when 04 has not run or ran without one."""
    if not enabled:
        return {}, {}
    path = Path(run_dir) / "04_cg_grpo" / "headline.json"
    record = read_json(path).get("transfer") if path.is_file() else None
    if not record:
        raise FileNotFoundError(f"{path}: no cross-model RM transfer run recorded (run 04 with "
                                "TRANSFER_MODEL set, or evaluate without the transfer)")
    final = policy_models(run_dir, [TRANSFER])[TRANSFER]
    return {TRANSFER_START: str(record["model"]), TRANSFER: final}, dict(record)


def evaluate_policies(policies: Mapping[str, object], benchmarks: Sequence[str], spec,
                      out_dirs: Mapping[str, object], *, limit: int | None = None,
                      log=print) -> dict[str, dict[str, dict]]:
    """{policy: {benchmark: summary}}: each policy (model name or folder) evaluated on every
    benchmark with the same EvalSpec into out_dirs[policy]/<benchmark> (resumable: finished
    samples are reused)."""
    missing = [p for p in policies if p not in out_dirs]
    if missing:
        raise KeyError(f"evaluate_policies: no output folder for policy(ies) {missing}")
    out = {}
    for name, model in policies.items():
        if log:
            log(f"policy {name}: {model}")
        out[name] = evaluate_benchmarks(model, benchmarks, spec, out_dirs[name], limit=limit, log=log)
    return out
