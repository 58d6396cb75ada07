"""pass@k against exact combinatorics; ensemble pass@k against brute-force enumeration."""

import itertools
import math
from fractions import Fraction

import pytest

from recode_lib import metrics as M


def exact_pass_at_k(n, c, k):
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def test_pass_at_k_matches_exact_combinatorics():
    for n in range(1, 25):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert M.pass_at_k(n, c, k) == pytest.approx(
                    float(exact_pass_at_k(n, c, k)), abs=1e-12
                )


def test_pass_at_k_large_n_is_stable():
    # C(1000, 500) overflows a float; the product form does not
    n, c, k = 1000, 3, 500
    exact = exact_pass_at_k(n, c, k)
    assert M.pass_at_k(n, c, k) == pytest.approx(float(exact), rel=1e-9)
    assert M.pass_at_k(10_000, 0, 100) == 0.0
    assert M.pass_at_k(10_000, 1, 1) == pytest.approx(1e-4)


def test_pass_at_k_edges_and_errors():
    assert M.pass_at_k(5, 5, 5) == 1.0
    assert M.pass_at_k(5, 0, 5) == 0.0
    assert M.pass_at_k(10, 3, 1) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="undefined"):
        M.pass_at_k(3, 0, 5)  # the common snippet returns 1.0 here
    with pytest.raises(ValueError):
        M.pass_at_k(5, 6, 1)
    with pytest.raises(ValueError):
        M.pass_at_k(5, 1, 0)
    with pytest.raises(TypeError):
        M.pass_at_k(5.0, 1, 1)


def test_pass_at_k_table_and_counts():
    rows = [
        {"problem_id": "a", "outcome": "correct"},
        {"problem_id": "a", "outcome": "x"},
        {"problem_id": "b", "outcome": "correctness_failure"},
        {"problem_id": "b", "outcome": "correct"},
        {"problem_id": "b", "outcome": "correct"},
    ]
    counts = M.counts_from_records(rows)
    assert counts == {"a": (2, 1), "b": (3, 2)}
    table = M.pass_at_k_table(counts, ks=(1, 2))
    assert table["pass@1"] == pytest.approx((0.5 + 2 / 3) / 2)
    assert table["pass@2"] == pytest.approx((1.0 + 1.0) / 2)
    with pytest.raises(ValueError, match="'a'"):
        M.pass_at_k_table(counts, ks=(3,))
    with pytest.raises(KeyError):
        M.counts_from_records([{"id": 1}])


def brute_force_ensemble(counts, alloc):
    """Enumerate every combination of draws from every checkpoint."""
    per_ck = []
    for (n, c), b in zip(counts, alloc, strict=True):
        samples = [1] * c + [0] * (n - c)
        per_ck.append(
            [any(samples[i] for i in comb) for comb in itertools.combinations(range(n), b)]
        )
    total, hit = 0, 0
    for outcome in itertools.product(*per_ck):
        total += 1
        hit += any(outcome)
    return Fraction(hit, total)


@pytest.mark.parametrize(
    "counts,budget",
    [
        ([(4, 1), (5, 0)], 4),
        ([(4, 1), (5, 2)], 5),  # uneven split: 3 + 2
        ([(3, 0), (4, 1), (4, 2)], 6),
        ([(6, 2)], 3),
        ([(3, 0), (3, 0)], 4),
    ],
)
def test_ensemble_matches_brute_force(counts, budget):
    alloc = M.split_budget(budget, len(counts))
    assert M.ensemble_pass_at_k(counts, budget) == pytest.approx(
        float(brute_force_ensemble(counts, alloc)), abs=1e-12
    )


def test_ensemble_single_checkpoint_is_pass_at_k_and_allocation_checks():
    assert M.ensemble_pass_at_k([(10, 3)], 4) == pytest.approx(M.pass_at_k(10, 3, 4))
    assert M.ensemble_pass_at_k([(4, 0), (4, 4)], 2, allocation=[2, 0]) == 0.0
    with pytest.raises(ValueError, match="checkpoint 0"):
        M.ensemble_pass_at_k([(2, 1), (10, 1)], 8)
    with pytest.raises(ValueError, match="sums"):
        M.ensemble_pass_at_k([(4, 0), (4, 4)], 3, allocation=[2, 2])


def test_ensemble_beats_single_when_solves_differ():
    # two checkpoints that solve disjoint problems: the pool solves both at the same budget
    a = {"p1": (10, 5), "p2": (10, 0)}
    b = {"p1": (10, 0), "p2": (10, 5)}
    single = max(
        M.pass_at_k_table(a, ks=(10,))["pass@10"], M.pass_at_k_table(b, ks=(10,))["pass@10"]
    )
    pooled = M.ensemble_pass_at_k_mean({"a": a, "b": b}, budget=10)
    assert single == 0.5 and pooled > 0.99
    with pytest.raises(ValueError, match="different problems"):
        M.ensemble_pass_at_k_mean({"a": a, "b": {"p1": (10, 1)}}, budget=2)


def test_bootstrap_ci_contains_mean_and_is_seeded():
    vals = [0.0] * 50 + [1.0] * 50
    m, lo, hi = M.bootstrap_ci(vals, n_boot=500, seed=1)
    assert m == 0.5 and lo < 0.5 < hi and hi - lo < 0.3
    assert M.bootstrap_ci(vals, n_boot=500, seed=1) == (m, lo, hi)
    assert M.bootstrap_ci([1.0, 1.0, 1.0], n_boot=100) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        M.bootstrap_ci([])


def test_solved_sets_turnover_unique():
    sets = M.solved_sets(
        {
            "a": {"p1": (4, 1), "p2": (4, 0), "p3": (4, 2)},
            "b": {"p1": (4, 0), "p2": (4, 3), "p3": (4, 1)},
        }
    )
    assert sets == {"a": {"p1", "p3"}, "b": {"p2", "p3"}}
    t = M.turnover(sets["a"], sets["b"])
    assert t["both"] == 1 and t["only_a"] == 1 and t["only_b"] == 1
    assert t["turnover"] == pytest.approx(2 / 3) and t["jaccard"] == pytest.approx(1 / 3)
    assert M.unique_solves(sets) == {"a": {"p1"}, "b": {"p2"}}


def test_per_problem_pass_at_k_is_each_problems_estimate_and_names_a_short_problem():
    from recode_lib.metrics import pass_at_k, per_problem_pass_at_k

    assert per_problem_pass_at_k({"a": (4, 1), "b": (4, 4)}, 2) == [pass_at_k(4, 1, 2), 1.0]
    with pytest.raises(ValueError, match="'b'"):
        per_problem_pass_at_k({"a": (4, 1), "b": (1, 0)}, 2)
