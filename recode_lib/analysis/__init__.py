"""Analysis: result tables and paper figures, rebuilt from result files alone.

Modules: frontier (the correctness-efficiency frontier; the one frontier writer), ensemble
(ensemble pass@k), reward_curves (GRPO metrics over steps), plots (one function per figure).
Nothing here trains, generates or executes.
"""
