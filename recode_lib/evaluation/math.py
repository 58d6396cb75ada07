"""The math evaluation: a math sample's verdict, the avg@n / pass@k summary, and evaluate_math.

    row = score_math_response(text, gold="025", finish_reason="stop")   # the sample's verdict
    s = math_summary(samples, ks=(1, 8))           # avg@n, pass@k, bootstrap CIs

The prompt format, parsing and answer checking (math_messages, parse_math_response,
answer_correct) are recode_lib.core.math_answers, shared with the math rewards.
`evaluate_math(model, problems, backend=..., sampling=..., out_dir=...)` (usually through
recode_lib.evaluation.spec.EvalSpec.evaluate_math) generates with recode_lib.generation (cached,
resumable, behind the same run/model-stamp guard as code evaluation), checks every sample and
writes `samples.jsonl` + `summary.json`: with n samples per problem, avg@n (mean correctness,
= pass@1), pass@k for each requested k <= n, each with a 95% bootstrap interval over problems
(`math_summary`), format rate, tokens and truncations.
A response that hit the token limit (finish_reason "length") is a format error, scored wrong
even when a partial text happens to hold a parsable answer — paper B: format errors at extreme
|alpha| are "token exhaustion"; the same rule as code evaluation (recode_lib.evaluation.rows).
`math_gains(eval_root, ["start", "math_outcome_only", "math_gated"])` reads each model's
samples.jsonl under eval_root/<model> and gives every policy's relative gain in avg@n over the
outcome-only run and over the start model, each with a paired bootstrap interval over problems
(recode_lib.evaluation.gains) — ReCode: "AIME 2024: +7.4% relative over RL without the process
reward". It does no code execution.
"""

from __future__ import annotations

from pathlib import Path

from recode_lib.core.jsonl import read_jsonl, write_json_atomic, write_jsonl_atomic
from recode_lib.core.math_answers import answer_correct, math_messages, parse_math_response
from recode_lib.core.models import model_stamp, resolve_model
from recode_lib.evaluation.gains import paired_relative_gain, per_problem_pass1
from recode_lib.evaluation.guard import guard_run, precision_field
from recode_lib.evaluation.rows import TRUNCATED
from recode_lib.generation import SamplingConfig, get_generator
from recode_lib.metrics import counts_from_records, pass_at_k_ci


def score_math_response(text: str, gold, finish_reason: str | None = None) -> dict:
    """One math sample's verdict: {"response", "answer", "gold", "correct", "format_ok", "reason",
    "finish_reason"}. A truncated response (finish_reason "length", the generator hit
    max_new_tokens) is a format error and not correct, whatever it holds: it never gave its
    final answer."""
    parsed = parse_math_response(text)
    if finish_reason == TRUNCATED:
        ok, fmt, why = False, False, "truncated at the token limit"
    else:
        ok, why = answer_correct(text, gold)
        fmt, why = parsed.format_ok, why or parsed.reason
    return {
        "response": text,
        "answer": parsed.answer,
        "gold": gold,
        "correct": ok,
        "format_ok": fmt,
        "reason": why,
        "finish_reason": finish_reason,
    }


def math_summary(samples, ks=(1,), *, n_boot: int = 2000, seed: int = 0) -> dict:
    """Scores of per-sample rows ({"problem_id", "correct", "format_ok", "n_tokens"}), every
    problem with the same number n of samples: avg@n (mean correctness over all samples, =
    the unbiased pass@1), pass@k for each k <= n (unbiased estimator, mean over problems), each
    with a 95% percentile-bootstrap interval over problems (recode_lib.metrics.pass_at_k_ci),
    the format rate, tokens and truncations (finish_reason "length")."""
    counts = counts_from_records(samples, is_correct=lambda r: bool(r["correct"]))
    if not counts:
        raise ValueError("math_summary: no samples")
    ns = sorted({n for n, _ in counts.values()})
    if len(ns) != 1:
        raise ValueError(f"math_summary: problems have different sample counts {ns}")
    n = ns[0]
    bad = [k for k in ks if k > n]
    if bad:
        raise ValueError(
            f"pass@k with k={bad} needs at least that many samples per problem (n={n})"
        )
    m = len(samples)
    avg, lo, hi = pass_at_k_ci(counts, 1, n_boot=n_boot, seed=seed)
    out = {
        "n_problems": len(counts),
        "n_samples": m,
        "n_per_problem": n,
        f"avg@{n}": avg,
        f"avg@{n}_ci": [lo, hi],
        "pass@1": avg,
        "pass@1_ci": [lo, hi],
        "ci_method": "95% percentile bootstrap over problems",
    }
    for k in sorted(set(ks) - {1}):
        v, lo, hi = pass_at_k_ci(counts, k, n_boot=n_boot, seed=seed)
        out[f"pass@{k}"], out[f"pass@{k}_ci"] = v, [lo, hi]
    out.update(
        {
            "format_rate": sum(bool(s["format_ok"]) for s in samples) / m,
            "tokens_per_response": sum(s["n_tokens"] for s in samples) / m,
            "truncated": sum(s.get("finish_reason") == "length" for s in samples),
        }
    )
    return out


def evaluate_math(
    model: str,
    problems,
    *,
    backend: str = "hf",
    sampling=None,
    out_dir,
    k=(1,),
    generator_kwargs: dict | None = None,
    on_config_change: str = "raise",
    n_boot: int = 2000,
) -> dict:
    """Generate sampling.n samples per problem, check each with math-verify, write samples.jsonl
    and summary.json (math_summary: avg@n, pass@k for each k, bootstrap CIs); returns the summary.
    The output folder goes through recode_lib.evaluation.guard like every code evaluation: a
    different model (or the same folder retrained in place), sampling or prompt raises, or with
    on_config_change="set_aside" moves the old results aside; cached generations are never
    reused across models."""
    sampling = sampling or SamplingConfig(temperature=0.0, max_new_tokens=512)
    if any(kk > sampling.n for kk in k):
        raise ValueError(
            f"pass@k with k={list(k)} needs n >= k samples per problem, sampling.n={sampling.n}"
        )
    out = guard_run(
        out_dir,
        {
            "model": str(model),
            "model_stamp": model_stamp(model),
            "sampling": sampling.sample_key(),
            "prompt": "math",
            **precision_field((generator_kwargs or {}).get("precision", "native")),
        },
        on_config_change,
    )
    gen = get_generator(
        backend,
        resolve_model(model),
        cache=out / "generations.jsonl",
        **dict(generator_kwargs or {}),
    )
    try:
        outs = gen.generate([math_messages(p) for p in problems], sampling)
    finally:
        gen.close()  # its engines release their devices before the next stage
    samples = []
    for p, comps in zip(problems, outs, strict=True):
        for i, comp in enumerate(comps):
            samples.append(
                {
                    "id": f"{p.id}#{i}",
                    "problem_id": p.id,
                    "sample": i,
                    **score_math_response(comp.text, p.answer, comp.finish_reason),
                    "n_tokens": comp.n_tokens,
                }
            )
    write_jsonl_atomic(out / "samples.jsonl", samples)
    summary = {
        "setting": "single",
        "model": str(model),
        **math_summary(samples, k, n_boot=n_boot, seed=sampling.seed),
        "sampling": {
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "max_new_tokens": sampling.max_new_tokens,
            "n": sampling.n,
            "seed": sampling.seed,
        },
    }
    write_json_atomic(out / "summary.json", summary)
    return summary


MATH_BASELINE = "math_outcome_only"  # notebook 10's run without the process reward
# ReCode: "Transfers to math (Qwen2.5-Math-7B, AIME 2024: +7.4% relative over RL without the
# process reward)"
PAPER_AIME_GAIN = 0.074


def math_gains(
    eval_root,
    models,
    baseline: str = MATH_BASELINE,
    start: str = "start",
    *,
    n_boot: int = 2000,
    seed: int = 0,
) -> dict:
    """{"relative_gain_over_outcome_only": {model: gain}, "relative_gain_over_start": {model:
    gain}, "paper": PAPER_AIME_GAIN} over the models evaluated under eval_root/<model>
    (samples.jsonl, one avg@n per problem); a gain is paired_relative_gain's record plus
    "reference". A reference that was not evaluated gives no gains over it. A truncated
    response counts as wrong (score_math_response: a format error)."""
    values = {}
    for m in models:
        path = Path(eval_root) / m / "samples.jsonl"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no math samples of {m!r} (evaluate it first)")
        values[m] = {"aime": per_problem_pass1(read_jsonl(path), lambda r: bool(r["correct"]))}
    out: dict = {
        "relative_gain_over_outcome_only": {},
        "relative_gain_over_start": {},
        "paper": PAPER_AIME_GAIN,
    }
    for key, ref in (
        ("relative_gain_over_outcome_only", baseline),
        ("relative_gain_over_start", start),
    ):
        if ref not in values:
            continue
        for m in models:
            if m not in (ref, start):
                out[key][m] = {
                    "reference": ref,
                    **paired_relative_gain(values[m], values[ref], n_boot=n_boot, seed=seed),
                }
    return out
