"""Ensemble pass@k along the weight-averaging axis at a matched sample budget.

    counts = counts_by_alpha(samples)            # {alpha: {problem_id: (n, c)}}
    runs = counts_by_run(run_samples)            # {06 run: {problem_id: (n, c)}}, same n
    pools = default_pools(counts, budget=8, runs=runs)   # best single / interp / interp+extrap
    rows = ensemble_curves(counts | runs, pools, ks=(1, 2, 4, 8), n_boot=1000)
    extra = extrapolated_unique_solves(counts, stable=(-0.5, 1.5))   # equal budget vs a null
    write_ensemble(RUN / "08_ensemble_passk", counts, ks=(1, 2, 4, 8), runs=runs)   # passk.json

A budget of k samples per problem is split evenly over a pool's m checkpoints (k // m each; the
k % m extra draws are averaged over every rotation of which members get them, so no member is
favoured), each checkpoint drawing without replacement from its own n samples; the probability
of at least one correct draw is recode_lib.metrics.ensemble_pass_at_k (the unbiased estimator;
with one checkpoint it is plain pass@k). Means over problems carry a percentile bootstrap
interval over problems (recode_lib.metrics.bootstrap_ci).
Pools: `best_single` is the one checkpoint with the highest pass@budget among EVERY evaluated
checkpoint: every alpha of the grid (inside the stable range or not) and every run of notebook
06's sweep passed as `runs` (its independently trained runs, evaluated with the grid's spec and
n), chosen on the same data, so it is the optimistic baseline (paper B: ensembling "beats the
best single checkpoint"); the candidates must have the same n. `interpolation` is every alpha
in [0, 1]; `interp+extrap` every alpha inside `stable` (default: all). Gains over the best
single checkpoint (paired_gain) are absolute and relative, each with a paired bootstrap interval.
Unique extrapolated solves (extrapolated_unique_solves) are budget-matched and compared with a
split-half null (its docstring); the all-draws count is kept only as `unmatched`.
It does not evaluate checkpoints and raises when a pool member has fewer samples than it must
draw (pass@k is undefined there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from recode_lib.core.jsonl import write_json_atomic
from recode_lib.metrics import (
    bootstrap_ci,
    counts_from_records,
    ensemble_pass_at_k,
    pass_at_k,
    solved_sets,
    split_budget,
)


def counts_by_alpha(samples: Mapping[float, list[Mapping]]) -> dict[float, dict]:
    """{alpha: {problem_id: (n, c)}} from per-sample records (outcome == "correct")."""
    return {float(a): counts_from_records(recs) for a, recs in sorted(samples.items())}


def counts_by_run(samples: Mapping[str, list[Mapping]]) -> dict[str, dict]:
    """{run name: {problem_id: (n, c)}} from per-sample records of notebook 06's runs."""
    return {str(name): counts_from_records(recs) for name, recs in sorted(samples.items())}


def member(a):
    """A pool member as recorded: an alpha as a float, a sweep run by its name."""
    return a if isinstance(a, str) else float(a)


def _allocations(k: int, m: int) -> list[list[int]]:
    base = split_budget(k, m)
    return [base[-r:] + base[:-r] for r in range(m)] if k % m else [base]


def _problems(counts: Mapping[float, Mapping], pool: Sequence[float]) -> list[str]:
    ref = set(counts[pool[0]])
    for a in pool[1:]:
        if set(counts[a]) != ref:
            raise ValueError(f"alpha {a} covers different problems than alpha {pool[0]}")
    return sorted(ref)


def problem_values(counts: Mapping[float, Mapping], pool: Sequence[float], k: int) -> list[float]:
    """Per-problem ensemble pass@k of a pool (rotation-averaged remainder allocation)."""
    pool = list(pool)
    allocs = _allocations(k, len(pool))
    out = []
    for pid in _problems(counts, pool):
        nc = [counts[a][pid] for a in pool]
        out.append(sum(ensemble_pass_at_k(nc, k, alloc) for alloc in allocs) / len(allocs))
    return out


def best_single(counts: Mapping, k: int, candidates: Sequence | None = None):
    """The checkpoint (an alpha, or a sweep run's name) with the highest mean pass@k over its
    problems among `candidates` (default: every key of `counts`, alphas and runs alike, in or
    out of any stable range; default_pools passes every alpha of the grid and every sweep run).
    Ties in mean pass@k go, in this order, to: the smaller distance outside [0, 1] (0 inside;
    a run counts as 0, so a run beats a tied extrapolated alpha); then an alpha before a run;
    then the lowest alpha; between runs, the last name in sorted order."""
    candidates = list(candidates if candidates is not None else counts)

    def score(a):
        vals = [pass_at_k(n, c, k) for n, c in counts[a].values()]
        return sum(vals) / len(vals)

    def key(a):
        if isinstance(a, str):
            return (score(a), 0.0, 0, a)
        return (score(a), -max(0.0, -a, a - 1.0), 1, -a)

    return max(candidates, key=key)


def check_same_n(counts: Mapping, candidates: Sequence) -> int:
    """The one number of samples per problem every candidate has; raises naming them when
    they differ (the best single checkpoint is chosen among checkpoints evaluated at one n)."""
    ns = {member(a): sorted({n for n, _ in counts[a].values()}) for a in candidates}
    if len({tuple(v) for v in ns.values()}) > 1 or any(len(v) != 1 for v in ns.values()):
        raise ValueError(
            f"the best-single candidates are evaluated at different n (samples per "
            f"problem): {ns}; evaluate every alpha and every sweep run with one n"
        )
    return next(iter(ns.values()))[0]


def default_pools(
    counts: Mapping[float, Mapping],
    budget: int,
    stable: tuple[float, float] | None = None,
    runs: Mapping[str, Mapping] | None = None,
) -> dict[str, list]:
    """{"best_single": [the best of every evaluated checkpoint at pass@budget: every alpha in
    `counts`, stable or not, and every run in `runs`], "interpolation": alphas in [0, 1]
    within `stable`, "interp+extrap": alphas within `stable`}. Raises when no alpha lies in
    [0, 1] or the candidates were evaluated at different n."""
    alphas = sorted(counts)
    lo, hi = stable if stable is not None else (-float("inf"), float("inf"))
    extended = [a for a in alphas if lo <= a <= hi]
    interp = [a for a in extended if 0.0 <= a <= 1.0]
    if not interp:
        raise ValueError(f"no alpha in [0, 1] among {alphas}")
    table = {**counts, **dict(runs or {})}
    candidates = alphas + sorted(runs or {})
    check_same_n(table, candidates)
    return {
        "best_single": [best_single(table, budget, candidates)],
        "interpolation": interp,
        "interp+extrap": extended,
    }


def ensemble_curves(
    counts: Mapping[float, Mapping],
    pools: Mapping[str, Sequence[float]],
    ks: Sequence[int],
    n_boot: int = 1000,
    seed: int = 0,
) -> list[dict]:
    """Rows {pool, k, pass, lo, hi, members, n_problems} for every pool and k."""
    rows = []
    for name, pool in pools.items():
        for k in ks:
            vals = problem_values(counts, pool, int(k))
            mean, lo, hi = bootstrap_ci(vals, n_boot=n_boot, seed=seed)
            rows.append(
                {
                    "pool": name,
                    "k": int(k),
                    "pass": mean,
                    "lo": lo,
                    "hi": hi,
                    "members": [member(a) for a in pool],
                    "n_problems": len(vals),
                }
            )
    return rows


def _relative(rows) -> float:
    rows = np.asarray(rows, dtype=float)
    base = rows[:, 0].mean()
    return rows[:, 1].mean() / base - 1.0 if base > 0 else float("nan")


def paired_gain(counts, pool_a, pool_b, k: int, n_boot: int = 1000, seed: int = 0) -> dict:
    """pass@k(pool_b) over pass@k(pool_a) on the same problems: `gain` the absolute
    difference of the means (lo, hi), `relative` = pass_b / pass_a - 1 (relative_lo,
    relative_hi; None when pass_a is 0 or a resample makes it 0), both percentile bootstrap
    intervals over problems, paired (each resample takes the same problems for both pools);
    `base` and `pool` are the two means (paper B: the extended-frontier ensemble "beats the best
    single checkpoint on LCB-hard pass@250 by 3.3%", absolute or relative not said: both)."""
    a = problem_values(counts, pool_a, k)
    b = problem_values(counts, pool_b, k)
    mean, lo, hi = bootstrap_ci(
        [y - x for x, y in zip(a, b, strict=True)], n_boot=n_boot, seed=seed
    )
    rel, rlo, rhi = bootstrap_ci(np.column_stack([a, b]), stat=_relative, n_boot=n_boot, seed=seed)
    finite = lambda v: float(v) if np.isfinite(v) else None  # noqa: E731
    return {
        "k": k,
        "gain": mean,
        "lo": lo,
        "hi": hi,
        "base": float(np.mean(a)),
        "pool": float(np.mean(b)),
        "relative": finite(rel),
        "relative_lo": finite(rlo),
        "relative_hi": finite(rhi),
        "base_members": [member(x) for x in pool_a],
        "pool_members": [member(x) for x in pool_b],
    }


def unmatched_unique_solves(counts: Mapping[float, Mapping]) -> dict:
    """Problems solved by some alpha outside [0, 1] and by no alpha inside, per alpha too,
    over ALL draws of every alpha. Not budget-matched: the paper grid's 12 outside alphas have
    3000 draws per problem against the 5 inside alphas' 1250, so identical checkpoints at
    p = 0.001 per draw already give ~27% of problems; kept only for reference."""
    sets = solved_sets(counts)
    inside = set().union(*(s for a, s in sets.items() if 0.0 <= a <= 1.0))
    outside = {a: s - inside for a, s in sets.items() if not 0.0 <= a <= 1.0}
    union = set().union(*outside.values()) if outside else set()
    return {
        "n_unique": len(union),
        "problems": sorted(union),
        "by_alpha": {repr(a): sorted(s) for a, s in sorted(outside.items())},
        "n_solved_inside": len(inside),
        "n_problems": len(next(iter(counts.values()), {})),
    }


def split_half_null(counts: Mapping, pool: Sequence, budget: int) -> list[float]:
    """Per problem (sorted ids): P(one half of the pool's draws solves it and the other half
    does not), two disjoint sets of `budget` draws each from the SAME checkpoints' samples,
    split over the pool as problem_values splits a budget (rotation-averaged):
    prod_j (1 - pass@b_j) - prod_j (1 - pass@2b_j). With one checkpoint: two halves of its
    samples. Raises when a member has fewer than 2 b_j samples."""
    pool = list(pool)
    allocs = _allocations(budget, len(pool))
    out = []
    for pid in _problems(counts, pool):
        vals = []
        for alloc in allocs:
            none_b = none_2b = 1.0
            for a, b in zip(pool, alloc, strict=True):
                n, c = counts[a][pid]
                if b:
                    none_b *= 1.0 - pass_at_k(n, c, b)
                    none_2b *= 1.0 - pass_at_k(n, c, 2 * b)
            vals.append(none_b - none_2b)
        out.append(sum(vals) / len(vals))
    return out


def extrapolated_unique_solves(
    counts: Mapping[float, Mapping],
    *,
    stable: tuple[float, float] | None = None,
    budget: int | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict:
    """Unique extrapolated solves at an equal budget, against a split-half null.

    Paper B: "extrapolated points contribute unique solves". Counting problems some alpha
    outside [0, 1] solves and no alpha inside does, over all draws, rewards the side with more
    draws (unmatched_unique_solves, kept as `unmatched`). Here both sides stay in the stable
    range (`stable`; default all alphas) and get the SAME `budget` of draws per problem (default:
    half the fewest samples any of their checkpoints has, so that the null exists), split over
    the side's checkpoints as a pool's budget is: per problem the expected unique solve is
    P_extrap(solved) * (1 - P_interp(solved)) (the two sides draw independently). The null is
    the same statistic between two disjoint halves of the interpolation pool's own samples
    (split_half_null; one checkpoint: two halves of its samples); `excess` = unique - null per
    problem. Rates are means over problems with percentile bootstrap intervals (paired for the
    excess); `expected_unique` / `expected_null` are the counts (rate x problems). Identical
    checkpoints give an excess indistinguishable from 0. None values (and `reason`) when no
    alpha of the stable range lies outside [0, 1] or there are too few samples (budget < 1)."""
    alphas = sorted(counts)
    lo, hi = stable if stable is not None else (-float("inf"), float("inf"))
    inside = [a for a in alphas if lo <= a <= hi and 0.0 <= a <= 1.0]
    outside = [a for a in alphas if lo <= a <= hi and not 0.0 <= a <= 1.0]
    out = {
        "extrapolated": [float(a) for a in outside],
        "interpolation": [float(a) for a in inside],
        "stable": [lo, hi] if stable is not None else None,
        "unmatched": unmatched_unique_solves(counts),
    }
    keys = [f"{k}{s}" for k in ("rate", "null_rate", "excess_rate") for s in ("", "_lo", "_hi")]
    empty = {k: None for k in keys + ["expected_unique", "expected_null", "budget", "n_problems"]}
    if not inside or not outside:
        return out | empty | {"reason": "no alpha of the stable range on one side of [0, 1]"}
    n_min = min(n for a in inside + outside for n, _ in counts[a].values())
    b = int(budget) if budget is not None else n_min // 2
    if b < 1:
        return out | empty | {"reason": f"too few samples per checkpoint ({n_min}) for two halves"}
    p_out = problem_values(counts, outside, b)
    p_in = problem_values(counts, inside, b)
    uniq = [po * (1.0 - pi) for po, pi in zip(p_out, p_in, strict=True)]
    null = split_half_null(counts, inside, b)
    res = {"budget": b, "n_problems": len(uniq)}
    for name, vals in (
        ("rate", uniq),
        ("null_rate", null),
        ("excess_rate", [u - z for u, z in zip(uniq, null, strict=True)]),
    ):
        v, vlo, vhi = bootstrap_ci(vals, n_boot=n_boot, seed=seed)
        res |= {name: v, f"{name}_lo": vlo, f"{name}_hi": vhi}
    res |= {"expected_unique": float(sum(uniq)), "expected_null": float(sum(null))}
    return out | res


def write_ensemble(
    out_dir: str | Path,
    counts: Mapping[float, Mapping],
    ks: Sequence[int],
    *,
    stable: tuple[float, float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    runs: Mapping[str, Mapping] | None = None,
    extra: dict | None = None,
) -> dict:
    """Compute pools at budget max(ks) (the best single checkpoint among every alpha and every
    run in `runs`, notebook 06's runs evaluated like the grid), curves for every k, the paired
    gains (absolute and relative) of the extended and interpolation pools over the best single
    checkpoint, unique extrapolated solves at an equal budget against their null; write
    passk.json."""
    ks = sorted({int(k) for k in ks})
    runs = dict(runs or {})
    table = {**counts, **runs}
    pools = default_pools(counts, ks[-1], stable, runs=runs)
    candidates = list(counts) + sorted(runs)
    payload = {
        "ks": ks,
        "pools": {n: [member(a) for a in p] for n, p in pools.items()},
        "best_single_candidates": [member(a) for a in candidates],
        "n_samples": check_same_n(table, candidates),
        "runs": sorted(runs),
        "rows": ensemble_curves(table, pools, ks, n_boot, seed),
        "gain_extended_vs_best": paired_gain(
            table, pools["best_single"], pools["interp+extrap"], ks[-1], n_boot, seed
        ),
        "gain_interp_vs_best": paired_gain(
            table, pools["best_single"], pools["interpolation"], ks[-1], n_boot, seed
        ),
        "extrapolated_unique": extrapolated_unique_solves(
            counts, stable=stable, n_boot=n_boot, seed=seed
        ),
        **(extra or {}),
    }
    write_json_atomic(Path(out_dir) / "passk.json", payload)
    return payload
