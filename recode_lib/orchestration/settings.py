"""Paper B's pipeline per setting (notebook 11): in each of single, tool and agentic, the same
three steps notebooks 06, 07 and 08 take in the single-turn setting.

    sweeps = sweep_settings(["single", "tool", "agentic"], [1, "inf"], train, held_out,
                            step_dir(RUN, SETTINGS_SWEEP), spec=EvalSpec(...),
                            recipe={"single": "strictness_smoke", "tool": "tool_smoke", ...},
                            benchmark="microbench", model=start, max_steps=2)   # recipe fields
    grids = alpha_settings(["single", "tool"], sweep_dir, [-1, 0, 0.5, 1, 2], held_out, spec)
    ens = ensemble_settings(["single", "tool"], sweep_dir, ks=[1, 2], stable=(-1, 2))
    write_records(OUT, None, settings_headline(sweeps, grids, ens, spec=spec))

Paper B runs every experiment in "single-turn reasoning, multi-turn reasoning with Python tool
calls, and agentic coding through a sandboxed terminal". Per setting S, under out_dir/S:
- sweep_settings: orchestration.sweep.strictness_sweep with setting=S (the recipe's `setting`
  field makes TRL run the environment; `recipe` is a format string with {setting} or a
  {setting: recipe} mapping, since the single-turn sweep's recipe is notebook 06's), its runs'
  list in S/metrics.json (what orchestration.endpoints reads);
- alpha_settings: orchestration.alpha.alpha_grid between S's lenient and strict runs
  (orchestration.endpoints.sweep_endpoints(out_dir/S)), with the sweep's spec in S's loop, into
  S/alpha (eval/, runs/ for the sweep's other runs, frontier.json);
- ensemble_settings: orchestration.ensemble.ensemble_step over S/alpha/frontier.json into
  S/ensemble/passk.json.
settings_headline: notebook 11's headline.json from the three steps' results (pass@1, outcome
shares and episodes per run, the alpha grid's pass@1, the ensembles' headline, the pooled
figures per setting). Every step is resumable as its own function is. It adds no training,
evaluation or statistics of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from recode_lib.environments.settings import check_setting
from recode_lib.evaluation.summary import pooled_summary
from recode_lib.orchestration.alpha import AlphaGrid, alpha_grid
from recode_lib.orchestration.endpoints import (
    Endpoints,
    sweep_endpoints,
    sweep_evaluations,
    sweep_runs,
)
from recode_lib.orchestration.ensemble import EnsembleStep, ensemble_step
from recode_lib.orchestration.records import write_records
from recode_lib.orchestration.sweep import StrictnessSweep, strictness_sweep

EPISODE_KEYS = ("turns", "tool_calls", "tool_errors")


def recipe_for(recipe, setting: str) -> str:
    """The recipe name of one setting: recipe[setting] for a mapping, else recipe.format()."""
    if isinstance(recipe, Mapping):
        if setting not in recipe:
            raise KeyError(f"no recipe for the {setting} setting in {dict(recipe)}")
        return recipe[setting]
    return recipe.format(setting=setting)


def sweep_settings(
    settings,
    ks,
    train_problems,
    eval_problems,
    out_dir,
    *,
    spec,
    recipe: str | Mapping[str, str] = "{setting}_smoke",
    launcher: str = "inprocess",
    num_processes: int = 1,
    name_prefix: str = "",
    extra: dict | None = None,
    log=print,
    **overrides,
) -> dict[str, StrictnessSweep]:
    """{setting: StrictnessSweep} (module docstring); `overrides` are recipe fields for every
    run (their `benchmark` also names the evaluation's)."""
    out = {}
    for setting in settings:
        check_setting(setting)
        folder = Path(out_dir) / setting
        out[setting] = strictness_sweep(
            recipe_for(recipe, setting),
            ks,
            train_problems,
            eval_problems,
            folder,
            spec=spec,
            setting=setting,
            name_prefix=f"{name_prefix}{setting}_",
            launcher=launcher,
            num_processes=num_processes,
            extra=extra,
            log=log,
            **overrides,
        )
        write_records(folder, out[setting].metrics, None)
    return out


def alpha_settings(
    settings,
    sweep_dir,
    alphas: Sequence[float],
    problems,
    spec,
    *,
    benchmark: str | None = None,
    threshold: float = 2.0,
    extra: dict | None = None,
    log=print,
) -> dict[str, AlphaGrid]:
    """{setting: AlphaGrid}: the alpha grid of each setting between its sweep's endpoints, every
    alpha and every other run of the sweep (the best-single candidates) evaluated on `problems`
    with spec.replace(setting=S). Raises orchestration.endpoints.EndpointError when a setting's
    sweep has no two finished runs."""
    out = {}
    for setting in settings:
        check_setting(setting)
        folder = Path(sweep_dir) / setting
        ends = Endpoints("sweep", *sweep_endpoints(folder))
        runs = sweep_runs(folder, grid=alphas)
        out[setting] = alpha_grid(
            ends,
            alphas,
            problems,
            spec.replace(setting=setting),
            folder / "alpha",
            folder / "alpha",
            runs=runs,
            earlier=sweep_evaluations(folder, runs),
            benchmark=benchmark,
            threshold=threshold,
            extra={"setting": setting, **(extra or {})},
            log=log,
        )
    return out


def ensemble_settings(
    settings,
    sweep_dir,
    ks: Sequence[int],
    *,
    stable: tuple[float, float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    extra: dict | None = None,
) -> dict[str, EnsembleStep]:
    """{setting: EnsembleStep} over each setting's alpha grid (S/alpha/frontier.json) into
    S/ensemble/passk.json. Raises ValueError when k exceeds the samples per checkpoint."""
    out = {}
    for setting in settings:
        check_setting(setting)
        folder = Path(sweep_dir) / setting
        out[setting] = ensemble_step(
            folder / "alpha" / "frontier.json",
            folder / "ensemble",
            ks,
            stable=stable,
            n_boot=n_boot,
            seed=seed,
            extra={"setting": setting, **(extra or {})},
        )
    return out


def episode_rows(sweeps: Mapping[str, StrictnessSweep]) -> list[dict]:
    """One row per (setting, run): its frontier row and its mean turns, tool calls and tool
    errors per episode (0 in the single-turn setting)."""
    return [
        {
            "setting": s,
            **r,
            **{
                f"mean_{k}": sw.summaries[r["run"]].get("episodes", {}).get(f"mean_{k}", 0.0)
                for k in EPISODE_KEYS
            },
        }
        for s, sw in sweeps.items()
        for r in sw.frontier["rows"]
    ]


def pooled_per_setting(
    sweeps: Mapping[str, StrictnessSweep], grids: Mapping[str, AlphaGrid]
) -> dict[str, dict]:
    """{setting: evaluation.summary.pooled_summary over its sweep runs and alpha points}."""
    return {
        s: pooled_summary(
            list(sweeps[s].summaries.values()) + list(grids[s].result.summaries.values())
        )
        for s in sweeps
    }


def settings_headline(
    sweeps: Mapping[str, StrictnessSweep],
    grids: Mapping[str, AlphaGrid],
    ensembles: Mapping[str, EnsembleStep],
    *,
    spec,
    eval_difficulty: str | None = None,
    per_setting: Mapping[str, dict] | None = None,
) -> dict:
    """Notebook 11's headline.json (module docstring); `spec` is the sweep's evaluation spec
    before its setting was set (its fingerprint is recorded)."""
    settings = list(sweeps)
    first = sweeps[settings[0]]
    return {
        "settings": settings,
        "runs": list(first.strictness),
        "n_eval": first.n_eval,
        "alphas": grids[settings[0]].alphas,
        "eval_difficulty": eval_difficulty or None,
        "eval_spec_fingerprint": spec.fingerprint(),
        "pass@1": {s: sweeps[s].headline["pass@1"] for s in settings},
        "outcomes": {s: sweeps[s].headline["outcomes"] for s in settings},
        "episodes": {
            s: {n: v.get("episodes") for n, v in sweeps[s].summaries.items()} for s in settings
        },
        "summary_settings": {
            s: sorted({v["setting"] for v in sweeps[s].summaries.values()}) for s in settings
        },
        "alpha_pass@1": {
            s: {repr(r["alpha"]): r["pass@1"] for r in grids[s].frontier["rows"]} for s in settings
        },
        "alpha_settings": {
            s: sorted({v["setting"] for v in grids[s].result.summaries.values()}) for s in settings
        },
        "ensemble": {s: ensembles[s].headline for s in settings},
        "per_setting": dict(per_setting)
        if per_setting is not None
        else pooled_per_setting(sweeps, grids),
    }
