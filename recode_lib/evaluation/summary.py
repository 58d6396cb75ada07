"""Summaries of per-sample evaluation results: pass@k, outcome-class rates, tokens, format.

    s = summarize(rows, ks=(1, 10))     # rows: the samples.jsonl rows (recode_lib.evaluation.rows)
    s["pass@1"], s["pass@1_ci"], s["outcomes"]["optimization_failure"], s["tokens"]["mean"]

It does no I/O and no execution.
More: docs/modules/evaluation.md (recode_lib.evaluation.summary).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping

from recode_lib.metrics import bootstrap_ci, counts_from_records, pass_at_k, pass_at_k_table
from recode_lib.sandbox.result import (
    HANG,
    NOT_COUNTED,
    OUTCOMES,
    STATUSES,
    TRUST_LEVELS,
    failure_kind,
)

__all__ = [
    "summarize",
    "not_counted",
    "summary_table",
    "pooled_summary",
    "episode_summary",
    "trust_counts",
    "time_rule_counts",
    "OUTCOMES",
    "STATUSES",
    "HANG",
    "TRUST_LEVELS",
]
FAILURE_KINDS = OUTCOMES + (HANG,)


def _rates(values: list[str], names: Iterable[str]) -> dict[str, float]:
    c = Counter(values)
    n = max(1, len(values))
    out = {k: c.get(k, 0) / n for k in names}
    out.update({k: v / n for k, v in c.items() if k not in out})
    return out


def trust_counts(rows: Iterable[Mapping]) -> dict[str, int]:
    """Samples per trust level (every level of TRUST_LEVELS, 0 when absent; "unknown" for rows
    that lack the field, only when there are such rows)."""
    c = Counter(r.get("trust") or "unknown" for r in rows)
    out = {t: c.pop(t, 0) for t in TRUST_LEVELS}
    out.update(c)
    return out


def time_rule_counts(rows: Iterable[Mapping]) -> dict[str, int]:
    """Samples per time-limit rule (module doc); rows without `time_rule` count as "unknown"."""
    return dict(sorted(Counter(r.get("time_rule") or "unknown" for r in rows).items()))


def not_counted(rows: Iterable[Mapping]) -> dict:
    """The samples left out of pass@k (outcome not_counted: status env_missing, a module the
    problem needs is not installed for the sandbox): {"samples", "problems", "modules":
    {module: samples}} from their reasons."""
    rows = [r for r in rows if r.get("outcome") == NOT_COUNTED]
    mods: Counter = Counter()
    for r in rows:
        reason = r.get("reason") or ""
        for m in reason.partition(": ")[2].split(", ") if "not installed" in reason else ["?"]:
            mods[m.strip() or "?"] += 1
    return {
        "samples": len(rows),
        "problems": len({r.get("problem_id") for r in rows}),
        "modules": dict(sorted(mods.items())),
    }


def summarize(
    rows: list[Mapping], ks: Iterable[int] = (1,), n_boot: int = 1000, seed: int = 0
) -> dict:
    if not rows:
        raise ValueError("summarize: no per-sample results")
    counts = counts_from_records([r for r in rows if r.get("outcome") != NOT_COUNTED])
    ks = sorted(set(int(k) for k in ks))
    out: dict = {
        "n_problems": len(counts),
        "n_samples": len(rows),
        "samples_per_problem": sorted(set(n for n, _ in counts.values())),
    }
    out["not_counted"] = not_counted(rows)
    if counts:
        out.update(pass_at_k_table(counts, ks))
    for k in ks:
        if not counts:  # every problem was left out: pass@k is undefined, not 0
            out[f"pass@{k}"], out[f"pass@{k}_ci"] = None, None
            continue
        vals = [pass_at_k(n, c, k) for n, c in counts.values()]
        _, lo, hi = bootstrap_ci(vals, n_boot=n_boot, seed=seed)
        out[f"pass@{k}_ci"] = [lo, hi]
    out["solved"] = sorted(p for p, (_, c) in counts.items() if c > 0)
    out["outcomes"] = _rates([r["outcome"] for r in rows], OUTCOMES)
    out["statuses"] = _rates([r["status"] for r in rows], STATUSES)
    out["failure_kinds"] = _rates(
        [failure_kind(r["status"], r["outcome"]) for r in rows], FAILURE_KINDS
    )
    out["trust"] = trust_counts(rows)
    out["time_rules"] = time_rule_counts(rows)
    truncated = sum(r.get("finish_reason") == "length" for r in rows)
    out["truncation"] = {"count": truncated, "rate": truncated / len(rows)}
    fallbacks = sum(r.get("checker") == "exact_fallback" for r in rows)
    if fallbacks or any("checker" in r for r in rows):
        out["checker_fallbacks"] = fallbacks  # testlib checker not built: exact match used
    toks = [int(r["n_tokens"]) for r in rows]
    correct_toks = [int(r["n_tokens"]) for r in rows if r["outcome"] == "correct"]
    out["tokens"] = {
        "mean": statistics.fmean(toks),
        "median": statistics.median(toks),
        "max": max(toks),
        "mean_correct": statistics.fmean(correct_toks) if correct_toks else None,
        "truncated_rate": truncated / len(rows),
    }
    out["format"] = {
        "no_code_rate": sum(r["code"] is None for r in rows) / len(rows),
        "format_ok_rate": sum(bool(r.get("format_ok")) for r in rows) / len(rows),
        "assembly": dict(Counter(r.get("assembly", "?") for r in rows)),
    }
    return out


def episode_summary(rows: list[Mapping]) -> dict:
    """Means over the rows of a multi-turn evaluation: turns, tool calls, tool errors; the tool
    error rate (errors per call) and the no-answer rate."""

    def mean(key):
        return statistics.fmean(float(r.get(key) or 0) for r in rows) if rows else 0.0

    return {
        "mean_turns": mean("turns"),
        "mean_tool_calls": mean("tool_calls"),
        "mean_tool_errors": mean("tool_errors"),
        "tool_error_rate": (
            sum(r.get("tool_errors") or 0 for r in rows)
            / max(1, sum(r.get("tool_calls") or 0 for r in rows))
        ),
        "no_answer_rate": sum(bool(r.get("no_answer")) for r in rows) / max(1, len(rows)),
    }


def summary_table(summaries: Mapping[str, Mapping], ks: Iterable[int] = (1,)) -> list[dict]:
    """One flat row per run (e.g. per benchmark) for a DataFrame: pass@k, outcome rates, tokens."""
    rows = []
    for name, s in summaries.items():
        row = {"run": name, "problems": s["n_problems"], "samples": s["n_samples"]}
        for k in ks:
            if f"pass@{k}" in s:
                row[f"pass@{k}"] = s[f"pass@{k}"]
        row.update({o: s["outcomes"].get(o, 0.0) for o in OUTCOMES})
        row[HANG] = s.get("failure_kinds", {}).get(HANG, 0.0)
        row["tokens_mean"] = s["tokens"]["mean"]
        row["truncated"] = s["tokens"]["truncated_rate"]
        rows.append(row)
    return rows


def pooled_summary(summaries: Iterable[Mapping]) -> dict:
    """One setting's figures over several evaluation summaries (codegen's or multiturn's),
    weighted by their samples: `outcomes` (shares of the four classes; a hang is a correctness
    failure, also shown alone as `hang`), `tool_calls` / `tool_errors` per rollout (0 in the
    single-turn setting, which has no `episodes`), `tokens` per rollout, and
    `seconds_per_rollout`: generation + execution seconds over the rollouts those calls made
    (None when every sample came from the cache: summary timing counts new work only)."""
    summaries = list(summaries)
    if not summaries:
        raise ValueError("pooled_summary: no summaries")
    n = sum(int(s["n_samples"]) for s in summaries)

    def mean(get):
        return sum(get(s) * int(s["n_samples"]) for s in summaries) / n

    episodes = [s.get("episodes") or {} for s in summaries]
    new = sum(int((s.get("timing") or {}).get("new_samples") or 0) for s in summaries)
    secs = sum(
        float((s.get("timing") or {}).get("generation_s") or 0)
        + float((s.get("timing") or {}).get("execution_s") or 0)
        for s in summaries
        if (s.get("timing") or {}).get("new_samples")
    )
    return {
        "n_rollouts": n,
        "outcomes": {o: mean(lambda s, o=o: s["outcomes"].get(o, 0.0)) for o in OUTCOMES},
        "hang": mean(lambda s: s.get("failure_kinds", {}).get(HANG, 0.0)),
        "tool_calls": sum(
            e.get("mean_tool_calls", 0.0) * int(s["n_samples"])
            for e, s in zip(episodes, summaries, strict=True)
        )
        / n,
        "tool_errors": sum(
            e.get("mean_tool_errors", 0.0) * int(s["n_samples"])
            for e, s in zip(episodes, summaries, strict=True)
        )
        / n,
        "tokens": mean(lambda s: s["tokens"]["mean"]),
        "new_rollouts": new,
        "seconds_per_rollout": secs / new if new else None,
    }
