"""Orchestration: the code that ties the pipeline's stages together, step by step, above them.

Notebooks call its step functions; each step trains, evaluates and analyses only through the
stages (training, weights, evaluation, analysis) and returns what it ran together with the
step's records (its metrics.json and headline.json, written by records.write_records). It
reaches across step folders of a run folder only through the layout's names
(recode_lib.core.run_files: runs/<profile>/NN_<step>).

Modules: sweep (the strictness sweep: one GRPO run per R_k, partial-credit reward and seed,
evaluated; notebook 06), endpoints (the lenient and strict endpoints of the weight-averaging
axis from a sweep, or loud stand-in fine-tunes; the sweep's problems and spec), alpha (the alpha
grid between two endpoints and the frontier along it; notebook 07), ensemble (pass@k pools
along that frontier; notebook 08), settings (the three steps in each of the single, tool and
agentic settings; notebook 11), records (the one writer of a step's metrics.json and
headline.json), laptop_report (the laptop profile's claims from a run folder's files; notebook
99), rm_ablation (the generator ablation's count-matched training sets from notebook 01's
record; notebook 02). The resource plan, the notebook runner and the checks of this tier are
recode_lib.plan, pipeline, variants (a profile's named overlays, e.g. the paper's scale_32b),
dryrun, gpu_check and staging.
"""

from recode_lib.core.lazy import lazy_exports

# name -> the submodule defining it, imported on first access (recode_lib.core.lazy)
LAZY_EXPORTS = {
    "prepare_start_model": "start",
    "start_model": "start",
    "ABLATION_SINGLE_FILE": "rm_ablation",
    "CROSS_FILE": "rm_ablation",
    "ablation_sets": "rm_ablation",
    "pair_scale": "proc_scale",
    "write_records": "records",
    "rk_rule_lines": "sweep",
    "rk_rule_report": "sweep",
    "strictness_sweep": "sweep",
    "alpha_grid": "alpha",
    "seed_replicas": "alpha",
    "choose_endpoints": "endpoints",
    "sweep_eval_problems": "endpoints",
    "sweep_evaluations": "endpoints",
    "sweep_protocol_spec": "endpoints",
    "sweep_runs": "endpoints",
    "ensemble_step": "ensemble",
    "alpha_settings": "settings",
    "ensemble_settings": "settings",
    "episode_rows": "settings",
    "pooled_per_setting": "settings",
    "settings_headline": "settings",
    "sweep_settings": "settings",
    "report_markdown": "laptop_report",
    "write_report": "laptop_report",
}
__all__ = sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
