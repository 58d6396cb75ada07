"""Preflight checks of a profile that need no GPU: what this machine must have before a notebook
runs.

    refusals = checker_preflight(profile_parameters("paper"))   # [] when nothing is missing

CodeContests+ problems are judged by their testlib checkers (recode_lib.sandbox.checker), which
need a working C++ compiler. A notebook that trains or evaluates on such a benchmark
(TESTLIB_BENCHMARKS: its BENCHMARK, EVAL_BENCHMARK or TRAIN_SET) on a machine without one is
refused here, naming the Debian package to install, unless its GRPO recipe asks for the
exact-match fallback (RECIPE_FIELDS: {checker_fallback: true}, or the recipe's own field) — the same
rule the step applies when it starts (training.grpo.train, evaluation.loop.run_evaluation,
the sandbox's judge). `recode plan` prints the refusals and exits 2; the pipeline's resource
check refuses before the first notebook. Nothing is compiled beyond one small probe program.
"""

from __future__ import annotations

from recode_lib.sandbox.checker import compiler_problem
from recode_lib.training.grpo import load_recipe
from recode_lib.training.recipe_check import recipe_fields

TESTLIB_BENCHMARKS = ("codecontests_plus",)
BENCHMARK_KEYS = ("BENCHMARK", "EVAL_BENCHMARK", "TRAIN_SET")


def testlib_notebooks(params: dict[str, dict]) -> dict[str, list[str]]:
    """{notebook: [its parameters naming a benchmark with testlib checkers]}."""
    out = {}
    for stem, p in params.items():
        keys = [
            k for k in BENCHMARK_KEYS if str(p.get(k) or "").split(":")[0] in TESTLIB_BENCHMARKS
        ]
        if keys:
            out[stem] = keys
    return out


def asks_fallback(p: dict) -> bool:
    """Whether a notebook's training recipe asks for the exact-match fallback (only training
    judges CodeContests+ in the profiles; an evaluation has no such parameter)."""
    if not p.get("RECIPE") or "{" in str(p["RECIPE"]):
        return False
    fields = recipe_fields(p.get("RECIPE_FIELDS"))
    if "checker_fallback" in fields:
        return bool(fields["checker_fallback"])
    return bool(load_recipe(p["RECIPE"]).checker_fallback)


def checker_preflight(params: dict[str, dict]) -> list[str]:
    """One refusal per notebook that judges testlib-checker problems without a working C++
    compiler on this machine and without asking for the fallback; [] otherwise."""
    needing = {
        s: k
        for s, k in testlib_notebooks(params).items()
        if not (k == ["BENCHMARK"] and asks_fallback(params[s]))
    }
    if not needing:
        return []
    why = compiler_problem()
    if why is None:
        return []
    return [
        f"{stem}: {', '.join(f'{k}={params[stem][k]}' for k in keys)} has testlib checkers, "
        f"and {why} (or set RECIPE_FIELDS: {{checker_fallback: true}} for the exact-match "
        "fallback, which judges problems with several right answers wrongly)"
        for stem, keys in needing.items()
    ]
