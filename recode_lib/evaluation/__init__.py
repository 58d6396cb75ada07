"""Evaluation: generate -> execute -> score, and the summaries every notebook reads.

    from recode_lib.evaluation.spec import EvalSpec
    EvalSpec(n=10, k=(1, 10)).evaluate("smollm2", problems, out_dir)  # samples.jsonl, summary.json
    from recode_lib.evaluation.summary import summarize, summary_table, OUTCOMES, STATUSES
    from recode_lib.evaluation.math import evaluate_math   # math: \\boxed{} answers, math-verify

Modules: loop (the one code-evaluation loop over an EvalSpec, every setting, with its run and
model-stamp guard), episodes (the settings as episode strategies: single, tool, agentic), rows
(the one row builder and verdict fields), spec (EvalSpec: `recode eval`'s options come from
its fields; EvalSpec.evaluate is the one entry point of code evaluation, every setting), summary
(pass@k with bootstrap CIs, outcome and status rates, hangs, truncations; OUTCOMES and
STATUSES re-exported from recode_lib.sandbox.result, where they are defined), math (the math
domain's prompt, answer check and evaluation), headline (ReCode's headline table and its gains),
api_row (an API model's comparison row in it: GPT-4-Turbo through the openai backend). The
`recode eval` arguments live in recode_lib.cli.eval.
"""
