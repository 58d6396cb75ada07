"""Strictness rewards (the extrapolation paper): nested R_k, R_inf and static partial credit.

    from recode_lib.rewards.strict import strict_reward, partial_discrete_reward
    strict_reward(k=2, runner=runner)(prompts, completions, problem=[...])   # also "strict_2"
    partial_discrete_reward(ks=[1, 2, 3])  # partial_continuous_reward()
    sweep_rewards([1, 2, 3, 4], ["discrete", "continuous"])  # {run: reward spec}, one set of k

The paper: "R_k(y) = 1 iff the solution passes every test whose input length is < 10^k;
R_inf(y) = 1 iff it passes the whole suite" (recode_lib.sandbox.rk; one sandbox
execution answers every k). Static partial credit ("discrete or continuous credit for passing
smaller tests"): partial_discrete is the mean of R_k over the strictness sweep's own levels —
its finite ks and inf — and partial_continuous is 1 when all tests pass, else the share of
tests, sorted by input size, passed before the first failure. `sweep_rewards(ks, partial)` is
the sweep's one list of runs as reward specs: R_k per k, R_inf, and the partial-credit runs,
partial_discrete given exactly those ks, so the partial-credit run averages the levels the R_k
runs train on. Without `ks`, partial_discrete averages PAPER_SWEEP_KS (the paper profile's
sweep levels, k = 1..4, and inf). Registered into recode_lib.rewards.REGISTRY on import, each
needing the sandbox. A no-code completion or a sandbox failure scores 0 at every level. It
does not define the size annotation of tests (the data loaders write input_len).
"""

from __future__ import annotations

from recode_lib.rewards.base import RewardFunction, base_row, execute
from recode_lib.rewards.execution import REWARD_ERROR, SandboxRunner, default_runner
from recode_lib.rewards.registry import Need, RewardConfigError, register
from recode_lib.sandbox import strictness
from recode_lib.sandbox.rk import DEFAULT_RK_RULE, RK_RULES


def k_label(k) -> str:
    """k as the label R_k carries: "inf" or an integer's text (RewardConfigError otherwise)."""
    s = str(k).strip().lower()
    if s in ("inf", "infinity", "none"):
        return "inf"
    try:
        return str(int(s))
    except ValueError:
        raise RewardConfigError(f"strictness k must be an integer or 'inf', got {k!r}") from None


def levels(result: dict, ks: list, rule: str = DEFAULT_RK_RULE) -> dict:
    """{"<k>": R_k, ..., "inf": R_inf} of one sandbox result (all 0 without a program) under the
    R_k rule `rule` (recode_lib.sandbox.rk.RK_RULES)."""
    if result.get("status") in (REWARD_ERROR, "no_code"):
        return {**{str(k): 0 for k in ks}, "inf": 0}
    return strictness(result, [int(k) for k in ks] + ["inf"], rule)


def rk_rule(rule) -> str:
    """`rule` checked (RewardConfigError naming it)."""
    if rule not in RK_RULES:
        raise RewardConfigError(f"the R_k rule must be one of {RK_RULES}, got {rule!r}")
    return rule


@register("strict", needs=(Need.SANDBOX,))
def strict_reward(
    k="inf",
    runner: SandboxRunner | None = None,
    name: str | None = None,
    rule: str = DEFAULT_RK_RULE,
) -> RewardFunction:
    """R_k in {0,1} (k an integer or "inf"); named strict_<k> unless `name` is given; `rule`:
    how a problem with no test below 10^k is read (recode_lib.sandbox.rk.RK_RULES)."""
    label = k_label(k)
    rule = rk_rule(rule)
    name = name or f"strict_{label}"

    def compute(prompts, completions, kwargs):
        parsed, results = execute(completions, kwargs, runner or default_runner())
        rows = []
        for p, res in zip(parsed, results, strict=True):
            row = base_row(p, res)
            r_k = levels(res, [] if label == "inf" else [int(label)], rule)[label]
            row.update(reward=float(r_k), r_k=float(r_k))
            rows.append(row)
        return rows

    return RewardFunction(name, compute, ("r_k", "fmt", "out"))


# the paper profile's strictness sweep (notebook 06's KS there): the default levels of
# partial_discrete; a sweep passes its own (sweep_rewards)
PAPER_SWEEP_KS = (1, 2, 3, 4)
PARTIAL_CREDIT = ("discrete", "continuous")


def finite_levels(ks) -> list[int]:
    """The finite k of `ks` (integers or their text; "inf" dropped), sorted, each once;
    RewardConfigError naming a bad one."""
    return sorted({int(k_label(k)) for k in ks if k_label(k) != "inf"})


def sweep_rewards(ks, partial_credit=(), rule: str = DEFAULT_RK_RULE) -> dict[str, dict]:
    """The strictness sweep's runs as {run name: reward spec} (a recipe's `rewards` entry):
    "k<k>" -> strict_<k> for each finite k of `ks` (in the given order), "kinf" -> strict_inf,
    then "partial_<c>" for c in `partial_credit` (discrete | continuous), partial_discrete with
    "ks" = the sweep's finite ks. Paper: static partial-credit rewards give "discrete or
    continuous credit for passing smaller tests" — here the discrete credit is the mean of the
    very R_k the sweep's other runs train on. `rule` (RK_RULES) goes into the finite-k and
    partial_discrete specs when it is not the default, so a run's recipe says which reading it
    trained on. RewardConfigError on another kind of credit."""
    own = {} if rk_rule(rule) == DEFAULT_RK_RULE else {"rule": rule}
    finite = []
    for k in ks:
        if k_label(k) != "inf" and int(k_label(k)) not in finite:
            finite.append(int(k_label(k)))
    out = {f"k{k}": {"name": f"strict_{k}", **own} for k in finite}
    out["kinf"] = {"name": "strict_inf"}
    for c in partial_credit:
        if c not in PARTIAL_CREDIT:
            raise RewardConfigError(f"partial credit must be one of {PARTIAL_CREDIT}, got {c!r}")
        out[f"partial_{c}"] = (
            {"name": "partial_discrete", "ks": sorted(finite), **own}
            if c == "discrete"
            else {"name": "partial_continuous"}
        )
    return out


@register("partial_discrete", needs=(Need.SANDBOX,))
def partial_discrete_reward(
    ks=PAPER_SWEEP_KS, runner: SandboxRunner | None = None, rule: str = DEFAULT_RK_RULE
) -> RewardFunction:
    """The mean of R_k over the finite k in `ks` and inf (the strictness sweep's levels:
    sweep_rewards passes them; default PAPER_SWEEP_KS). The function's `levels` attribute
    lists what it averages, e.g. ["1", "2", "3", "4", "inf"]."""
    ks = finite_levels(ks)
    rule = rk_rule(rule)

    def compute(prompts, completions, kwargs):
        parsed, results = execute(completions, kwargs, runner or default_runner())
        rows = []
        for p, res in zip(parsed, results, strict=True):
            row = base_row(p, res)
            r_ks = levels(res, ks, rule)
            row["reward"] = sum(r_ks.values()) / len(r_ks)
            rows.append(row)
        return rows

    fn = RewardFunction("partial_discrete", compute, ("fmt", "out"))
    fn.levels = [str(k) for k in ks] + ["inf"]
    return fn


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


@register("partial_continuous", needs=(Need.SANDBOX,))
def partial_continuous_reward(runner: SandboxRunner | None = None) -> RewardFunction:
    """1 when every test passes, else size_prefix_credit of the result."""

    def compute(prompts, completions, kwargs):
        parsed, results = execute(completions, kwargs, runner or default_runner())
        rows = []
        for p, res in zip(parsed, results, strict=True):
            row = base_row(p, res)
            row["reward"] = 1.0 if row["out"] == 1.0 else size_prefix_credit(res)
            rows.append(row)
        return rows

    return RewardFunction("partial_continuous", compute, ("fmt", "out"))
