"""The alpha-grid step (notebook 07; notebook 11 per setting): theta_alpha between two endpoints
for every alpha of a grid, evaluated in memory with one live model; the sweep's other runs
evaluated beside them with the same spec and n; the frontier along alpha.

    ends = choose_endpoints("sweep", step_dir(RUN, STRICTNESS_SWEEP), ...)  # .endpoints
    grid = alpha_grid(ends, [-1, 0, 0.5, 1, 2], problems, spec, OUT / ends.source, OUT,
                      runs=sweep_runs(sweep_dir, grid=alphas), benchmark="microbench")
    grid.frontier["rows"], grid.result.summaries[0.5], grid.runs["k2"]
    write_records(OUT, grid.metrics, grid.headline)

Paper B: "theta_alpha = alpha * theta_high + (1 - alpha) * theta_low; interpolation for alpha
in [0, 1], extrapolation outside it" (low: the lenient endpoint, high: the strict one).
Under work_dir: eval/alpha_<a> (weights.sweep.sweep_alphas: the setting's loop when the spec has
one), runs/<run> (evaluation.spec.evaluate_models: the best-single candidates of notebook 08),
merged/alpha_<a> only for `save_alphas`. Into out_dir: frontier.json/.csv
(analysis.frontier.write_frontier over exactly these problems' records, read back with
load_alpha_samples, so a stale folder raises) with the endpoints, the eval folders, the run
names, the spec, the load/push/evaluate seconds and `extra`. The returned AlphaGrid holds the
step's metrics (metrics.json) and headline (headline.json). Resumable as its calls are (a
cached alpha needs no model load). It adds no evaluation or statistics of its own.

seed_replicas: a sweep trained with several seeds has a pair of endpoints per seed; the grid of
the first seed is alpha_grid's, and seed_replicas evaluates the same grid between each other
seed's endpoints (out_dir/seed<s>/: its own frontier.json), with the same spec and problems:
a claim read off the frontier is then replicated on an independent training run, not repeated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from recode_lib.analysis.frontier import load_alpha_samples, write_frontier
from recode_lib.evaluation.spec import evaluate_models
from recode_lib.orchestration.endpoints import Endpoints, sweep_endpoints, sweep_seeds
from recode_lib.weights.sweep import SweepResult, sweep_alphas


@dataclass
class AlphaGrid:
    """What alpha_grid evaluated: the endpoints, the grid, weights.sweep's SweepResult (per-alpha
    summaries, saved checkpoints, seconds), the runs evaluated beside it ({run: summary}), the
    frontier payload and what the records need."""

    endpoints: Endpoints
    alphas: list
    result: SweepResult
    runs: dict
    frontier: dict
    spec: object
    n_problems: int
    work_dir: Path
    difficulty: str | None = None
    provenance: dict | None = field(default=None, repr=False)

    @property
    def pass_at_1(self) -> dict:
        return {repr(a): self.result.summaries[a]["pass@1"] for a in self.alphas}

    @property
    def metrics(self) -> dict:
        """metrics.json: endpoints, grid, seconds, saved checkpoints, spec fingerprint, pass@1 of
        every alpha and run, the problem set, format errors, turnover, provenance."""
        f = self.frontier
        return {
            "endpoints": self.endpoints.source,
            "low": str(self.endpoints.low),
            "high": str(self.endpoints.high),
            "alphas": self.alphas,
            "sweep_seconds": self.result.seconds,
            "saved": {repr(a): str(p) for a, p in self.result.saved.items()},
            "spec_fingerprint": self.spec.fingerprint(),
            "eval_dir": str(self.work_dir / "eval"),
            "pass@1": self.pass_at_1,
            "runs_pass@1": {n: s["pass@1"] for n, s in self.runs.items()},
            "problem_set": f["problem_set"],
            "difficulty": self.difficulty,
            "format_error_rise": f["format_error_rise"],
            "turnover": f["turnover"],
            "provenance": self.provenance,
        }

    @property
    def headline(self) -> dict:
        """headline.json: pass@1 and the format-error share per alpha, the budget-matched
        turnover excess between neighbouring alphas with its interval, the runs beside it."""
        f = self.frontier
        return {
            "endpoints": self.endpoints.source,
            "alphas": self.alphas,
            "n_problems": self.n_problems,
            "n_samples": self.spec.n,
            "difficulty": self.difficulty,
            "problem_set": f["problem_set"],
            "runs": sorted(self.runs),
            "pass@1": self.pass_at_1,
            "turnover_excess": {
                f"{t['alpha_a']!r}->{t['alpha_b']!r}": [
                    t["turnover_excess"],
                    t["turnover_excess_lo"],
                    t["turnover_excess_hi"],
                ]
                for t in f["turnover"]
            },
            "format_error": {repr(r["alpha"]): r["format_error"] for r in f["rows"]},
        }


def alpha_grid(
    endpoints: Endpoints,
    alphas: Sequence[float],
    problems,
    spec,
    work_dir,
    out_dir,
    *,
    runs: dict | None = None,
    earlier: dict | None = None,
    benchmark: str | None = None,
    threshold: float = 2.0,
    save_alphas: Sequence[float] = (),
    difficulty: str | None = None,
    provenance: dict | None = None,
    extra: dict | None = None,
    log=print,
) -> AlphaGrid:
    """Evaluate the grid and the runs, write the frontier (module docstring). `runs`: {name:
    checkpoint} evaluated beside the grid (orchestration.endpoints.sweep_runs); `earlier`: {name:
    the folder where the sweep evaluated that run} (orchestration.endpoints.sweep_evaluations),
    whose samples are reused when drawn with this spec on these problems (evaluate_models)."""
    alphas = sorted({float(a) for a in alphas})
    work_dir, runs = Path(work_dir), dict(runs or {})
    low, high = endpoints.low, endpoints.high
    if log:
        log(
            f"endpoints ({endpoints.source}): alpha grid {alphas} between\n"
            f"  low  (alpha=0, lenient): {low}\n  high (alpha=1, strict):  {high}"
        )
    res = sweep_alphas(
        low,
        high,
        alphas,
        problems,
        spec,
        work_dir / "eval",
        benchmark=benchmark,
        save_alphas=save_alphas,
        save_dir=work_dir / "merged",
        log=log,
    )
    run_summaries = evaluate_models(
        runs, problems, spec, work_dir / "runs", benchmark=benchmark, earlier=earlier
    )
    everything = load_alpha_samples(work_dir / "eval", problems=[p.id for p in problems], n=spec.n)
    frontier = write_frontier(
        out_dir,
        {a: everything[a] for a in alphas},
        threshold=threshold,
        spec=spec,
        extra={
            "endpoints": endpoints.record(),
            "eval_dir": str(work_dir / "eval"),
            "alphas": alphas,
            "benchmark": benchmark,
            "difficulty": difficulty,
            "sampling": spec.sampling().to_dict(),
            "n_samples": spec.n,
            "runs": sorted(runs),
            "runs_eval_dir": str(work_dir / "runs"),
            "sweep_seconds": res.seconds,
            **(extra or {}),
        },
    )
    return AlphaGrid(
        endpoints,
        alphas,
        res,
        run_summaries,
        frontier,
        spec,
        len(problems),
        work_dir,
        difficulty,
        provenance,
    )


def seed_replicas(
    sweep_dir,
    alphas: Sequence[float],
    problems,
    spec,
    out_dir,
    *,
    benchmark: str | None = None,
    threshold: float = 2.0,
    difficulty: str | None = None,
    provenance: dict | None = None,
    log=print,
) -> dict[int, AlphaGrid]:
    """{seed: AlphaGrid} for every seed of the sweep after its first: alpha_grid between that
    seed's endpoints (sweep_endpoints(sweep_dir, seed)), work and frontier in
    out_dir/seed<s>/ (no best-single runs beside it: the first seed's grid has them). {} for a
    sweep of one seed."""
    out = {}
    for s in sweep_seeds(sweep_dir)[1:]:
        low, high = sweep_endpoints(sweep_dir, seed=s)
        where = Path(out_dir) / f"seed{s}"
        out[s] = alpha_grid(
            Endpoints("sweep", low, high),
            alphas,
            problems,
            spec,
            where,
            where,
            benchmark=benchmark,
            threshold=threshold,
            difficulty=difficulty,
            provenance=provenance,
            extra={"seed": s},
            log=log,
        )
    return out
