"""The failure-conditioned repair experiment (notebook 09): online training rounds, then the
held-out comparison of original pass@1 and repair rate per failure class.

    spec = EvalSpec(temperature=0.8, n=2, max_new_tokens=256, on_config_change="set_aside")
    results, reports = train_repair_rounds(start, train_problems, tasks, report, rounds=2,
                                           spec=spec, recipe="repair_smoke", reward="outcome_only",
                                           out_dir=OUT, max_steps=2, max_per_problem=2, seed=0,
                                           fields=recipe_fields(RECIPE_FIELDS, seed=0))
    rows = compare_repair({"start": start, **finals}, eval_problems, eval_tasks, spec, OUT,
                          max_per_problem=2, n_boot=1000, seed=0)
    table = repair_table(rows)     # one row per model: pass@1, repair on start's / own failures

It does not choose the problems or draw figures.
More: docs/modules/training.md (recode_lib.training.repair_rounds).
"""

from __future__ import annotations

from pathlib import Path

from recode_lib.training.launch import train_variants
from recode_lib.training.repair import FAILURES, repair_rates, repair_tasks


def train_repair_rounds(
    start,
    train_problems,
    first_tasks,
    first_report,
    *,
    rounds: int,
    spec,
    recipe: str,
    reward: str,
    out_dir,
    max_steps: int,
    max_per_problem: int,
    seed: int,
    fields: dict | None = None,
    launcher: str = "inprocess",
    num_processes: int = 1,
    name_prefix: str = "09_",
    log=print,
):
    """({"original_only": TrainResult, "failure_conditioned": the last round's}, {"round<r>":
    repair-task report}); `fields` are recipe fields shared by every run (model, rewards and
    max_steps are set per run)."""
    out_dir = Path(out_dir)
    kw = dict(
        name_prefix=name_prefix,
        launcher=launcher,
        num_processes=num_processes,
        log=log,
        **dict(fields or {}),
    )
    rewards = [{"name": reward}]
    results = train_variants(
        recipe,
        {
            "original_only": {
                "model": str(start),
                "rewards": rewards,
                "max_steps": max_steps * rounds,
            }
        },
        train_problems,
        out_dir,
        **kw,
    )
    policy, tasks, reports = start, list(first_tasks), {"round1": first_report}
    for r in range(1, rounds + 1):
        if r > 1:  # online correction: the current policy's own failures
            _, attempts = spec.evaluate_with_samples(
                policy, train_problems, out_dir / "eval" / f"failure_conditioned_r{r}" / "train"
            )
            tasks, reports[f"round{r}"] = repair_tasks(
                train_problems, attempts, max_per_problem=max_per_problem, seed=seed + r
            )
        name = f"failure_conditioned_r{r}"
        run = train_variants(
            recipe,
            {name: {"model": str(policy), "rewards": rewards, "max_steps": max_steps}},
            list(train_problems) + list(tasks),
            out_dir,
            **kw,
        )[name]
        results["failure_conditioned"] = run
        policy = run.final_dir
    return results, reports


def compare_repair(
    models: dict,
    eval_problems,
    eval_tasks,
    spec,
    out_dir,
    *,
    max_per_problem: int = 2,
    n_boot: int = 1000,
    seed: int = 0,
) -> list[dict]:
    """One row per model: original pass@1 (with CI and outcome classes) on the held-out
    problems; `repair`: the repair rates per failure class on `eval_tasks` (the start model's
    held-out failures); `repair_own`: the same on the model's own held-out failures
    (repair_tasks of its attempts with max_per_problem and seed, as eval_tasks were built;
    `own_tasks` counts them). Rates are empty without tasks. Evaluations in
    out_dir/eval/<model>/{original,repair,repair_own}; own tasks identical to eval_tasks are
    not evaluated twice."""
    rows = []
    start_ids = [t.id for t in eval_tasks]
    for name, model in models.items():
        folder = Path(out_dir) / "eval" / name
        orig, attempts = spec.evaluate_with_samples(model, eval_problems, folder / "original")
        own_tasks, own_report = repair_tasks(
            eval_problems, attempts, max_per_problem=max_per_problem, seed=seed
        )
        rates = {}
        if eval_tasks:
            _, rep_rows = spec.evaluate_with_samples(model, eval_tasks, folder / "repair")
            rates = repair_rates(eval_tasks, rep_rows, n_boot=n_boot, seed=seed)
        own = {}
        if own_tasks and [t.id for t in own_tasks] == start_ids:
            own = rates
        elif own_tasks:
            _, own_rows = spec.evaluate_with_samples(model, own_tasks, folder / "repair_own")
            own = repair_rates(own_tasks, own_rows, n_boot=n_boot, seed=seed)
        rows.append(
            {
                "model": name,
                "original_pass@1": orig["pass@1"],
                "original_ci": orig["pass@1_ci"],
                "original_outcomes": orig["outcomes"],
                "repair": rates,
                "repair_own": own,
                "own_tasks": own_report,
            }
        )
    return rows


def compare_repair_protocol(
    models: dict,
    eval_problems,
    spec,
    out_dir,
    *,
    start: str = "start",
    max_per_problem: int = 2,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict:
    """compare_repair under `spec` on `eval_problems` (e.g. paper B's protocol on the hard
    held-out problems), the held-out repair tasks built from models[start]'s attempts under
    that same spec: {"rows", "eval_tasks" (repair_tasks' report), "n_eval", "n_eval_tasks",
    "sampling", "protocol"}. ValueError when there is no problem (e.g. none of that
    difficulty)."""
    if not eval_problems:
        raise ValueError(
            "compare_repair_protocol: no held-out problem under this protocol "
            "(is there any of the requested difficulty?)"
        )
    if start not in models:
        raise KeyError(f"compare_repair_protocol: no start model {start!r} in {list(models)}")
    _, attempts = spec.evaluate_with_samples(
        models[start], eval_problems, Path(out_dir) / "eval" / start / "original"
    )
    tasks, report = repair_tasks(
        eval_problems, attempts, max_per_problem=max_per_problem, seed=seed
    )
    rows = compare_repair(
        models,
        eval_problems,
        tasks,
        spec,
        out_dir,
        max_per_problem=max_per_problem,
        n_boot=n_boot,
        seed=seed,
    )
    return {
        "rows": rows,
        "eval_tasks": report,
        "n_eval": len(eval_problems),
        "n_eval_tasks": len(tasks),
        "sampling": spec.sampling().to_dict(),
        "protocol": spec.protocol(),
    }


REPAIR_SETS = {"repair": "start's failures", "repair_own": "own failures"}


def repair_table(rows: list[dict]) -> list[dict]:
    """compare_repair's rows as table records, one per model: original pass@1, then for the
    start model's failures and the model's own failures side by side the overall repair rate,
    its interval and n (repair samples), then the rate per failure class on each set
    (None where a set has no task of that class)."""
    classes = [
        c for c in FAILURES if any(c in (r.get(key) or {}) for r in rows for key in REPAIR_SETS)
    ]
    out = []
    for r in rows:
        rec = {"model": r["model"], "original pass@1": r["original_pass@1"]}
        for key, label in REPAIR_SETS.items():
            v = (r.get(key) or {}).get("all") or {}
            rec[f"repair ({label})"] = v.get("repair_rate")
            rec[f"repair CI ({label})"] = [v["ci_low"], v["ci_high"]] if v else None
            rec[f"n ({label})"] = v.get("n", 0)
        for c in classes:
            for key, label in REPAIR_SETS.items():
                rec[f"repair {c} ({label})"] = ((r.get(key) or {}).get(c) or {}).get("repair_rate")
        out.append(rec)
    return out
