"""LCB-RB: the reasoning-reward benchmark, in one place.

Modules: benchmark (build the pairs file), seeded_traces (traces seeded from references),
mutants (code mutants of a reference), judges (LLM-as-judge baselines), adjudication (human
adjudication of disputed pairs), scoring (accuracy of RMs, judges and baselines on the pairs,
with bootstrap CIs).
"""
