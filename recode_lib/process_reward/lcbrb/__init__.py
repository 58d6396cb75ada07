"""LCB-RB: the reasoning-reward benchmark, in one place.

Modules: benchmark (build the pairs file), seeded_traces (traces seeded from references),
mutants (code mutants of a reference), judges (LLM-as-judge baselines), adjudication (human
adjudication of disputed pairs), scoring (accuracy of RMs, judges and baselines on the pairs,
with bootstrap CIs).
"""

from recode_lib.core.lazy import lazy_exports

# name -> the submodule defining it, imported on first access (recode_lib.core.lazy)
LAZY_EXPORTS = {
    "TIE_RULE": "scoring",
    "evaluate_datasets": "scoring",
    "length_method": "scoring",
    "pairwise_method": "scoring",
    "pointwise_method": "scoring",
    "rm_method": "scoring",
    "DecisionStore": "adjudication",
    "adjudication_widget": "adjudication",
    "auto_decide": "adjudication",
    "require_human_decisions": "adjudication",
    "ConsistencyJudge": "judges",
    "PairwiseJudge": "judges",
    "PointwiseJudge": "judges",
    "JudgeRoles": "judge_roles",
    "annotate_rows": "judge_roles",
    "as_pairs": "benchmark",
    "benchmark_rows": "benchmark",
    "candidate_pairs": "benchmark",
    "dual_consistency": "benchmark",
    "load_benchmark_file": "benchmark",
    "write_benchmark": "benchmark",
    "generate_seeded_traces": "seeded_traces",
}
__all__ = sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
