"""Process rewards (ReCode): CRPL synthesis, preference pairs, the Bradley-Terry reward model,
and LCB-RB, the reward benchmark it is evaluated on.

Modules: crpl (policy traces, judged in the sandbox, and their rewrites), rewrite_prompts (the
CRPL transforms), pairs (chosen/rejected pairs), model (the Bradley-Terry RM: train, score),
placement (where the RM runs during GRPO: CPU, the trainer's GPU, a dedicated GPU, an endpoint;
dtype and batching), serving (the RM behind HTTP and its client), lcbrb/ (the benchmark:
build, seeded traces, mutants, judges, adjudication, scoring).
The reward that uses the RM during GRPO is recode_lib.rewards.process.
"""
