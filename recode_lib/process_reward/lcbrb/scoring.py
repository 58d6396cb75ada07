"""Reward-model evaluation on preference pairs: the trained RM and LLM-judge baselines, one table.

    methods = {"crpl_rm": rm_method(ProcessRewardScorer(path)),
               "judge_pointwise": pointwise_method(PointwiseJudge(gen)),
               "judge_pairwise": pairwise_method(PairwiseJudge(gen)),
               "longer_trace": length_method("longer")}     # a no-model sanity baseline
    table = evaluate_methods(pairs, methods, n_boot=2000, seed=0)   # list of row dicts
    table = evaluate_datasets({"lcb_rb": pairs, "synthetic_val": val}, methods)   # + "dataset"

It does not train or load models itself.
More: docs/modules/process_reward.md (recode_lib.process_reward.lcbrb.scoring).
"""

from __future__ import annotations

import time
from collections import defaultdict

from recode_lib.metrics import TIE, bootstrap_ci, is_tie, preference_from_vote

HEADLINE_TIE_RULE = "half"  # the headline accuracy counts a tie as 0.5; "strict" beside it
TIE_RULE_ANCHOR = (
    "RewardBench (Lambert et al. 2024, github.com/allenai/reward-bench): "
    "scripts/run_generative.py scores a judge's tie or unparsable verdict 0.5 "
    "('effectively a tie'); scripts/run_rm.py scores a classifier RM "
    "'1 if chosen > rejected else 0', where continuous scores almost never tie"
)
TIE_RULE = {
    "headline": HEADLINE_TIE_RULE,
    "headline_key": "accuracy_ties_half",
    "beside": "strict",
    "beside_key": "accuracy",
    "anchor": TIE_RULE_ANCHOR,
}


def _outcome(a, b) -> float:
    """The vote of two scores (better side first): 1.0, 0.0 or TIE."""
    if is_tie(a, b):
        return TIE
    return 1.0 if a > b else 0.0


def rm_method(scorer):
    def run(prompts, chosen, rejected):
        sc = scorer.score(prompts + prompts, chosen + rejected)
        n = len(prompts)
        return [_outcome(sc[i], sc[n + i]) for i in range(n)]

    run.parse_failures = lambda: 0
    return run


def pointwise_method(judge):
    def run(prompts, chosen, rejected):
        sc = judge.score(prompts + prompts, chosen + rejected)
        n = len(prompts)
        return [_outcome(sc[i], sc[n + i]) for i in range(n)]

    run.parse_failures = lambda: judge.parse_failures
    return run


def pairwise_method(judge):
    def run(prompts, chosen, rejected):
        return judge.compare(prompts, chosen, rejected)

    run.parse_failures = lambda: judge.parse_failures
    return run


def length_method(prefer: str = "longer"):
    """Prefer the longer (or shorter) trace, by characters; equal lengths tie."""
    if prefer not in ("longer", "shorter"):
        raise ValueError(f"prefer must be 'longer' or 'shorter', got {prefer!r}")
    sign = 1 if prefer == "longer" else -1

    def run(prompts, chosen, rejected):
        return [
            _outcome(sign * len(c), sign * len(r)) for c, r in zip(chosen, rejected, strict=True)
        ]

    run.parse_failures = lambda: 0
    return run


def tie_half(vote) -> float:
    """A vote scored with a tie (TIE or None: not ordered) as 0.5, else 1 for the better side
    preferred and 0 for the worse."""
    return TIE if vote is None or vote == TIE else float(preference_from_vote(vote))


def _row(name, outcomes, n_boot, seed, extra):
    mean, lo, hi = bootstrap_ci(
        [preference_from_vote(o) for o in outcomes], n_boot=n_boot, seed=seed
    )
    half, hlo, hhi = bootstrap_ci([tie_half(o) for o in outcomes], n_boot=n_boot, seed=seed)
    return {
        "method": name,
        "n": len(outcomes),
        "accuracy": mean,
        "ci_low": lo,
        "ci_high": hi,
        "ties": sum(o is None or o == TIE for o in outcomes),
        "accuracy_ties_half": half,
        "ci_low_ties_half": hlo,
        "ci_high_ties_half": hhi,
        "accuracy_headline": half,
        "ci_low_headline": hlo,
        "ci_high_headline": hhi,
        "tie_rule": HEADLINE_TIE_RULE,
        **extra,
    }


def evaluate_methods(
    pairs, methods: dict, *, n_boot: int = 2000, seed: int = 0, by_type: bool = True
) -> list[dict]:
    """One row per method (pair_type "all"), plus one per method and pair_type when by_type."""
    if not pairs:
        raise ValueError("evaluate_methods: no pairs")
    for i, p in enumerate(pairs):
        for k in ("prompt", "chosen", "rejected"):
            if not isinstance(p.get(k), str):
                raise ValueError(f"pair {p.get('id', i)!r}: field {k!r} missing or not a string")
    prompts = [p["prompt"] for p in pairs]
    chosen = [p["chosen"] for p in pairs]
    rejected = [p["rejected"] for p in pairs]
    rows = []
    for name, fn in methods.items():
        before = fn.parse_failures() if hasattr(fn, "parse_failures") else 0
        t0 = time.perf_counter()
        outcomes = fn(prompts, chosen, rejected)
        secs = time.perf_counter() - t0
        if len(outcomes) != len(pairs):
            raise ValueError(
                f"method {name!r} returned {len(outcomes)} outcomes for {len(pairs)} pairs"
            )
        fails = (fn.parse_failures() if hasattr(fn, "parse_failures") else 0) - before
        rows.append(
            _row(
                name,
                outcomes,
                n_boot,
                seed,
                {
                    "pair_type": "all",
                    "parse_failures": fails,
                    "seconds": secs,
                    "pairs_per_second": len(pairs) / secs if secs > 0 else None,
                },
            )
        )
        if by_type:
            groups = defaultdict(list)
            for p, o in zip(pairs, outcomes, strict=True):
                groups[p.get("pair_type") or "all"].append(o)
            if len(groups) > 1:
                for t, outs in sorted(groups.items()):
                    rows.append(_row(name, outs, n_boot, seed, {"pair_type": t}))
    return rows


def evaluate_datasets(
    datasets: dict, methods: dict, *, n_boot: int = 2000, seed: int = 0, log=print
) -> list[dict]:
    """evaluate_methods over several pair sets ({name: pairs}); each row gains "dataset". An
    empty set is skipped (logged), not an error."""
    rows = []
    for name, pairs in datasets.items():
        if not pairs:
            if log:
                log(f"{name}: no pairs, not evaluated")
            continue
        rows += [
            {"dataset": name, **r}
            for r in evaluate_methods(pairs, methods, n_boot=n_boot, seed=seed)
        ]
    return rows
