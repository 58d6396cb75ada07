"""The reward model's scores on a policy's own samples: R_proc's scale, and R_proc on held-out work.

    rows = score_samples(scorer, problems, "runs/laptop/04_cg_grpo/eval/start")  # per sample
    opts = proc_scale(rows)       # {"proc_center": mean, "proc_temperature": sd, "n": ...}
    s = proc_summary(rows, center=opts["proc_center"], temperature=opts["proc_temperature"])
    by_model = score_models(scorer, problems, "runs/laptop/04_cg_grpo/eval", ["start", "gated"])

ReCode trains the RM with the Bradley-Terry objective, which fixes no absolute scale: only score
differences mean anything. R_proc = sigmoid((score - center) / temperature)
(recode_lib.rewards.process; recode_lib.metrics.sigmoid) needs a centre and a scale; with the
default (0, 1) a small RM whose scores sit near +1.6 with a spread of 0.4 puts every
completion's R_proc in 0.75-0.9, so R_proc barely moves whatever the policy does. `proc_scale`
takes them from the RM's scores of the start policy's own completions (mean and standard
deviation), so R_proc spreads over (0, 1) on what the policy actually writes. `proc_summary` is
the held-out view of the gate's signature: the mean R_proc (and raw score) a model's evaluation
samples get, split by whether they passed, with a bootstrap CI over problems.

Samples are the evaluation's `samples.jsonl` (recode_lib.evaluation); the RM reads the prompt
(recode_lib.core.prompts.user_prompt of the sample's problem) and the response, as during GRPO.
`start_scale` (notebooks 04 and 10's PROC_SCALE) samples the start policy of each policy/RM pair
(04's main runs, 04's transfer policy, 10's math policy) at its run's training sampling
(`training_sampling`: the recipe's temperature, top_p and max_completion_length — the rollouts
R_proc is applied to, not a greedy evaluation) and records the rule (`scale_rule`) with the
statistics; `held_out_proc` scores what 04 evaluated. Nothing here trains or executes code.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from pathlib import Path

from recode_lib.core.errors import RecodeError
from recode_lib.core.jsonl import read_json, read_jsonl, write_json_atomic, write_jsonl_atomic
from recode_lib.core.prompts import user_prompt
from recode_lib.metrics import bootstrap_ci, sigmoid
from recode_lib.process_reward.placement import load_checked_scorer


class ScaleError(RecodeError, ValueError):
    """Samples that cannot give R_proc a scale (too few, a missing problem, no spread)."""


def rm_prompt(problem, domain: str = "code") -> str:
    """What the RM reads as the prompt of a sample, as during GRPO (rewards.process reads the
    last user turn): prompts.user_prompt for code, the problem statement for math."""
    return user_prompt(problem) if domain == "code" else problem.prompt.strip()


def score_samples(scorer, problems, eval_dir, domain: str = "code") -> list[dict]:
    """One row per sample of eval_dir/samples.jsonl: problem_id, passed (R_out: its outcome is
    "correct", every test passes; the sample's own `passed` counts the tests it passed; math:
    its answer is `correct`), outcome, raw RM score. A sample whose problem is not in
    `problems`, or without an outcome, is an error naming it (never skipped)."""
    path = Path(eval_dir) / "samples.jsonl"
    if not path.is_file():
        raise ScaleError(f"{path}: no evaluation samples to score")
    by_id = {p.id: p for p in problems}
    samples = list(read_jsonl(path))
    missing = sorted({s["problem_id"] for s in samples} - set(by_id))
    if missing:
        raise ScaleError(f"{path}: samples of problems not given: {missing[:5]}")
    if domain == "math":  # evaluation.math rows: "correct" is the outcome
        samples = [
            {
                **s,
                "id": s.get("id", f"{s['problem_id']}#{s.get('sample', 0)}"),
                "outcome": "correct" if s.get("correct") else "wrong",
            }
            if "correct" in s
            else s
            for s in samples
        ]
    unjudged = [s.get("id") for s in samples if "outcome" not in s]
    if unjudged:
        raise ScaleError(f"{path}: samples without an outcome: {unjudged[:5]}")
    prompts = [rm_prompt(by_id[s["problem_id"]], domain) for s in samples]
    scores = list(scorer.score(prompts, [s.get("response") or "" for s in samples]))
    if len(scores) != len(samples):
        raise ScaleError(
            f"the reward model returned {len(scores)} scores for {len(samples)} samples"
        )
    return [
        {
            "id": s["id"],
            "problem_id": s["problem_id"],
            "passed": s["outcome"] == "correct",
            "outcome": s["outcome"],
            "score": float(x),
        }
        for s, x in zip(samples, scores, strict=True)
    ]


# Scores whose standard deviation is below this (in the RM's logit units) have no spread: a
# temperature that small turns rounding noise into R_proc differences of order 1.
SPREAD_FLOOR = 1e-4


def proc_scale(rows: list[dict], floor: float = SPREAD_FLOOR) -> dict:
    """{"proc_center", "proc_temperature", "n"}: the mean and standard deviation of the rows' raw
    scores (recode_lib.rewards.process options). ScaleError with fewer than 2 finite scores or
    a standard deviation at or below `floor` (SPREAD_FLOOR: no spread)."""
    xs = [r["score"] for r in rows if math.isfinite(r["score"])]
    if len(xs) < 2:
        raise ScaleError(f"R_proc's scale needs at least 2 scored samples, got {len(xs)}")
    sd = statistics.pstdev(xs)
    if sd <= floor:
        raise ScaleError(
            f"the reward model's scores of {len(xs)} samples (mean {statistics.fmean(xs):.4g}) "
            f"spread by {sd:.3g}, at most the floor {floor:g}: no spread to scale "
            "R_proc by"
        )
    return {"proc_center": statistics.fmean(xs), "proc_temperature": sd, "n": len(xs)}


def untrained_reason(rm_path) -> str | None:
    """Why the RM at rm_path is untrained (its rm_config.json "untrained" flag: notebook 02 found
    no training pairs and saved the backbone with a fresh head), or None for a trained one or an
    endpoint."""
    cfg = Path(rm_path) / "rm_config.json" if rm_path else None
    if cfg is None or not cfg.is_file():
        return None
    import json

    flag = json.loads(cfg.read_text()).get("untrained")
    return str(flag) if flag else None


def by_problem(rows: list[dict], key) -> dict[str, list[float]]:
    """{problem_id: [key(row) of its samples]}."""
    groups: dict[str, list[float]] = {}
    for r in rows:
        groups.setdefault(r["problem_id"], []).append(key(r))
    return groups


def problem_bootstrap(rows: list[dict], key, n_boot: int = 1000, seed: int = 0) -> list | None:
    """Percentile 95% CI of the mean of key(row) over samples, resampling problems (a problem's
    samples together, so a problem weighs by its sample count); None without rows."""
    import numpy as np

    groups = by_problem(rows, key)
    if not groups:
        return None
    sums = np.array([sum(v) for v in groups.values()])
    counts = np.array([len(v) for v in groups.values()])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(sums), size=(n_boot, len(sums)))
    means = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return [float(lo), float(hi)]


def proc_summary(
    rows: list[dict],
    center: float = 0.0,
    temperature: float = 1.0,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict:
    """Mean R_proc = sigmoid((score - center) / temperature) over the rows, its CI over
    problems, the mean raw score, the pass rate (R_out) with its CI, and R_proc among passing
    and among failing samples with their CIs (None when there are none). R_proc of the failing
    samples is the process reward that comes without correctness: what a policy that hacks the
    RM raises."""

    def proc(r):
        return sigmoid((r["score"] - center) / temperature)

    def mean(xs):
        xs = list(xs)
        return statistics.fmean(xs) if xs else None

    return {
        "n": len(rows),
        "center": center,
        "temperature": temperature,
        "proc": mean(proc(r) for r in rows),
        "proc_ci": problem_bootstrap(rows, proc, n_boot, seed),
        "raw": mean(r["score"] for r in rows),
        "out": mean(float(r["passed"]) for r in rows),
        "out_ci": problem_bootstrap(rows, lambda r: float(r["passed"]), n_boot, seed),
        "proc_passed": mean(proc(r) for r in rows if r["passed"]),
        "proc_passed_ci": problem_bootstrap([r for r in rows if r["passed"]], proc, n_boot, seed),
        "proc_failed": mean(proc(r) for r in rows if not r["passed"]),
        "proc_failed_ci": problem_bootstrap(
            [r for r in rows if not r["passed"]], proc, n_boot, seed
        ),
        "n_failed": sum(not r["passed"] for r in rows),
    }


def score_models(
    scorer, problems, eval_root, models, center: float = 0.0, temperature: float = 1.0
) -> dict[str, dict]:
    """{model: proc_summary} for each model evaluated under eval_root/<model>; the per-sample
    scores go to eval_root/<model>/rm_scores.jsonl."""
    out = {}
    for name in models:
        rows = score_samples(scorer, problems, Path(eval_root) / name)
        write_jsonl_atomic(Path(eval_root) / name / "rm_scores.jsonl", rows)
        out[name] = proc_summary(rows, center, temperature)
    return out


PROC_SCALES = ("", "start")


def load_eval_scorer(rm_path, placement=None):
    """The RM for scoring outside training (04's scale and held-out scores), placed as the
    recipe's rm_* fields say (a recode_lib.process_reward.placement.RMPlacement; None: CPU,
    float32). There are no training ranks here, so "trainer" means this process's first GPU (the
    CPU without one) and the RM is never ZeRO-3-sharded; an endpoint is used as is."""
    if placement is None:
        return load_checked_scorer(rm_path)
    device = None
    if placement.where == "trainer":
        import torch

        device = "cuda:0" if torch.cuda.is_available() else "cpu"
    return load_checked_scorer(rm_path, replace(placement, zero3=False), trainer_device=device)


START_RULE = (
    "sigmoid((score - mean) / sd), mean and sd of the RM's raw scores of the start "
    "policy's samples on the training problems at the run's training sampling "
    "(temperature, top_p, max_completion_length)"
)
SIGMOID_RULE = "sigmoid(raw score)"


def training_sampling(recipe) -> dict:
    """The sampling of the GRPO rollouts R_proc is applied to, from the run's recipe (anything
    with temperature, top_p and max_completion_length: a training.grpo.load_recipe recipe): what
    the start policy's samples for the scale are drawn with."""
    return {
        "temperature": float(recipe.temperature),
        "top_p": float(recipe.top_p),
        "max_new_tokens": int(recipe.max_completion_length),
    }


def scale_rule(mode: str, recipe) -> dict:
    """The rule that sets R_proc's scale for a run with `recipe` under PROC_SCALE `mode`:
    {"mode", "rule", "sampling"} — "start": START_RULE at training_sampling(recipe); "":
    SIGMOID_RULE (no sampling). The one rule every R_proc run of a profile should share
    (tests/test_proc_scale.py checks the paper profile)."""
    if mode not in PROC_SCALES:
        raise ScaleError(f"PROC_SCALE must be one of {PROC_SCALES}, got {mode!r}")
    if not mode:
        return {"mode": "", "rule": SIGMOID_RULE, "sampling": None}
    return {"mode": mode, "rule": START_RULE, "sampling": training_sampling(recipe)}


def start_scale(
    mode: str,
    model,
    problems,
    spec,
    rm_path,
    out_dir,
    placement=None,
    *,
    recipe=None,
    domain: str = "code",
) -> dict:
    """The reward options that set R_proc's scale for a GRPO run (reward_variants' rm_options):
    {} for mode "" (R_proc = sigmoid(raw score)); for "start", the model (the start policy) is
    sampled on `problems` (the training problems) into out_dir/start with `spec` (an EvalSpec:
    backend, n, seed, batching) at the training sampling of `recipe` (training_sampling: its
    temperature, top_p and max_completion_length, and for code its reasoning prompt — the
    rollouts R_proc will score, not the greedy evaluation), the RM at rm_path scores the
    samples (domain "code" or "math": what the RM reads as the prompt, rm_prompt), and their
    mean and standard deviation become proc_center / proc_temperature. The RM is placed as
    `placement` says (load_eval_scorer). What was used is recorded in
    out_dir/proc_scale.json (scale_record): {"mode": requested, "used": "start" | "sigmoid",
    "fallback": why or None, center, temperature, n, model (the policy), rm_path, "rule"
    (scale_rule), "sampling" (with n)} — `provenance_of` of it goes into each run's recipe
    (field rproc_scale), so every run says how its R_proc was scaled.

    The rule for "start": the RM's scores must spread by more than SPREAD_FLOOR (proc_scale),
    else a scale from no spread would amplify noise. A trained RM without that spread stops
    the run (ScaleError). An RM flagged untrained (untrained_reason: notebook 02 had no pairs,
    e.g. a dry run's random model) whose scores do not spread falls back to sigmoid(raw
    score): the record says so and why ("fallback"), and the run goes on; an untrained RM
    whose scores do spread is scaled as usual, and "rm_untrained" says what it is. ReCode's
    RM is trained with the Bradley-Terry objective, which fixes no absolute scale: "A reward
    model is trained on these pairs with the Bradley–Terry objective (no absolute scores)"."""
    if mode not in PROC_SCALES:
        raise ScaleError(f"PROC_SCALE must be one of {PROC_SCALES}, got {mode!r}")
    if mode and recipe is None:
        raise ScaleError(
            "PROC_SCALE 'start' needs the run's recipe: the start policy is sampled "
            "at its training temperature and length"
        )
    if domain not in ("code", "math"):
        raise ScaleError(f"domain must be 'code' or 'math', got {domain!r}")
    rule = scale_rule(mode, recipe)
    out_dir = Path(out_dir)
    untrained = untrained_reason(rm_path) if mode else None
    record = {
        "mode": mode,
        "used": "sigmoid",
        "fallback": None,
        "rm_untrained": untrained,
        "proc_center": 0.0,
        "proc_temperature": 1.0,
        "n": None,
        "model": str(model),
        "rm_path": str(rm_path),
        "rule": rule["rule"],
        "sampling": None,
    }
    if mode:
        changes = dict(rule["sampling"])
        if domain == "code" and hasattr(recipe, "reasoning"):
            changes["reasoning"] = bool(recipe.reasoning)
        sampled = replace(spec, **changes)
        record["sampling"] = {**rule["sampling"], "n": int(sampled.n), "seed": sampled.seed}
        if domain == "code":
            sampled.evaluate(model, problems, out_dir / "start")
        else:
            sampled.evaluate_math(model, problems, out_dir / "start")
        rows = score_samples(
            load_eval_scorer(rm_path, placement), problems, out_dir / "start", domain
        )
        try:
            record.update(proc_scale(rows), used="start")
        except ScaleError as exc:
            if not untrained:
                raise
            record.update(
                n=len(rows),
                fallback=(
                    f"the reward model at {rm_path} is untrained ({untrained}) and {exc}: "
                    "R_proc = sigmoid(raw score)"
                ),
            )
    if record["used"] != "start":
        record["rule"] = SIGMOID_RULE
    write_json_atomic(out_dir / "proc_scale.json", record)
    return (
        {k: record[k] for k in ("proc_center", "proc_temperature")}
        if record["used"] == "start"
        else {}
    )


PROVENANCE_KEYS = (
    "mode",
    "used",
    "rule",
    "sampling",
    "model",
    "rm_path",
    "proc_center",
    "proc_temperature",
    "n",
    "fallback",
)


def provenance_of(record: dict | None) -> dict | None:
    """The part of a proc_scale.json record (scale_record) a run's recipe carries as its
    `rproc_scale` field: how its R_proc was scaled, for which policy and RM."""
    if not record:
        return None
    return {k: record.get(k) for k in PROVENANCE_KEYS}


def scale_record(out_dir) -> dict | None:
    """out_dir/proc_scale.json as start_scale wrote it: which scale R_proc used and why (None
    when start_scale has not run there)."""
    path = Path(out_dir) / "proc_scale.json"
    return read_json(path) if path.is_file() else None


def held_out_proc(
    rm_path, problems, eval_root, models, rm_options: dict | None = None, placement=None
) -> dict:
    """{"scale": {center, temperature}, "models": {model: proc_summary}} for the evaluated
    models under eval_root, R_proc on the scale GRPO used (rm_options), the RM placed as
    `placement` says (load_eval_scorer); {"skipped": reason} when rm_path holds no reward model
    (a run whose variants never read one) and no endpoint serves it."""
    remote = placement is not None and placement.is_endpoint
    if not remote and not (rm_path and (Path(rm_path) / "config.json").is_file()):
        return {"skipped": f"no reward model at {rm_path}"}
    opts = dict(rm_options or {})
    center, temperature = opts.get("proc_center", 0.0), opts.get("proc_temperature", 1.0)
    return {
        "scale": {"center": center, "temperature": temperature},
        "models": score_models(
            load_eval_scorer(rm_path, placement), problems, eval_root, models, center, temperature
        ),
    }


def paired_difference(
    rows_a: list[dict], rows_b: list[dict], key, n_boot: int = 2000, seed: int = 0
) -> dict | None:
    """Mean over problems of (mean key(row) of a's samples - of b's) on the problems both have,
    with a percentile 95% bootstrap CI over problems: two models compared on the same problems,
    so what makes one problem harder than another cancels (recode_lib.metrics.bootstrap_ci over
    the per-problem differences). None without a shared problem."""
    a = {k: sum(v) / len(v) for k, v in by_problem(rows_a, key).items()}
    b = {k: sum(v) / len(v) for k, v in by_problem(rows_b, key).items()}
    shared = sorted(set(a) & set(b))
    if not shared:
        return None
    mean, lo, hi = bootstrap_ci([a[k] - b[k] for k in shared], n_boot=n_boot, seed=seed)
    return {"mean": mean, "ci": [lo, hi], "n_problems": len(shared)}
