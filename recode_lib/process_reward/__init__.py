"""Process rewards (ReCode): CRPL synthesis, preference pairs, the Bradley-Terry reward model,
and LCB-RB, the reward benchmark it is evaluated on.

Modules: crpl (policy traces, judged in the sandbox, and their rewrites), rewrite_prompts (the
CRPL transforms), pairs (chosen/rejected pairs), model (the Bradley-Terry RM: train, score),
placement (where the RM runs during GRPO: CPU, the trainer's GPU, a dedicated GPU, an endpoint;
dtype and batching), serving (the RM behind HTTP and its client), lcbrb/ (the benchmark:
build, seeded traces, mutants, judges, adjudication, scoring).
The reward that uses the RM during GRPO is recode_lib.rewards.process.
"""

from recode_lib.core.lazy import lazy_exports

# name -> the submodule defining it, imported on first access (recode_lib.core.lazy)
LAZY_EXPORTS = {
    "CRPLConfig": "crpl",
    "GeneratorSpec": "crpl",
    "check_training_source": "crpl",
    "generate_base_traces": "crpl",
    "synthesis_report": "crpl",
    "synthesize_rewrites": "crpl",
    "build_pairs": "pairs",
    "equal_training_pairs": "pairs",
    "heldout_pairs": "pairs",
    "ProcessRewardScorer": "model",
    "RMConfig": "model",
    "pairwise_accuracy": "model",
    "held_out_proc": "scale",
    "scale_record": "scale",
}
__all__ = sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
