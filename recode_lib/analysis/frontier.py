"""The correctness-efficiency frontier along the weight-averaging axis, from per-sample records.

    samples = load_alpha_samples(RUN / "07_weight_averaging" / "eval")   # {alpha: [records]}
    rows = frontier_table(samples)          # one row per alpha, sorted by alpha
    turn = turnover_table(samples)          # solved-set turnover between neighbouring alphas
    fmt = format_error_rise(rows, threshold=2.0)
    write_frontier(RUN / "07_weight_averaging", samples)   # frontier.json + frontier.csv
    write_sweep_frontier(RUN / "06_strictness_sweep", summaries, strictness={"k1": 1, ...})

Input: the evaluation harness's per-sample jsonl records (recode_lib.evaluation.codegen, samples.jsonl)
with at least problem_id, sample, outcome (and status, n_tokens when present), one file per
alpha. Per alpha: the four outcome-class rates (correct / optimization_failure /
correctness_failure / format_error, fractions of samples), pass@1 (unbiased, mean over
problems), the solve rate (fraction of problems with at least one correct sample), mean tokens,
and the solved set; between neighbouring alphas: turnover of the solved sets
(recode_lib.metrics.turnover); the format-error rate for |alpha| beyond a threshold vs inside.
Optionally restricted to a subset of problems (e.g. the hard ones). The strictness sweep's
frontier (`write_sweep_frontier`: one row per run with its k, pass@1, the four outcome-class
rates, tokens, from evaluation summaries) goes through the same writer, `save_frontier`.
Records with a missing field or an unknown outcome raise naming the file and record. Every
alpha must cover the same problems (a partial evaluation raises rather than biasing a rate).
It does not evaluate, merge or plot (recode_lib.evaluation, recode_lib.weights.merge,
recode_lib.analysis.plots do).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Iterable, Mapping

from recode_lib.jsonl import read_jsonl, write_csv_atomic, write_json_atomic
from recode_lib.evaluation.summary import summary_table
from recode_lib.sandbox.result import OUTCOMES
from recode_lib.metrics import counts_from_records, pass_at_k, solved_sets, turnover

REQUIRED = ("problem_id", "sample", "outcome")
_ALPHA_DIR = re.compile(r"^alpha_(-?[0-9.]+(?:e-?[0-9]+)?)$")


class FrontierError(ValueError):
    """Per-sample records that cannot be summarised; names the file/alpha and record."""


def check_records(records: list[Mapping], where: str) -> list[Mapping]:
    for i, r in enumerate(records):
        for f in REQUIRED:
            if f not in r:
                raise FrontierError(f"{where}: record {i} ({r.get('id', '?')!r}) has no {f!r}")
        if r["outcome"] not in OUTCOMES:
            raise FrontierError(f"{where}: record {i} ({r.get('id', '?')!r}) has unknown "
                                f"outcome {r['outcome']!r}; expected one of {OUTCOMES}")
    if not records:
        raise FrontierError(f"{where}: no records")
    return records


def load_alpha_samples(root: str | Path, filename: str = "samples.jsonl"
                       ) -> dict[float, list[dict]]:
    """{alpha: records} from root/alpha_<A>/<filename> (the layout notebook 07 writes)."""
    root = Path(root)
    out = {}
    for d in sorted(root.iterdir()) if root.is_dir() else []:
        m = _ALPHA_DIR.match(d.name)
        if m and (d / filename).is_file():
            out[float(m.group(1))] = check_records(read_jsonl(d / filename), str(d / filename))
    if not out:
        raise FrontierError(f"{root}: no alpha_<A>/{filename} files")
    return dict(sorted(out.items()))


def _select(records, problems: set | None):
    return [r for r in records if problems is None or r["problem_id"] in problems]


def alpha_row(alpha: float, records: list[Mapping]) -> dict:
    """Rates, pass@1, solve rate and tokens of one alpha's records."""
    n = len(records)
    counts = counts_from_records(records)
    row = {"alpha": float(alpha), "n_samples": n, "n_problems": len(counts)}
    for o in OUTCOMES:
        row[o] = sum(r["outcome"] == o for r in records) / n
    row["pass@1"] = sum(pass_at_k(nn, c, 1) for nn, c in counts.values()) / len(counts)
    row["solve_rate"] = sum(c > 0 for _, c in counts.values()) / len(counts)
    toks = [r["n_tokens"] for r in records if isinstance(r.get("n_tokens"), (int, float))]
    row["mean_tokens"] = sum(toks) / len(toks) if toks else math.nan
    failures = n - sum(r["outcome"] == "correct" for r in records)
    row["opt_share_of_failures"] = (sum(r["outcome"] == "optimization_failure"
                                        for r in records) / failures) if failures else math.nan
    return row


def _checked(samples: Mapping[float, list[Mapping]], problems) -> dict[float, list[Mapping]]:
    if not samples:
        raise FrontierError("no alphas")
    sel = {float(a): check_records(_select(recs, problems), f"alpha {a}")
           for a, recs in samples.items()}
    ref_a = min(sel)
    ref = {r["problem_id"] for r in sel[ref_a]}
    for a, recs in sel.items():
        got = {r["problem_id"] for r in recs}
        if got != ref:
            diff = sorted(got ^ ref)[:5]
            raise FrontierError(f"alpha {a} covers different problems than alpha {ref_a}: "
                                f"{diff} (evaluate every alpha on the same problems)")
    return dict(sorted(sel.items()))


def frontier_table(samples: Mapping[float, list[Mapping]], problems: Iterable[str] | None = None
                   ) -> list[dict]:
    """One row per alpha (sorted): outcome rates, pass@1, solve_rate, mean_tokens, n_solved."""
    sel = _checked(samples, set(problems) if problems is not None else None)
    sets = per_alpha_solved(sel)
    rows = []
    for a, recs in sel.items():
        rows.append(alpha_row(a, recs) | {"n_solved": len(sets[a])})
    return rows


def per_alpha_solved(samples: Mapping[float, list[Mapping]]) -> dict[float, set[str]]:
    """{alpha: problems with at least one correct sample}."""
    s = solved_sets({a: counts_from_records(recs) for a, recs in samples.items()})
    return {float(a): v for a, v in s.items()}


def turnover_table(samples: Mapping[float, list[Mapping]], problems: Iterable[str] | None = None
                   ) -> list[dict]:
    """Turnover of solved sets between neighbouring alphas (sorted), plus the union size."""
    sel = _checked(samples, set(problems) if problems is not None else None)
    sets = per_alpha_solved(sel)
    alphas = sorted(sets)
    return [{"alpha_a": a, "alpha_b": b, **turnover(sets[a], sets[b])}
            for a, b in zip(alphas, alphas[1:])]


def format_error_rise(rows: list[Mapping], threshold: float = 2.0) -> dict:
    """Mean format-error rate for |alpha| > threshold vs |alpha| <= threshold (None if empty)."""
    def mean(xs):
        xs = list(xs)
        return sum(xs) / len(xs) if xs else None
    inside = [r["format_error"] for r in rows if abs(r["alpha"]) <= threshold]
    outside = [r["format_error"] for r in rows if abs(r["alpha"]) > threshold]
    return {"threshold": threshold, "inside": mean(inside), "outside": mean(outside),
            "n_inside": len(inside), "n_outside": len(outside)}


def write_frontier(out_dir: str | Path, samples: Mapping[float, list[Mapping]], *,
                   problems: Iterable[str] | None = None, threshold: float = 2.0,
                   extra: dict | None = None) -> dict:
    """Write out_dir/frontier.json (rows, turnover, solved sets, format-error rise) and
    out_dir/frontier.csv (the rows); returns the json payload."""
    out_dir = Path(out_dir)
    problems = list(problems) if problems is not None else None
    rows = frontier_table(samples, problems)
    sel = _checked(samples, set(problems) if problems is not None else None)
    payload = {"rows": rows, "turnover": turnover_table(samples, problems),
               "solved": {repr(a): sorted(s) for a, s in per_alpha_solved(sel).items()},
               "format_error_rise": format_error_rise(rows, threshold),
               "problems": problems, **(extra or {})}
    return save_frontier(out_dir, payload)


def write_sweep_frontier(out_dir, summaries: dict, strictness: dict, extra: dict | None = None) -> dict:
    """summaries: run name -> recode_lib.evaluation.codegen summary; strictness: run name -> k
    (an int, or "inf"). Writes out_dir/frontier.json and frontier.csv; returns the payload."""
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
    return save_frontier(out_dir, {"rows": rows, **(extra or {})})


def save_frontier(out_dir: str | Path, payload: dict) -> dict:
    """The one frontier writer: out_dir/frontier.json (the payload) and out_dir/frontier.csv
    (its rows), both atomic; returns the payload."""
    out_dir = Path(out_dir)
    write_json_atomic(out_dir / "frontier.json", payload)
    write_csv_atomic(out_dir / "frontier.csv", payload["rows"])
    return payload
