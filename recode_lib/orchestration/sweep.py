"""The strictness sweep step (notebook 06; notebook 11 per setting): one GRPO run per nested
reward R_k (plus R_inf) and per static partial-credit reward, per training seed, all from one
start checkpoint; every run evaluated on held-out problems; the sweep's frontier.

    sweep = strictness_sweep("strictness_smoke", [1, 3, "inf"], train, held_out,
                             step_dir(RUN, STRICTNESS_SWEEP), spec=EvalSpec(...),
                             partial=["discrete"], seeds=[0, 1, 2], name_prefix="06_",
                             **recipe_fields(RECIPE_FIELDS, model=start, seed=SEED))
    sweep.frontier["rows"]               # one row per run (analysis.frontier.write_sweep_frontier)
    write_records(OUT, sweep.metrics, sweep.headline)    # metrics.json, headline.json

It adds no training or evaluation of its own (training.launch and evaluation.spec do them).
More: docs/modules/orchestration.md (recode_lib.orchestration.sweep).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from recode_lib.analysis.frontier import write_sweep_frontier
from recode_lib.environments.settings import check_setting
from recode_lib.evaluation.gains import seed_std
from recode_lib.evaluation.spec import evaluate_models
from recode_lib.evaluation.summary import OUTCOMES
from recode_lib.rewards import sweep_rewards
from recode_lib.sandbox.rk import DEFAULT_RK_RULE, check_rule, rule_counts
from recode_lib.training.launch import check_seeds, seed_groups, seeded_variants, train_variants

# what the headline gives a seed spread and a gain over R_inf for (the `correct` share is pass@1)
GAIN_MEASURES = ("pass@1", *(o for o in OUTCOMES if o != "correct"))


def strictness_variants(
    ks: Sequence,
    partial: Sequence[str] = (),
    setting: str | None = None,
    rk_rule: str = DEFAULT_RK_RULE,
) -> tuple[dict[str, object], dict[str, str], dict[str, dict]]:
    """({variant: k}, {variant: partial reward}, train_variants' {variant: recipe fields}) of a
    sweep over `ks` (ints and "inf") and partial-credit kinds (discrete, continuous), R_k read
    under `rk_rule` (recode_lib.sandbox.rk.RK_RULES)."""
    strictness = {f"k{k}": k for k in ks}
    part = {f"partial_{c}": f"partial_{c}" for c in partial}
    both = sorted(set(strictness) & set(part))
    if both:
        raise ValueError(f"strictness sweep: run names {both} are both a k and a partial reward")
    own = {"setting": setting} if setting else {}
    specs = sweep_rewards(ks, partial, rk_rule)  # partial_discrete gets these same finite ks
    variants = {n: {"rewards": [specs[n]], **own} for n in (*strictness, *part)}
    return strictness, part, variants


@dataclass
class StrictnessSweep:
    """What strictness_sweep ran and measured. groups: {variant: {seed: run name}} (seed None
    when the sweep was given no seeds); results/summaries/frontier rows are per run."""

    out_dir: Path
    setting: str | None
    strictness: dict  # variant -> k (an int or "inf")
    partial: dict  # variant -> partial-credit reward
    seeds: list | None
    groups: dict  # variant -> {seed: run}
    results: dict  # run -> training.grpo.TrainResult
    summaries: dict  # run -> evaluation summary
    frontier: dict  # the frontier.json payload
    n_eval: int
    n_samples: int
    rk: dict | None = None  # rk_rule_report: the R_k rule and the problems it decides per k

    @property
    def ks(self) -> list[str]:
        return [str(k) for k in self.strictness.values()]

    def run_rows(self) -> dict[str, dict]:
        return {r["run"]: r for r in self.frontier["rows"]}

    def per_seed(self, key: str) -> dict[str, dict]:
        """{variant: {seed: the frontier row's `key` of that seed's run}}."""
        rows = self.run_rows()
        return {
            v: {s: rows[run][key] for s, run in runs.items()} for v, runs in self.groups.items()
        }

    def strict_variant(self) -> str:
        """The sweep's strictest R_k run: R_inf, else the highest k."""
        return max(self.strictness, key=lambda v: float(self.strictness[v]))

    def gain_rows(self) -> list[dict]:
        """The headline's gains over the strict run as rows (run, measure, gain, seed_std,
        n_seeds) for a table; [] without seeds."""
        gains = self.headline.get("gain_vs_strict", {})
        return [
            {
                "run": v,
                "measure": key,
                "gain": g["gain"],
                "seed_std": g["seed_std"],
                "n_seeds": g["n_seeds"],
            }
            for v, by in gains.items()
            for key, g in by.items()
        ]

    @property
    def metrics(self) -> dict:
        """metrics.json: every run with its k or reward, final/ (and its variant and seed), the
        frontier rows, the seeds (orchestration.endpoints reads the runs and the first seed)."""

        def entry(variant, seed, run, field, value):
            e = {field: value, "final": str(self.results[run].final_dir)}
            return e | ({"variant": variant, "seed": seed} if self.seeds is not None else {})

        out = {
            "runs": {
                run: entry(v, s, run, "k", str(self.strictness[v]))
                for v in self.strictness
                for s, run in self.groups[v].items()
            },
            "partial_runs": {
                run: entry(v, s, run, "reward", self.partial[v])
                for v in self.partial
                for s, run in self.groups[v].items()
            },
            "frontier": self.frontier["rows"],
        }
        if self.rk is not None:
            out["rk_rule"] = self.rk
        if self.setting:
            out["setting"] = self.setting
        if self.seeds is not None:
            out["seeds"] = list(self.seeds)
        return out

    def gain_over(self, variant: str, reference: str, key: str) -> dict:
        """{"gain", "seed_std", "per_seed", "n_seeds"}: `key` of `variant` minus that of
        `reference`, seed by seed (module docstring); per_seed and seed_std None with one seed."""
        a, b = self.per_seed(key)[variant], self.per_seed(key)[reference]
        diffs = [a[s] - b[s] for s in a]
        return {
            "gain": statistics.fmean(diffs),
            "seed_std": seed_std(diffs),
            "per_seed": diffs if len(diffs) > 1 else None,
            "n_seeds": len(diffs),
        }

    @property
    def headline(self) -> dict:
        """headline.json: per variant, pass@1 and the outcome shares averaged over its seeds;
        with seeds, each variant's seed_std and its gains over the strict run (gain_over)."""
        keys = ("pass@1", *OUTCOMES)
        spread = GAIN_MEASURES
        values = {key: self.per_seed(key) for key in keys}
        mean = {
            key: {v: statistics.fmean(vals.values()) for v, vals in values[key].items()}
            for key in keys
        }
        out = {
            "runs": list(self.strictness),
            "partial_runs": list(self.partial),
            "ks": self.ks,
            "n_eval": self.n_eval,
            "n_samples": self.n_samples,
            "pass@1": mean["pass@1"],
            "outcomes": {v: {o: mean[o][v] for o in OUTCOMES} for v in self.groups},
        }
        if self.setting:
            out["setting"] = self.setting
        if self.seeds is not None:
            strict = self.strict_variant()
            out |= {
                "seeds": list(self.seeds),
                "seed_runs": {
                    v: {str(s): run for s, run in runs.items()} for v, runs in self.groups.items()
                },
                "seed_std": {
                    v: {key: seed_std(list(values[key][v].values())) for key in spread}
                    for v in self.groups
                },
                "strict_run": strict,
                "gain_vs_strict": {
                    v: {key: self.gain_over(v, strict, key) for key in spread}
                    for v in self.groups
                    if v != strict
                },
            }
        return out


def rk_rule_report(rule: str, ks: Sequence, train_problems, eval_problems) -> dict:
    """{"rule", "train": {k: counts}, "eval": {k: counts}}: the R_k rule a sweep trains with and,
    per finite k, how many of its training and evaluation problems the rule decides (no test
    below 10^k: recode_lib.sandbox.rk.rule_counts)."""
    check_rule(rule)
    return {
        "rule": rule,
        "train": rule_counts(tests_of(train_problems), ks),
        "eval": rule_counts(tests_of(eval_problems), ks),
    }


def tests_of(problems) -> list[dict]:
    """The tests of the problems that have any (a stand-in without tests is not counted)."""
    return [t for t in (getattr(p, "tests", None) for p in problems) if t]


def rk_rule_lines(report: dict) -> list[str]:
    """rk_rule_report as lines to print: the rule, then per k the count and share of training
    and evaluation problems it decides."""
    other = (
        "literal: R_k = 1, vacuously"
        if report["rule"] == "smallest"
        else "smallest: judged on the smallest tests"
    )
    lines = [
        f"R_k rule {report['rule']!r} (problems with no test below 10^k; the other reading, "
        f"{other})"
    ]
    for k in report["train"]:
        tr, ev = (
            report["train"][k],
            report["eval"].get(k, {"touched": 0, "problems": 0, "share": 0.0}),
        )
        lines.append(
            f"  k={k}: training {tr['touched']}/{tr['problems']} ({tr['share']:.1%}), "
            f"evaluation {ev['touched']}/{ev['problems']} ({ev['share']:.1%})"
        )
    return lines


def strictness_sweep(
    recipe: str | Path,
    ks: Sequence,
    train_problems,
    eval_problems,
    out_dir,
    *,
    spec,
    partial: Sequence[str] = (),
    seeds=None,
    setting: str | None = None,
    name_prefix: str = "",
    launcher: str = "inprocess",
    num_processes: int = 1,
    extra: dict | None = None,
    log=print,
    rk_rule: str = DEFAULT_RK_RULE,
    **overrides,
) -> StrictnessSweep:
    """Train, evaluate and write the sweep's frontier (module docstring). `overrides` are recipe
    fields for every run (their `benchmark` also names the evaluation's); `seeds` a list or a
    comma-separated string (a notebook's SEEDS), None for one run per variant; `rk_rule` how R_k
    reads a problem with no test below 10^k (recorded with its counts: rk_rule_report, in the
    frontier and the metrics, "rk_rule")."""
    if setting is not None:
        check_setting(setting)
        spec = spec.replace(setting=setting)
    seeds = check_seeds(seeds) if seeds is not None else None
    strictness, part, variants = strictness_variants(ks, partial, setting, rk_rule)
    rk = rk_rule_report(rk_rule, ks, train_problems, eval_problems)
    if seeds is not None:
        groups = seed_groups(variants, seeds)
        variants = seeded_variants(variants, seeds)
    else:
        groups = {v: {None: v} for v in variants}
    out_dir = Path(out_dir)
    benchmark = overrides.get("benchmark")
    results = train_variants(
        recipe,
        variants,
        train_problems,
        out_dir,
        name_prefix=name_prefix,
        launcher=launcher,
        num_processes=num_processes,
        log=log,
        **overrides,
    )
    summaries = evaluate_models(
        {run: results[run].final_dir for run in variants},
        eval_problems,
        spec,
        out_dir / "eval",
        benchmark=benchmark,
    )
    run_k = {run: strictness[v] for v in strictness for run in groups[v].values()}
    run_partial = {run: part[v] for v in part for run in groups[v].values()}
    record = {
        "benchmark": benchmark,
        "eval_problems": [p.id for p in eval_problems],
        "sampling": spec.sampling().to_dict(),
        "rk_rule": rk,
    }
    if setting:
        record["setting"] = setting
    if seeds is not None:
        record |= {
            "seeds": seeds,
            "seed_runs": {v: {str(s): r for s, r in runs.items()} for v, runs in groups.items()},
        }
    frontier = write_sweep_frontier(
        out_dir, summaries, run_k, partial=run_partial, spec=spec, extra=record | dict(extra or {})
    )
    return StrictnessSweep(
        out_dir,
        setting,
        strictness,
        part,
        seeds,
        groups,
        results,
        summaries,
        frontier,
        len(eval_problems),
        spec.n,
        rk,
    )
