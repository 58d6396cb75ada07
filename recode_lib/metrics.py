"""pass@k, ensemble pass@k at a matched sample budget, bootstrap intervals, solved-set turnover.
This module does no execution and no I/O.
More: docs/modules/core_and_runner.md (recode_lib.metrics).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np


def _check_counts(n, c, where: str = "") -> None:
    for name, v in (("n", n), ("c", c)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{where}{name} must be an integer, got {v!r}")
    if n < 0 or c < 0 or c > n:
        raise ValueError(f"{where}need 0 <= c <= n, got n={n}, c={c}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples of which c are correct. Raises ValueError if n < k."""
    _check_counts(n, c)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if n < k:
        raise ValueError(f"pass@{k} is undefined with n={n} < k={k} samples")
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def _as_nc(value, where: str) -> tuple[int, int]:
    try:
        n, c = value
    except (TypeError, ValueError):
        raise ValueError(f"{where}: expected (n, c), got {value!r}") from None
    _check_counts(n, c, f"{where}: ")
    return int(n), int(c)


def per_problem_pass_at_k(per_problem_counts, k: int) -> list[float]:
    """The unbiased pass@k of each problem ({problem: (n, c)} or records' counts), in order;
    raises naming the first problem with n < k."""
    vals = []
    for pid, value in per_problem_counts.items():
        n, c = _as_nc(value, f"problem {pid!r}")
        if n < k:
            raise ValueError(f"problem {pid!r}: pass@{k} is undefined with n={n} < k={k}")
        vals.append(pass_at_k(n, c, k))
    return vals


def pass_at_k_table(
    per_problem_counts: Mapping[str, tuple[int, int]], ks: Iterable[int] = (1,)
) -> dict[str, float]:
    """Mean pass@k over problems for each k: {"pass@1": ..., ...}. Raises naming the problem
    whose n < k, and on an empty table."""
    if not per_problem_counts:
        raise ValueError("pass_at_k_table: no problems")
    out: dict[str, float] = {}
    for k in ks:
        out[f"pass@{k}"] = float(np.mean(per_problem_pass_at_k(per_problem_counts, k)))
    return out


def counts_from_records(
    records: Iterable[Mapping],
    *,
    key: str = "problem_id",
    is_correct: Callable[[Mapping], bool] | None = None,
) -> dict[str, tuple[int, int]]:
    """{problem id: (n samples, c correct)} from per-sample result records. By default a record
    is correct when its "outcome" is "correct"; records without the key raise."""
    is_correct = is_correct or (lambda r: r.get("outcome") == "correct")
    counts: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        if key not in rec:
            raise KeyError(f"record {i} has no {key!r} field: {str(dict(rec))[:200]}")
        nc = counts.setdefault(rec[key], [0, 0])
        nc[0] += 1
        nc[1] += bool(is_correct(rec))
    return {pid: (n, c) for pid, (n, c) in counts.items()}


def split_budget(budget: int, m: int) -> list[int]:
    """Split `budget` draws evenly over m checkpoints; the remainder goes to the first ones."""
    if m < 1 or budget < 0:
        raise ValueError(f"need m >= 1 and budget >= 0, got m={m}, budget={budget}")
    base, rem = divmod(budget, m)
    return [base + (1 if j < rem else 0) for j in range(m)]


def ensemble_pass_at_k(
    counts: Sequence[tuple[int, int]], budget: int, allocation: Sequence[int] | None = None
) -> float:
    """P(at least one correct) for ONE problem when checkpoint j (with n_j samples, c_j correct)
    contributes allocation[j] draws without replacement (default: split_budget). Raises when a
    checkpoint has fewer samples than it must draw."""
    counts = [_as_nc(v, f"checkpoint {j}") for j, v in enumerate(counts)]
    if not counts:
        raise ValueError("ensemble_pass_at_k: empty pool")
    alloc = list(allocation) if allocation is not None else split_budget(budget, len(counts))
    if len(alloc) != len(counts):
        raise ValueError(f"allocation has {len(alloc)} entries for {len(counts)} checkpoints")
    if allocation is not None and sum(alloc) != budget:
        raise ValueError(f"allocation sums to {sum(alloc)}, budget is {budget}")
    p_none = 1.0
    for j, ((n, c), b) in enumerate(zip(counts, alloc, strict=True)):
        if b == 0:
            continue
        if n < b:
            raise ValueError(f"checkpoint {j}: needs {b} draws but has only n={n} samples")
        p_none *= 1.0 - pass_at_k(n, c, b)
    return 1.0 - p_none


def ensemble_pass_at_k_mean(
    per_checkpoint: Mapping[str, Mapping[str, tuple[int, int]]],
    budget: int,
    pool: Sequence[str] | None = None,
    allocation: Sequence[int] | None = None,
) -> float:
    """Mean over problems of ensemble_pass_at_k for a pool of checkpoints (default: all).
    Every checkpoint in the pool must have counts for the same problems."""
    pool = list(pool) if pool is not None else list(per_checkpoint)
    missing = [p for p in pool if p not in per_checkpoint]
    if missing:
        raise KeyError(f"checkpoints not in the table: {missing}")
    problems = set(per_checkpoint[pool[0]])
    for p in pool[1:]:
        if set(per_checkpoint[p]) != problems:
            diff = sorted(set(per_checkpoint[p]) ^ problems)[:5]
            raise ValueError(
                f"checkpoint {p!r} covers different problems than {pool[0]!r}: {diff}..."
            )
    if not problems:
        raise ValueError("ensemble_pass_at_k_mean: no problems")
    vals = [
        ensemble_pass_at_k([per_checkpoint[p][pid] for p in pool], budget, allocation)
        for pid in sorted(problems)
    ]
    return float(np.mean(vals))


def bootstrap_ci(
    values: Sequence[float],
    *,
    stat: Callable = np.mean,
    n_boot: int = 2000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float, float]:
    """(stat(values), low, high): percentile bootstrap over problems (resampling per-problem
    values with replacement), seeded. `values` may be 2-D, one row per problem (e.g. paired
    columns [baseline, pool]): rows are resampled together and `stat` gets the resampled rows
    (a paired interval for a ratio such as a relative gain)."""
    arr = np.asarray(list(values), dtype=float)
    if arr.size == 0:
        raise ValueError("bootstrap_ci: no values")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(arr), size=(n_boot, len(arr)))
    boots = np.array([stat(arr[row]) for row in idx])
    lo, hi = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    return float(stat(arr)), float(lo), float(hi)


def pass_at_k_ci(
    per_problem_counts: Mapping[str, tuple[int, int]],
    k: int,
    *,
    n_boot: int = 2000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float, float]:
    """(mean pass@k over problems, low, high): percentile bootstrap over problems of the
    per-problem unbiased pass@k. With k = 1 this is avg@n (the mean fraction of correct samples)
    and its interval. Raises naming a problem with n < k."""
    if not per_problem_counts:
        raise ValueError("pass_at_k_ci: no problems")
    return bootstrap_ci(
        per_problem_pass_at_k(per_problem_counts, k), n_boot=n_boot, alpha=alpha, seed=seed
    )


TIE = 0.5


def preference_outcome(score_better, score_worse) -> int:
    """1 iff the better side's score is strictly higher, else 0 (a tie or a missing score:
    "how often a reward model scores the better trace higher", ReCode's LCB-RB metric)."""
    if score_better is None or score_worse is None:
        return 0
    return int(score_better > score_worse)


def preference_from_vote(vote) -> int:
    """The same rule for a pairwise vote (1.0: better preferred, 0.0: worse, TIE or None:
    undecided): 1 only for a decided vote for the better side."""
    return int(vote == 1.0)


def is_tie(score_better, score_worse) -> bool:
    """A pair a method did not order: equal scores or a missing one."""
    return score_better is None or score_worse is None or score_better == score_worse


def solved_sets(per_checkpoint: Mapping[str, Mapping[str, tuple[int, int]]]) -> dict[str, set[str]]:
    """{checkpoint: problems with at least one correct sample}."""
    return {
        ck: {pid for pid, v in counts.items() if _as_nc(v, f"{ck}/{pid}")[1] > 0}
        for ck, counts in per_checkpoint.items()
    }


def turnover(a: set, b: set) -> dict[str, float]:
    """How two solved sets differ: sizes, overlap, and turnover = |a ^ b| / |a | b|."""
    union = a | b
    return {
        "n_a": len(a),
        "n_b": len(b),
        "both": len(a & b),
        "only_a": len(a - b),
        "only_b": len(b - a),
        "jaccard": len(a & b) / len(union) if union else 1.0,
        "turnover": len(a ^ b) / len(union) if union else 0.0,
    }


def unique_solves(sets: Mapping[str, set]) -> dict[str, set]:
    """{checkpoint: problems it solves and no other checkpoint in `sets` does}."""
    out = {}
    for ck, s in sets.items():
        others = set().union(*(t for o, t in sets.items() if o != ck)) if len(sets) > 1 else set()
        out[ck] = set(s) - others
    return out


def sigmoid(x: float) -> float:
    """The logistic function, stable for large |x|."""
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))
