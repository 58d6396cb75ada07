"""Relative gains between two policies on the same problems, with a paired bootstrap interval.

    values = per_problem_pass1(rows)                     # {problem id: fraction correct}
    g = paired_relative_gain({"humaneval": a_values, "mbpp": ...},
                             {"humaneval": b_values, "mbpp": ...}, n_boot=2000, seed=0)
    g["value"], g["ci"]            # average_a / average_b - 1 and its 95% interval

ReCode reports its gains as relative changes of the average pass@1 over benchmarks ("50.4% ->
58.5% (+16.1% relative)", "+6.7% over outcome-only GRPO", AIME 2024 "+7.4% relative over RL
without the process reward"). The average is the mean over benchmarks of each benchmark's
mean over its problems; the interval resamples problems with replacement within each
benchmark (stratified) and takes the same problems for both policies in every resample
(paired), so problem difficulty, shared by both, cancels. A resample whose reference average
is 0 has no relative gain and is left out; with none left the interval is None. Both sides
must cover the same problems of each benchmark (a difference raises naming the benchmark). It
reads and writes no files.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

import numpy as np

from recode_lib.metrics import counts_from_records

__all__ = ["per_problem_pass1", "mean_values", "paired_relative_gain", "seed_std"]


def per_problem_pass1(rows, is_correct=None) -> dict[str, float]:
    """{problem id: fraction of its samples that are correct} (each problem's unbiased pass@1,
    avg@n for math) from per-sample rows (code: "outcome" == "correct"; or `is_correct`)."""
    counts = counts_from_records(rows, is_correct=is_correct)
    return {pid: c / n for pid, (n, c) in counts.items()}


def mean_values(per_run: Sequence[Mapping[str, float]], where: str = "") -> dict[str, float]:
    """Per-problem values averaged over several runs of one policy (its seeds); every run must
    cover the same problems (ValueError naming `where` and a differing problem)."""
    per_run = list(per_run)
    if not per_run:
        raise ValueError(f"{where}: no runs")
    ids = set(per_run[0])
    for other in per_run[1:]:
        if set(other) != ids:
            diff = sorted(ids ^ set(other))[:3]
            raise ValueError(f"{where}: the runs cover different problems (e.g. {diff})")
    return {pid: statistics.fmean(r[pid] for r in per_run) for pid in sorted(ids)}


def seed_std(values: Sequence[float | None]) -> float | None:
    """The sample standard deviation over seeds (None with fewer than two values or a None)."""
    vals = list(values)
    if len(vals) < 2 or any(v is None for v in vals):
        return None
    return statistics.stdev(vals)


def paired_relative_gain(
    policy: Mapping[str, Mapping[str, float]],
    reference: Mapping[str, Mapping[str, float]],
    *,
    n_boot: int = 2000,
    alpha: float = 0.05,
    seed: int = 0,
) -> dict:
    """{"value": average(policy) / average(reference) - 1 (None when the reference's is 0),
    "ci": [low, high] (paired, stratified percentile bootstrap over problems; None when no
    resample has a non-zero reference), "policy_average", "reference_average", "n_problems"}.
    `policy` and `reference` map each benchmark to {problem id: value}."""
    benchmarks = list(policy)
    if not benchmarks or set(benchmarks) != set(reference):
        raise ValueError(
            f"paired_relative_gain: the two sides have different benchmarks "
            f"({sorted(policy)} vs {sorted(reference)})"
        )
    rng = np.random.default_rng(seed)
    num, den = np.zeros(n_boot), np.zeros(n_boot)
    avg_p, avg_r, n_total = 0.0, 0.0, 0
    for b in benchmarks:
        ids = sorted(policy[b])
        if set(ids) != set(reference[b]):
            diff = sorted(set(ids) ^ set(reference[b]))[:3]
            raise ValueError(
                f"paired_relative_gain: benchmark {b!r} has different problems on "
                f"the two sides (e.g. {diff})"
            )
        if not ids:
            raise ValueError(f"paired_relative_gain: benchmark {b!r} has no problems")
        p = np.array([policy[b][i] for i in ids], dtype=float)
        r = np.array([reference[b][i] for i in ids], dtype=float)
        idx = rng.integers(0, len(ids), size=(n_boot, len(ids)))
        num += p[idx].mean(axis=1)
        den += r[idx].mean(axis=1)
        avg_p += p.mean()
        avg_r += r.mean()
        n_total += len(ids)
    avg_p, avg_r = avg_p / len(benchmarks), avg_r / len(benchmarks)
    ok = den > 0
    ci = None
    if ok.any():
        gains = num[ok] / den[ok] - 1.0
        lo, hi = np.quantile(gains, [alpha / 2, 1 - alpha / 2])
        ci = [float(lo), float(hi)]
    return {
        "value": (avg_p / avg_r - 1.0) if avg_r > 0 else None,
        "ci": ci,
        "policy_average": float(avg_p),
        "reference_average": float(avg_r),
        "n_problems": n_total,
    }
