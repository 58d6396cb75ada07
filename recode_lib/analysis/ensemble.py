"""Ensemble pass@k along the weight-averaging axis at a matched sample budget.

    counts = counts_by_alpha(samples)            # {alpha: {problem_id: (n, c)}}
    pools = default_pools(counts, budget=8)      # best single / interpolation / interp+extrap
    rows = ensemble_curves(counts, pools, ks=(1, 2, 4, 8), n_boot=1000)
    extra = extrapolated_unique_solves(counts)   # problems only alphas outside [0, 1] solve
    write_ensemble(RUN / "08_ensemble_passk", counts, ks=(1, 2, 4, 8))   # passk.json

A budget of k samples per problem is split evenly over a pool's m checkpoints (k // m each; the
k % m extra draws are averaged over every rotation of which members get them, so no member is
favoured), each checkpoint drawing without replacement from its own n samples; the probability
of at least one correct draw is recode_lib.metrics.ensemble_pass_at_k (the unbiased estimator;
with one checkpoint it is plain pass@k). Means over problems carry a percentile bootstrap
interval over problems (recode_lib.metrics.bootstrap_ci).
Pools: `best_single` is the one checkpoint with the highest pass@budget among all evaluated
alphas (chosen on the same data, so it is the optimistic baseline); `interpolation` is every
alpha in [0, 1]; `interp+extrap` every alpha inside `stable` (default: all).
It does not evaluate checkpoints and raises when a pool member has fewer samples than it must
draw (pass@k is undefined there).
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from recode_lib.jsonl import write_json_atomic
from recode_lib.metrics import (bootstrap_ci, counts_from_records, ensemble_pass_at_k,
                                pass_at_k, solved_sets, split_budget)


def counts_by_alpha(samples: Mapping[float, list[Mapping]]) -> dict[float, dict]:
    """{alpha: {problem_id: (n, c)}} from per-sample records (outcome == "correct")."""
    return {float(a): counts_from_records(recs) for a, recs in sorted(samples.items())}


def _problems(counts: Mapping[float, Mapping], pool: Sequence[float]) -> list[str]:
    ref = set(counts[pool[0]])
    for a in pool[1:]:
        if set(counts[a]) != ref:
            raise ValueError(f"alpha {a} covers different problems than alpha {pool[0]}")
    return sorted(ref)


def problem_values(counts: Mapping[float, Mapping], pool: Sequence[float], k: int) -> list[float]:
    """Per-problem ensemble pass@k of a pool (rotation-averaged remainder allocation)."""
    pool = list(pool)
    m = len(pool)
    base = split_budget(k, m)
    allocs = [base[-r:] + base[:-r] for r in range(m)] if k % m else [base]
    out = []
    for pid in _problems(counts, pool):
        nc = [counts[a][pid] for a in pool]
        out.append(sum(ensemble_pass_at_k(nc, k, alloc) for alloc in allocs) / len(allocs))
    return out


def best_single(counts: Mapping[float, Mapping], k: int, candidates: Sequence[float] | None = None
                ) -> float:
    """The alpha with the highest mean pass@k (ties: the one closest to [0, 1], then lowest)."""
    candidates = list(candidates if candidates is not None else counts)

    def score(a):
        vals = [pass_at_k(n, c, k) for n, c in counts[a].values()]
        return sum(vals) / len(vals)
    dist = lambda a: max(0.0, -a, a - 1.0)  # noqa: E731
    return max(candidates, key=lambda a: (score(a), -dist(a), -a))


def default_pools(counts: Mapping[float, Mapping], budget: int,
                  stable: tuple[float, float] | None = None) -> dict[str, list[float]]:
    alphas = sorted(counts)
    lo, hi = stable if stable is not None else (-float("inf"), float("inf"))
    extended = [a for a in alphas if lo <= a <= hi]
    interp = [a for a in extended if 0.0 <= a <= 1.0]
    if not interp:
        raise ValueError(f"no alpha in [0, 1] among {alphas}")
    return {"best_single": [best_single(counts, budget, extended)],
            "interpolation": interp, "interp+extrap": extended}


def ensemble_curves(counts: Mapping[float, Mapping], pools: Mapping[str, Sequence[float]],
                    ks: Sequence[int], n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """Rows {pool, k, pass, lo, hi, members, n_problems} for every pool and k."""
    rows = []
    for name, pool in pools.items():
        for k in ks:
            vals = problem_values(counts, pool, int(k))
            mean, lo, hi = bootstrap_ci(vals, n_boot=n_boot, seed=seed)
            rows.append({"pool": name, "k": int(k), "pass": mean, "lo": lo, "hi": hi,
                         "members": [float(a) for a in pool], "n_problems": len(vals)})
    return rows


def paired_gain(counts, pool_a, pool_b, k: int, n_boot: int = 1000, seed: int = 0) -> dict:
    """Mean per-problem difference pass@k(pool_b) - pass@k(pool_a) with a bootstrap CI."""
    a = problem_values(counts, pool_a, k)
    b = problem_values(counts, pool_b, k)
    mean, lo, hi = bootstrap_ci([y - x for x, y in zip(a, b)], n_boot=n_boot, seed=seed)
    return {"k": k, "gain": mean, "lo": lo, "hi": hi}


def extrapolated_unique_solves(counts: Mapping[float, Mapping]) -> dict:
    """Problems solved by some alpha outside [0, 1] and by no alpha inside, per alpha too."""
    sets = solved_sets(counts)
    inside = set().union(*(s for a, s in sets.items() if 0.0 <= a <= 1.0))
    outside = {a: s - inside for a, s in sets.items() if not 0.0 <= a <= 1.0}
    union = set().union(*outside.values()) if outside else set()
    return {"n_unique": len(union), "problems": sorted(union),
            "by_alpha": {repr(a): sorted(s) for a, s in sorted(outside.items())},
            "n_solved_inside": len(inside)}


def write_ensemble(out_dir: str | Path, counts: Mapping[float, Mapping], ks: Sequence[int], *,
                   stable: tuple[float, float] | None = None, n_boot: int = 1000, seed: int = 0,
                   extra: dict | None = None) -> dict:
    """Compute pools at budget max(ks), curves for every k, the paired gain of the extended
    pool over the best single checkpoint, unique extrapolated solves; write passk.json."""
    ks = sorted({int(k) for k in ks})
    pools = default_pools(counts, ks[-1], stable)
    payload = {
        "ks": ks, "pools": {n: [float(a) for a in p] for n, p in pools.items()},
        "rows": ensemble_curves(counts, pools, ks, n_boot, seed),
        "gain_extended_vs_best": paired_gain(counts, pools["best_single"], pools["interp+extrap"],
                                             ks[-1], n_boot, seed),
        "gain_interp_vs_best": paired_gain(counts, pools["best_single"], pools["interpolation"],
                                           ks[-1], n_boot, seed),
        "extrapolated_unique": extrapolated_unique_solves(counts), **(extra or {}),
    }
    write_json_atomic(Path(out_dir) / "passk.json", payload)
    return payload
