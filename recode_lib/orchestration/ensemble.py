"""The ensemble step (notebook 08; notebook 11 per setting): pass@k pools along an alpha grid's
frontier at a matched sample budget, against the best single checkpoint of every evaluated one.

    ens = ensemble_step(step_dir(RUN, WEIGHT_AVERAGING) / "frontier.json", OUT, [1, 2, 4],
                        stable=(-1.0, 2.0), n_boot=1000, seed=0)
    ens.payload["gain_extended_vs_best"], ens.payload["extrapolated_unique"]
    write_records(OUT, None, ens.headline)

Paper B: "ensembling checkpoints along the extended frontier beats the best single checkpoint
on LCB-hard pass@250 by 3.3% at a matched sample budget". It reads the alpha grid's
frontier.json (orchestration.alpha) and the per-sample records it points to, kept to the problem
set and n it records (analysis.frontier.load_alpha_samples / load_run_samples: a stale folder
raises), counts them (analysis.ensemble) and writes out_dir/passk.json
(analysis.ensemble.write_ensemble) with the frontier it came from, its endpoints and `extra`.
Raises ValueError when the largest k exceeds the samples per checkpoint. The returned
EnsembleStep holds the payload and the step's headline (headline.json). It adds no statistics
of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from recode_lib.analysis.ensemble import counts_by_alpha, counts_by_run, write_ensemble
from recode_lib.analysis.frontier import load_alpha_samples, load_run_samples
from recode_lib.core.jsonl import read_json


@dataclass
class EnsembleStep:
    """The passk.json payload, the frontier it read, and the counts it pooled."""

    payload: dict
    frontier: dict
    counts: dict  # alpha -> {problem: (n, correct)}
    runs: dict  # run -> {problem: (n, correct)}

    @property
    def n_problems(self) -> int:
        return len(next(iter(self.counts.values())))

    @property
    def headline(self) -> dict:
        """headline.json: the pools, pass per pool and k, the best single checkpoint and its
        candidates, the paired gains, the budget-matched unique extrapolated solves."""
        p = self.payload
        u = p["extrapolated_unique"]
        return {
            "pools": p["pools"],
            "ks": p["ks"],
            "n_alphas": len(self.counts),
            "n_problems": self.n_problems,
            "runs": sorted(self.runs),
            "best_single": p["pools"]["best_single"][0],
            "best_single_candidates": p["best_single_candidates"],
            "problem_set": self.frontier.get("problem_set"),
            "pass": {f"{r['pool']}@{r['k']}": r["pass"] for r in p["rows"]},
            "gain_extended_vs_best": p["gain_extended_vs_best"],
            "gain_interp_vs_best": p["gain_interp_vs_best"],
            "extrapolated_unique": {k: v for k, v in u.items() if k != "unmatched"},
            "extrapolated_unique_unmatched": u["unmatched"]["n_unique"],
        }


def ensemble_step(
    frontier_path: str | Path,
    out_dir,
    ks: Sequence[int],
    *,
    stable: tuple[float, float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    extra: dict | None = None,
) -> EnsembleStep:
    """Pool the alpha grid that frontier_path describes (module docstring)."""
    frontier_path = Path(frontier_path)
    front = read_json(frontier_path)
    ids, n = front.get("problem_ids"), front.get("n_samples")  # what the grid evaluated
    everything = load_alpha_samples(front["eval_dir"], problems=ids, n=n)
    counts = counts_by_alpha({a: everything[a] for a in front["alphas"]})
    runs = (
        counts_by_run(load_run_samples(front["runs_eval_dir"], front["runs"], problems=ids, n=n))
        if front.get("runs")
        else {}
    )
    ks = sorted({int(k) for k in ks})
    n_min = min(m for c in (counts | runs).values() for m, _ in c.values())
    if ks[-1] > n_min:
        raise ValueError(
            f"{frontier_path}: pass@{ks[-1]} needs >= {ks[-1]} samples per checkpoint "
            f"for the best-single pool; the alpha grid has {n_min} (raise its n: "
            "07's N_SAMPLES, 11's ALPHA_N_SAMPLES)"
        )
    payload = write_ensemble(
        out_dir,
        counts,
        ks,
        stable=stable,
        n_boot=n_boot,
        seed=seed,
        runs=runs,
        extra={"source": str(frontier_path), "endpoints": front["endpoints"], **(extra or {})},
    )
    return EnsembleStep(payload, front, counts, runs)
