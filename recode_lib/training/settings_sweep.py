"""Paper B's strictness sweep in the tool and agentic settings: train one R_k run per k and per
setting, evaluate each in its own setting, write one frontier per setting.

    from recode_lib.training.settings_sweep import sweep_settings
    out = sweep_settings(["tool", "agentic"], ["1", "inf"], train_problems, eval_problems,
                         RUN / "11_settings", spec=EvalSpec(...), recipe="{setting}_smoke",
                         benchmark="microbench", model=start, max_steps=2)   # recipe fields
    out["tool"]["frontier"]["rows"], out["tool"]["summaries"]["k1"]["episodes"]

Per setting S, into out_dir/S: training.launch.train_variants(recipe.format(setting=S),
{"k<k>": strict_<k>}) (the recipe's `setting` field makes TRL run the environment), then
evaluation.spec.evaluate_models with spec.replace(setting=S) into out_dir/S/eval, then
analysis.frontier.write_sweep_frontier(out_dir/S) with `setting` in the payload. Every step is
resumable as its own function is (finished runs and samples are kept). The single-turn sweep
is notebook 06's. It adds no training or evaluation logic.
"""

from __future__ import annotations

from pathlib import Path


def sweep_settings(settings, ks, train_problems, eval_problems, out_dir, *, spec,
                   recipe: str = "{setting}_smoke",
                   launcher: str = "inprocess", num_processes: int = 1, name_prefix: str = "",
                   extra: dict | None = None, log=print, **overrides) -> dict:
    """{setting: {"results", "summaries", "frontier"}} (module docstring); `overrides` are
    recipe fields for every run (their `benchmark` also names the evaluation's)."""
    from recode_lib.analysis.frontier import write_sweep_frontier
    from recode_lib.environments.settings import check_setting
    from recode_lib.evaluation.spec import evaluate_models
    from recode_lib.training.launch import train_variants

    benchmark = overrides.get("benchmark")
    runs = {f"k{k}": k for k in ks}
    out = {}
    for setting in settings:
        check_setting(setting)
        folder = Path(out_dir) / setting
        variants = {name: {"rewards": [{"name": f"strict_{k}"}], "setting": setting}
                    for name, k in runs.items()}
        results = train_variants(recipe.format(setting=setting), variants, train_problems, folder,
                                 name_prefix=f"{name_prefix}{setting}_", launcher=launcher,
                                 num_processes=num_processes, log=log, **overrides)
        summaries = evaluate_models({n: results[n].final_dir for n in runs}, eval_problems,
                                    spec.replace(setting=setting), folder / "eval",
                                    benchmark=benchmark)
        frontier = write_sweep_frontier(folder, summaries, runs, extra={
            "setting": setting, "benchmark": benchmark, **(extra or {})})
        out[setting] = {"results": results, "summaries": summaries, "frontier": frontier}
    return out
