"""Paper B's pipeline per setting (single, tool, agentic): the strictness sweep, the alpha grid
between that setting's lenient and strict endpoints, and pass@k ensembles along its frontier.

    from recode_lib.training.settings_sweep import alpha_settings, ensemble_settings, sweep_settings
    out = sweep_settings(["single", "tool", "agentic"], ["1", "inf"], train_problems,
                         eval_problems, RUN / "11_settings_sweep", spec=EvalSpec(...),
                         recipe={"single": "strictness_smoke", "tool": "tool_smoke", ...},
                         benchmark="microbench", model=start, max_steps=2)   # recipe fields
    out["tool"]["frontier"]["rows"], out["tool"]["summaries"]["k1"]["episodes"]
    grid = alpha_settings(["single", "tool"], RUN / "11_settings_sweep", [-1, 0, 0.5, 1, 2],
                          eval_problems, spec, benchmark="microbench")
    grid["tool"]["frontier"]["rows"], grid["tool"]["result"].summaries[0.5]
    ens = ensemble_settings(["single", "tool"], RUN / "11_settings_sweep", ks=[1, 2],
                            stable=(-1, 2))
    ens["tool"]["gain_extended_vs_best"]

Per setting S, everything under out_dir/S:
- sweep_settings: training.launch.train_variants(recipe for S, {"k<k>": strict_<k>}) (the
  recipe's `setting` field makes TRL run the environment; `recipe` is a format string with
  {setting} or a {setting: recipe} mapping, since the single-turn sweep's recipe is notebook
  06's), evaluation.spec.evaluate_models with spec.replace(setting=S) into S/eval, then
  analysis.frontier.write_sweep_frontier(S) with `setting` and the spec's fingerprint.
- alpha_settings: notebook 07's step in S: the sweep's lenient and strict runs
  (weights.endpoints.sweep_endpoints(out_dir/S)), theta_alpha evaluated in memory with one
  live model (weights.sweep.sweep_alphas, which renders S's tools and runs S's loop) with the
  sweep's own spec into S/alpha/eval, the sweep's other runs (weights.endpoints.sweep_runs)
  evaluated with the same spec and n into S/alpha/runs (best-single candidates), and
  analysis.frontier.write_frontier into S/alpha (frontier.json, with `setting`, the endpoints,
  the eval folders and the problem set; the records are read back kept to these problems).
- ensemble_settings: notebook 08's step in S: analysis.ensemble.write_ensemble over the alpha
  grid's samples (and the runs', best-single candidates) into S/ensemble/passk.json (matched
  budget: a pool splits k draws).
Every step is resumable as its own function is (finished runs and samples are kept). It adds no
training, evaluation or statistics of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from recode_lib.analysis.ensemble import counts_by_alpha, counts_by_run, write_ensemble
from recode_lib.analysis.frontier import (load_alpha_samples, load_run_samples, write_frontier,
                                          write_sweep_frontier)
from recode_lib.environments.settings import check_setting
from recode_lib.evaluation.spec import evaluate_models
from recode_lib.jsonl import read_json
from recode_lib.training.launch import train_variants
from recode_lib.weights.endpoints import sweep_endpoints, sweep_runs
from recode_lib.weights.sweep import sweep_alphas


def recipe_for(recipe, setting: str) -> str:
    """The recipe name of one setting: recipe[setting] for a mapping, else recipe.format()."""
    if isinstance(recipe, Mapping):
        if setting not in recipe:
            raise KeyError(f"no recipe for the {setting} setting in {dict(recipe)}")
        return recipe[setting]
    return recipe.format(setting=setting)


def sweep_settings(settings, ks, train_problems, eval_problems, out_dir, *, spec,
                   recipe: str | Mapping[str, str] = "{setting}_smoke",
                   launcher: str = "inprocess", num_processes: int = 1, name_prefix: str = "",
                   extra: dict | None = None, log=print, **overrides) -> dict:
    """{setting: {"results", "summaries", "frontier"}} (module docstring); `overrides` are
    recipe fields for every run (their `benchmark` also names the evaluation's)."""
    benchmark = overrides.get("benchmark")
    runs = {f"k{k}": k for k in ks}
    out = {}
    for setting in settings:
        check_setting(setting)
        folder = Path(out_dir) / setting
        variants = {name: {"rewards": [{"name": f"strict_{k}"}], "setting": setting}
                    for name, k in runs.items()}
        results = train_variants(recipe_for(recipe, setting), variants, train_problems, folder,
                                 name_prefix=f"{name_prefix}{setting}_", launcher=launcher,
                                 num_processes=num_processes, log=log, **overrides)
        s_spec = spec.replace(setting=setting)
        summaries = evaluate_models({n: results[n].final_dir for n in runs}, eval_problems,
                                    s_spec, folder / "eval", benchmark=benchmark)
        frontier = write_sweep_frontier(folder, summaries, runs, spec=s_spec, extra={
            "setting": setting, "benchmark": benchmark, **(extra or {})})
        out[setting] = {"results": results, "summaries": summaries, "frontier": frontier}
    return out


def alpha_settings(settings, sweep_dir, alphas: Sequence[float], problems, spec, *,
                   benchmark: str | None = None, threshold: float = 2.0,
                   extra: dict | None = None, log=print) -> dict:
    """{setting: {"endpoints": (low, high), "result": weights.sweep.SweepResult, "frontier",
    "runs": {run: summary}}}: the alpha grid of each setting between its sweep's endpoints
    (module docstring), every alpha, and every other run of the sweep (the best-single
    candidates), evaluated on `problems` with spec.replace(setting=S). Raises
    weights.endpoints.EndpointError when a setting's sweep has no two finished runs."""
    alphas = sorted({float(a) for a in alphas})
    out = {}
    for setting in settings:
        check_setting(setting)
        folder = Path(sweep_dir) / setting
        low, high = sweep_endpoints(folder)
        s_spec = spec.replace(setting=setting)
        eval_dir = folder / "alpha" / "eval"
        if log:
            log(f"{setting}: alpha grid {alphas} between\n  low  (alpha=0, lenient): {low}\n"
                f"  high (alpha=1, strict):  {high}")
        res = sweep_alphas(low, high, alphas, problems, s_spec, eval_dir, benchmark=benchmark,
                           log=log)
        runs = sweep_runs(folder, grid=alphas)     # best-single candidates beside the grid
        runs_dir = folder / "alpha" / "runs"
        run_summaries = evaluate_models(runs, problems, s_spec, runs_dir, benchmark=benchmark)
        ids = [p.id for p in problems]
        everything = load_alpha_samples(eval_dir, problems=ids, n=s_spec.n)
        frontier = write_frontier(folder / "alpha", {a: everything[a] for a in alphas},
                                  threshold=threshold, spec=s_spec, extra={
                                      "setting": setting, "alphas": alphas,
                                      "endpoints": {"source": "sweep", "low": str(low),
                                                    "high": str(high)},
                                      "eval_dir": str(eval_dir), "benchmark": benchmark,
                                      "n_samples": s_spec.n, "runs": sorted(runs),
                                      "runs_eval_dir": str(runs_dir),
                                      "sweep_seconds": res.seconds, **(extra or {})})
        out[setting] = {"endpoints": (low, high), "result": res, "frontier": frontier,
                        "runs": run_summaries}
    return out


def ensemble_settings(settings, sweep_dir, ks: Sequence[int], *,
                      stable: tuple[float, float] | None = None, n_boot: int = 1000,
                      seed: int = 0, extra: dict | None = None) -> dict:
    """{setting: passk payload}: analysis.ensemble.write_ensemble over each setting's alpha grid
    (its S/alpha/frontier.json and the samples it points to) into S/ensemble/passk.json.
    Raises ValueError when k exceeds the samples per checkpoint (raise the grid's n)."""
    ks = sorted({int(k) for k in ks})
    out = {}
    for setting in settings:
        check_setting(setting)
        folder = Path(sweep_dir) / setting
        front = read_json(folder / "alpha" / "frontier.json")
        ids, n = front.get("problem_ids"), front.get("n_samples")
        everything = load_alpha_samples(front["eval_dir"], problems=ids, n=n)
        counts = counts_by_alpha({a: everything[a] for a in front["alphas"]})
        runs = counts_by_run(load_run_samples(front["runs_eval_dir"], front["runs"],
                                              problems=ids, n=n)) if front.get("runs") else {}
        n_min = min(m for c in (counts | runs).values() for m, _ in c.values())
        if ks[-1] > n_min:
            raise ValueError(f"{setting}: pass@{ks[-1]} needs >= {ks[-1]} samples per checkpoint "
                             f"for the best-single pool; the alpha grid has {n_min} (raise its n)")
        out[setting] = write_ensemble(folder / "ensemble", counts, ks, stable=stable,
                                      n_boot=n_boot, seed=seed, runs=runs, extra={
                                          "setting": setting,
                                          "source": str(folder / "alpha" / "frontier.json"),
                                          "endpoints": front["endpoints"], **(extra or {})})
    return out
