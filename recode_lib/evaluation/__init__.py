"""Evaluation: generate -> execute -> score, and the summaries every notebook reads.

    from recode_lib.evaluation import EvalSpec, summarize, summary_table, OUTCOMES, STATUSES
    EvalSpec(n=10, k=(1, 10)).evaluate("smollm2", problems, out_dir)  # samples.jsonl, summary.json
    from recode_lib.evaluation import evaluate_math   # math: \\boxed{} answers, math-verify

Modules: loop (the one code-evaluation loop over an EvalSpec, every setting, with its run and
model-stamp guard), episodes (the settings as episode strategies: single, tool, agentic), rows
(the one row builder and verdict fields), spec (EvalSpec: `recode eval`'s options come from
its fields; EvalSpec.evaluate is the one entry point of code evaluation, every setting), summary
(pass@k with bootstrap CIs, outcome and status rates, hangs, truncations; OUTCOMES and
STATUSES re-exported from recode_lib.sandbox.result, where they are defined), math (the math
domain's prompt, answer check and evaluation), headline (ReCode's headline table and its gains),
api_model (api_row: an API model's comparison row in it: GPT-4-Turbo through the openai
backend). The `recode eval` arguments live in recode_lib.cli.eval. The names notebooks use are
exported here, imported on first access (recode_lib.core.lazy).
"""

from recode_lib.core.lazy import lazy_exports

# name -> the submodule defining it, imported on first access (recode_lib.core.lazy)
LAZY_EXPORTS = {
    "EvalSpec": "spec",
    "evaluate_models": "spec",
    "calibrate": "calibration",
    "candidate_problems": "calibration",
    "write_calibrated": "calibration",
    "START": "headline",
    "TRANSFER_START": "headline",
    "evaluate_policies": "headline",
    "gain_rows": "headline",
    "headline_options": "headline",
    "headline_table": "headline",
    "policy_groups": "headline",
    "policy_models": "headline",
    "transfer_policies": "headline",
    "write_headline": "headline",
    "api_row": "api_model",
    "evaluate_api_row": "api_model",
    "OUTCOMES": "summary",
    "STATUSES": "summary",
    "summarize": "summary",
    "summary_table": "summary",
    "evaluate_math": "math",
    "math_gains": "math",
}
__all__ = sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
