"""The correctness-efficiency frontier along the weight-averaging axis, from per-sample records.

    samples = load_alpha_samples(RUN / "07_weight_averaging" / "eval",
                                 problems=[p.id for p in problems], n=spec.n)   # {alpha: [records]}
    rows = frontier_table(samples)          # one row per alpha, sorted by alpha
    turn = turnover_table(samples)          # solved-set turnover between neighbouring alphas
    fmt = format_error_rise(rows, threshold=2.0)
    write_frontier(RUN / "07_weight_averaging", samples)   # frontier.json + frontier.csv
    write_sweep_frontier(RUN / "06_strictness_sweep", summaries, strictness={"k1": 1, ...})
    check_overlay({"07": front_payload, "06": sweep_payload})   # raises when sampled differently

It does not evaluate, merge or plot (recode_lib.evaluation, recode_lib.weights.merge,
recode_lib.analysis.plots do).
More: docs/modules/analysis.md (recode_lib.analysis.frontier).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from recode_lib.core.errors import RecodeError
from recode_lib.core.jsonl import read_jsonl, write_csv_atomic, write_json_atomic
from recode_lib.evaluation.guard import describe_problem_sets, problem_set, recorded_problem_ids
from recode_lib.evaluation.summary import summary_table
from recode_lib.metrics import bootstrap_ci, counts_from_records, pass_at_k, solved_sets, turnover
from recode_lib.sandbox.result import OUTCOMES

REQUIRED = ("problem_id", "sample", "outcome")
_ALPHA_DIR = re.compile(r"^alpha_(-?[0-9.]+(?:e-?[0-9]+)?)$")


class FrontierError(RecodeError, ValueError):
    """Per-sample records that cannot be summarised; names the file/alpha and record."""


def check_records(records: list[Mapping], where: str) -> list[Mapping]:
    for i, r in enumerate(records):
        for f in REQUIRED:
            if f not in r:
                raise FrontierError(f"{where}: record {i} ({r.get('id', '?')!r}) has no {f!r}")
        if r["outcome"] not in OUTCOMES:
            raise FrontierError(
                f"{where}: record {i} ({r.get('id', '?')!r}) has unknown "
                f"outcome {r['outcome']!r}; expected one of {OUTCOMES}"
            )
    if not records:
        raise FrontierError(f"{where}: no records")
    return records


def folder_records(
    folder: str | Path,
    filename: str = "samples.jsonl",
    *,
    problems: Iterable[str] | None = None,
    n: int | None = None,
) -> list[dict]:
    """The records of one evaluation folder, kept to the problem set its run.json records
    (recode_lib.evaluation.guard: an evaluation's folder holds one problem set; paper B's
    frontier is traced "on hard problems", so records of the easy ones evaluated into the same
    folder before the difficulty filter must never come back) and to samples
    0..n-1 when `n` is given. With `problems` (ids) the recorded set must be exactly those
    problems: a folder evaluated on another set (e.g. before the difficulty filter) raises
    FrontierError naming the folder and both sets, as does a harness folder whose run.json
    predates recorded problem sets. A folder without run.json (records written by hand) is
    kept to `problems` when given."""
    folder = Path(folder)
    path = folder / filename
    records = check_records(read_jsonl(path), str(path))
    wanted = None if problems is None else {str(p) for p in problems}
    recorded = recorded_problem_ids(folder)
    if (folder / "run.json").is_file() and recorded is None:
        raise FrontierError(
            f"{folder}: its run.json records no problem set (evaluated before "
            "problem sets were recorded); re-run its evaluation so results of "
            "another problem set cannot be mixed in"
        )
    if recorded is not None and wanted is not None and set(recorded) != wanted:
        raise FrontierError(
            f"{folder}: evaluated on another problem set than asked for: "
            f"{describe_problem_sets(recorded, wanted)}; re-run its evaluation "
            "on these problems (a notebook re-run sets the stale folder aside)"
        )
    keep = set(recorded) if recorded is not None else wanted
    out = [
        r
        for r in records
        if (keep is None or str(r["problem_id"]) in keep) and (n is None or int(r["sample"]) < n)
    ]
    return check_records(out, f"{path} (problem set{'' if n is None else f', n={n}'})")


def load_alpha_samples(
    root: str | Path,
    filename: str = "samples.jsonl",
    *,
    problems: Iterable[str] | None = None,
    n: int | None = None,
) -> dict[float, list[dict]]:
    """{alpha: records} from root/alpha_<A>/<filename> (the layout notebook 07 writes), each
    folder's records kept to its recorded problem set, to `problems` and to n samples
    (folder_records: a folder evaluated on another problem set raises)."""
    root = Path(root)
    problems = list(problems) if problems is not None else None
    out = {}
    for d in sorted(root.iterdir()) if root.is_dir() else []:
        m = _ALPHA_DIR.match(d.name)
        if m and (d / filename).is_file():
            out[float(m.group(1))] = folder_records(d, filename, problems=problems, n=n)
    if not out:
        raise FrontierError(f"{root}: no alpha_<A>/{filename} files")
    return dict(sorted(out.items()))


def load_run_samples(
    root: str | Path,
    names: Iterable[str],
    filename: str = "samples.jsonl",
    *,
    problems: Iterable[str] | None = None,
    n: int | None = None,
) -> dict[str, list[dict]]:
    """{run name: records} from root/<name>/<filename> (notebook 06's runs evaluated with the
    alpha grid's spec, recode_lib.orchestration.endpoints.sweep_runs), read as load_alpha_samples
    reads an alpha; raises FrontierError naming a run without records."""
    root = Path(root)
    problems = list(problems) if problems is not None else None
    out = {}
    for name in names:
        if not (root / name / filename).is_file():
            raise FrontierError(f"{root / name / filename}: no records for run {name!r}")
        out[str(name)] = folder_records(root / name, filename, problems=problems, n=n)
    return out


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
    row["opt_share_of_failures"] = (
        (sum(r["outcome"] == "optimization_failure" for r in records) / failures)
        if failures
        else math.nan
    )
    return row


def _checked(samples: Mapping[float, list[Mapping]]) -> dict[float, list[Mapping]]:
    if not samples:
        raise FrontierError("no alphas")
    sel = {float(a): check_records(list(recs), f"alpha {a}") for a, recs in samples.items()}
    ref_a = min(sel)
    ref = {r["problem_id"] for r in sel[ref_a]}
    for a, recs in sel.items():
        got = {r["problem_id"] for r in recs}
        if got != ref:
            diff = sorted(got ^ ref)[:5]
            raise FrontierError(
                f"alpha {a} covers different problems than alpha {ref_a}: "
                f"{diff} (evaluate every alpha on the same problems)"
            )
    return dict(sorted(sel.items()))


def frontier_table(samples: Mapping[float, list[Mapping]]) -> list[dict]:
    """One row per alpha (sorted): outcome rates, pass@1, solve_rate, mean_tokens, n_solved,
    over every record given (restrict problems when loading: load_alpha_samples)."""
    sel = _checked(samples)
    sets = per_alpha_solved(sel)
    rows = []
    for a, recs in sel.items():
        rows.append(alpha_row(a, recs) | {"n_solved": len(sets[a])})
    return rows


def per_alpha_solved(samples: Mapping[float, list[Mapping]]) -> dict[float, set[str]]:
    """{alpha: problems with at least one correct sample}."""
    s = solved_sets({a: counts_from_records(recs) for a, recs in samples.items()})
    return {float(a): v for a, v in s.items()}


def _ratio_of_sums(num: int, den: int):
    def stat(rows):
        rows = np.asarray(rows, dtype=float)
        d = rows[:, den].sum()
        return rows[:, num].sum() / d if d > 0 else 0.0

    return stat


def matched_turnover(
    counts_a: Mapping[str, tuple[int, int]],
    counts_b: Mapping[str, tuple[int, int]],
    *,
    budget: int | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict:
    """Turnover of two checkpoints' solved sets at an equal budget, against a split-half null.

    Paper B: points along the axis "solve different hard problems (flat total, high turnover)".
    Raw turnover (turnover_table's `turnover`, all samples) is high by sampling alone when
    problems are solved rarely: two IDENTICAL checkpoints at p = 0.004 per draw and n = 250
    give turnover ~0.54. Here each checkpoint gets `budget` draws (default: half the fewest
    samples, so the null below exists): per problem P_x = pass@budget, E|a ^ b| and E|a | b|
    from P_a, P_b; turnover = sum E|a ^ b| / sum E|a | b|. The null is the same statistic
    between two disjoint halves of ONE checkpoint's samples (budget draws each:
    P(only one half solves) = 2 (pass@2b - pass@b), P(either) = pass@2b), pooled over a and
    b. `excess` = turnover - null; every value with a percentile bootstrap interval over
    problems (paired: one resample of problems for all three). Budget 0 (one sample per
    checkpoint): every value None."""
    pids = sorted(counts_a)
    if set(counts_b) != set(pids):
        raise FrontierError("matched_turnover: the two checkpoints cover different problems")
    n_min = min(min(counts_a[p][0], counts_b[p][0]) for p in pids) if pids else 0
    b = int(budget) if budget is not None else n_min // 2
    out = {"budget": b}
    keys = ("turnover", "null", "excess")
    if b < 1 or 2 * b > n_min:
        return out | {f"{k}{s}": None for k in keys for s in ("", "_lo", "_hi")}
    rows = []
    for p in pids:
        (na, ca), (nb, cb) = counts_a[p], counts_b[p]
        pa, pb = pass_at_k(na, ca, b), pass_at_k(nb, cb, b)
        qa, qb = pass_at_k(na, ca, 2 * b), pass_at_k(nb, cb, 2 * b)
        rows.append(
            [
                pa * (1 - pb) + pb * (1 - pa),
                1 - (1 - pa) * (1 - pb),
                (qa - pa) + (qb - pb),
                (qa + qb) / 2,
            ]
        )
    t, z = _ratio_of_sums(0, 1), _ratio_of_sums(2, 3)
    stats = {"turnover": t, "null": z, "excess": lambda r: t(r) - z(r)}
    for k, f in stats.items():
        v, lo, hi = bootstrap_ci(rows, stat=f, n_boot=n_boot, seed=seed)
        out |= {k: v, f"{k}_lo": lo, f"{k}_hi": hi}
    return out


def turnover_table(
    samples: Mapping[float, list[Mapping]], *, n_boot: int = 1000, seed: int = 0
) -> list[dict]:
    """Turnover of solved sets between neighbouring alphas (sorted), plus the union size (all
    samples: `turnover`), and the budget-matched turnover against its split-half null
    (matched_turnover: `matched_budget`, `matched_turnover`, `turnover_null`,
    `turnover_excess`, each with `_lo`/`_hi`)."""
    sel = _checked(samples)
    sets = per_alpha_solved(sel)
    counts = {a: counts_from_records(recs) for a, recs in sel.items()}
    alphas = sorted(sets)
    rows = []
    for a, b in zip(alphas, alphas[1:], strict=False):
        m = matched_turnover(counts[a], counts[b], n_boot=n_boot, seed=seed)
        rows.append(
            {
                "alpha_a": a,
                "alpha_b": b,
                **turnover(sets[a], sets[b]),
                "matched_budget": m["budget"],
                **{
                    f"{pre}{s}": m[f"{k}{s}"]
                    for k, pre in (
                        ("turnover", "matched_turnover"),
                        ("null", "turnover_null"),
                        ("excess", "turnover_excess"),
                    )
                    for s in ("", "_lo", "_hi")
                },
            }
        )
    return rows


def format_error_rise(rows: list[Mapping], threshold: float = 2.0) -> dict:
    """Mean format-error rate for |alpha| > threshold vs |alpha| <= threshold (None if empty)."""

    def mean(xs):
        xs = list(xs)
        return sum(xs) / len(xs) if xs else None

    inside = [r["format_error"] for r in rows if abs(r["alpha"]) <= threshold]
    outside = [r["format_error"] for r in rows if abs(r["alpha"]) > threshold]
    return {
        "threshold": threshold,
        "inside": mean(inside),
        "outside": mean(outside),
        "n_inside": len(inside),
        "n_outside": len(outside),
    }


def spec_fields(spec) -> dict:
    """What a frontier payload records about the spec that sampled its points (empty: None)."""
    if spec is None:
        return {}
    return {
        "eval_spec": spec.to_dict(),
        "protocol": spec.protocol(),
        "spec_fingerprint": spec.fingerprint(),
    }


def write_frontier(
    out_dir: str | Path,
    samples: Mapping[float, list[Mapping]],
    *,
    threshold: float = 2.0,
    extra: dict | None = None,
    spec=None,
) -> dict:
    """Write out_dir/frontier.json (rows, turnover, solved sets, format-error rise) and
    out_dir/frontier.csv (the rows); returns the json payload. `spec`: the EvalSpec that
    sampled every alpha (its fingerprint goes on every row)."""
    out_dir = Path(out_dir)
    rows = frontier_table(samples)
    if spec is not None:
        rows = [r | {"spec_fingerprint": spec.fingerprint()} for r in rows]
    sel = _checked(samples)
    ids = sorted({str(r["problem_id"]) for r in next(iter(sel.values()))})
    payload = {
        "rows": rows,
        "turnover": turnover_table(samples),
        "solved": {repr(a): sorted(s) for a, s in per_alpha_solved(sel).items()},
        "format_error_rise": format_error_rise(rows, threshold),
        "problem_set": problem_set(ids),
        "problem_ids": ids,
        **spec_fields(spec),
        **(extra or {}),
    }
    return save_frontier(out_dir, payload)


def write_sweep_frontier(
    out_dir,
    summaries: dict,
    strictness: dict,
    extra: dict | None = None,
    spec=None,
    partial: dict | None = None,
) -> dict:
    """summaries: run name -> evaluation summary (EvalSpec.evaluate); strictness: run name -> k
    (an int, or "inf") for the R_k runs; partial: run name -> reward name for the static
    partial-credit runs (paper B, finding 5: "static partial-credit rewards (discrete or
    continuous credit for passing smaller tests) keep models on the same frontier"), which are
    rows with k None and their `reward`; spec: the EvalSpec every run was evaluated with
    (recorded, and its fingerprint on every row). Every run must be one or the other. Writes
    out_dir/frontier.json and frontier.csv; returns the payload (R_k rows by k, then the
    partial-credit rows)."""
    partial = dict(partial or {})
    if not summaries:
        raise ValueError("write_sweep_frontier: no runs")
    both = sorted(set(strictness) & set(partial))
    if both:
        raise ValueError(f"write_sweep_frontier: run(s) {both} given both a k and a partial reward")
    missing = sorted(set(summaries) - set(strictness) - set(partial))
    if missing:
        raise ValueError(
            f"write_sweep_frontier: no strictness k or partial reward for run(s) {missing}"
        )
    rows = []
    for row in summary_table(summaries, (1,)):
        run = row["run"]
        row["k"] = str(strictness[run]) if run in strictness else None
        row["reward"] = f"strict_{strictness[run]}" if run in strictness else partial[run]
        row["solved"] = len(summaries[run].get("solved", []))
        if spec is not None:
            row["spec_fingerprint"] = spec.fingerprint()
        rows.append(row)
    rows.sort(
        key=lambda r: (
            r["k"] is None,
            float("inf") if r["k"] in ("inf", None) else float(r["k"]),
            r["reward"],
        )
    )
    return save_frontier(out_dir, {"rows": rows, **spec_fields(spec), **(extra or {})})


def point_fingerprints(payload: Mapping) -> set:
    """The spec fingerprints of a frontier payload's points (None for a point without one)."""
    rows = payload.get("rows") or []
    return {r.get("spec_fingerprint", payload.get("spec_fingerprint")) for r in rows}


def check_overlay(frontiers: Mapping[str, Mapping]) -> str:
    """The one spec fingerprint shared by every point of every named frontier payload; raises
    FrontierError when points were sampled differently (naming both fingerprints, sources and
    differing protocol fields) or carry no fingerprint (written before specs were recorded)."""
    seen: dict[str, str] = {}
    for name, payload in frontiers.items():
        fps = point_fingerprints(payload)
        if not fps or None in fps:
            raise FrontierError(
                f"{name}: frontier points without a spec fingerprint (written "
                "before evaluation specs were recorded); re-run its evaluation "
                "so points sampled differently cannot be overlaid"
            )
        if len(fps) > 1:
            raise FrontierError(
                f"{name}: one frontier mixes points sampled differently "
                f"(spec fingerprints {sorted(fps)})"
            )
        seen[name] = fps.pop()
    if len(set(seen.values())) > 1:
        (a, fa), (b, fb) = next(
            (
                (x, y)
                for x, y in zip(seen.items(), list(seen.items())[1:], strict=False)
                if x[1] != y[1]
            )
        )
        pa, pb = frontiers[a].get("protocol") or {}, frontiers[b].get("protocol") or {}
        diff = {
            f: (pa.get(f), pb.get(f)) for f in sorted(set(pa) | set(pb)) if pa.get(f) != pb.get(f)
        }
        raise FrontierError(
            f"refusing to overlay frontier points sampled differently: {a} has "
            f"spec fingerprint {fa}, {b} has {fb}"
            + (f"; differing fields ({a}, {b}): {diff}" if diff else "")
            + ". Evaluate both with one EvalSpec (notebook 07 takes notebook "
            "06's recorded spec: SPEC_FROM_SWEEP)"
        )
    return next(iter(seen.values())) if seen else ""


def save_frontier(out_dir: str | Path, payload: dict) -> dict:
    """The one frontier writer: out_dir/frontier.json (the payload) and out_dir/frontier.csv
    (its rows), both atomic; returns the payload."""
    out_dir = Path(out_dir)
    write_json_atomic(out_dir / "frontier.json", payload)
    write_csv_atomic(out_dir / "frontier.csv", payload["rows"])
    return payload
