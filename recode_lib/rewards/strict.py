"""Strictness rewards (the extrapolation paper): nested R_k, R_inf and static partial credit.

Registered into recode_lib.rewards.REGISTRY on import (recode_lib.rewards imports this module):
  strict (k=int|"inf"), strict_<k>, strict_inf   R_k = 1 iff every test with input_len < 10**k
                                                 passes (recode_lib.sandbox.strictness; one
                                                 sandbox execution answers every k)
  partial_discrete (ks)     mean of R_k over k in ks and inf
  partial_continuous        1 when all tests pass, else the share of tests, sorted by input size,
                            passed before the first failure
A no-code completion or a sandbox failure scores 0 at every level. It does not define the
size annotation of tests (the data loaders write input_len).
"""

from __future__ import annotations

from recode_lib.rewards.execution import REWARD_ERROR, SandboxRunner, default_runner
from recode_lib.rewards.base import RewardFunction, base_row, execute
from recode_lib.rewards.registry import RewardConfigError, register, reject


def _k_label(k) -> str:
    s = str(k).strip().lower()
    if s in ("inf", "infinity", "none"):
        return "inf"
    try:
        return str(int(s))
    except ValueError:
        raise RewardConfigError(f"strictness k must be an integer or 'inf', got {k!r}") from None


def _strictness(result: dict, ks: list) -> dict:
    from recode_lib.sandbox import strictness
    if result.get("status") in (REWARD_ERROR, "no_code"):
        return {**{str(k): 0 for k in ks}, "inf": 0}
    return strictness(result, [int(k) for k in ks] + ["inf"])


@register("strict")
def _strict(k="inf", runner: SandboxRunner | None = None, name: str | None = None, **extra):
    reject("strict", extra)
    label = _k_label(k)
    name = name or f"strict_{label}"

    def compute(prompts, completions, kwargs):
        parsed, results = execute(completions, kwargs, runner or default_runner())
        rows = []
        for p, res in zip(parsed, results):
            row = base_row(p, res)
            r_k = _strictness(res, [] if label == "inf" else [int(label)])[label]
            row.update(reward=float(r_k), r_k=float(r_k))
            rows.append(row)
        return rows
    return RewardFunction(name, compute, ("r_k", "fmt", "out"))


@register("partial_discrete")
def _partial_discrete(ks=(1, 2, 3, 4, 5), runner: SandboxRunner | None = None, **extra):
    reject("partial_discrete", extra)
    ks = [int(_k_label(k)) for k in ks if _k_label(k) != "inf"]

    def compute(prompts, completions, kwargs):
        parsed, results = execute(completions, kwargs, runner or default_runner())
        rows = []
        for p, res in zip(parsed, results):
            row = base_row(p, res)
            levels = _strictness(res, ks)
            row["reward"] = sum(levels.values()) / len(levels)
            rows.append(row)
        return rows
    return RewardFunction("partial_discrete", compute, ("fmt", "out"))


def size_prefix_credit(result: dict) -> float:
    """Share of tests, sorted by input size, passed before the first failure (0 without tests)."""
    tests = result.get("tests") or []
    if not tests or result.get("status") in (REWARD_ERROR, "no_code"):
        return 0.0
    order = sorted(tests, key=lambda t: t.get("input_len") or 0)
    n = 0
    for t in order:
        if t.get("status") != "passed":
            break
        n += 1
    return n / len(order)


@register("partial_continuous")
def _partial_continuous(runner: SandboxRunner | None = None, **extra):
    reject("partial_continuous", extra)
    def compute(prompts, completions, kwargs):
        parsed, results = execute(completions, kwargs, runner or default_runner())
        rows = []
        for p, res in zip(parsed, results):
            row = base_row(p, res)
            row["reward"] = 1.0 if row["out"] == 1.0 else size_prefix_credit(res)
            rows.append(row)
        return rows
    return RewardFunction("partial_continuous", compute, ("fmt", "out"))
