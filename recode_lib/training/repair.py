"""Failure-conditioned repair: failed attempts become repair tasks; repair rates per failure class.

    tasks, report = repair_tasks(problems, samples, max_per_problem=2, seed=0)
    # each task is a Problem with the original's tests and limits; its prompt shows the
    # statement, the failed program and the execution statistics (execution_feedback)
    summary = spec.evaluate(model, tasks, out_dir)           # recode_lib.evaluation, unchanged
    rates = repair_rates(tasks, rows)                         # rows: that run's samples.jsonl
    # {"all" | <failure class>: {"repair_rate", "ci_low", "ci_high", "n", "n_tasks", "n_problems"}}

It does not generate or execute anything.
More: docs/modules/training.md (recode_lib.training.repair).
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections import Counter, defaultdict

import numpy as np

from recode_lib.metrics import bootstrap_ci
from recode_lib.sandbox.result import HANG, OUTCOMES, failure_kind

FAILURES = tuple(o for o in OUTCOMES if o != "correct")  # the failure classes
_STATUS_TEXT = {
    "wrong_answer": "produced a wrong answer",
    "runtime_error": "raised an error (runtime error)",
    "time_limit": "exceeded the time limit",
    "memory_limit": "exceeded the memory limit",
    "syntax_error": "does not compile (syntax error)",
}


def seconds(t: float) -> str:
    """A measured time as the feedback writes it: three significant digits and "s"."""
    return f"{float(t):.3g} s"


def timing_feedback(sample: dict, time_limit_s: float | None = None) -> str | None:
    """The measured time against the limit: the first failing test's time_s (its sandbox
    measurement; a test stopped at the limit shows the limit) and the sum over the tests run
    (the sample's time_s), beside the per-test time limit; the limit alone when nothing was
    timed, None when neither is known."""
    ff = sample.get("first_failure") or {}
    t_fail, total = ff.get("time_s"), sample.get("time_s")
    parts = []
    if t_fail is not None:
        which = f"test {ff['index'] + 1}" if ff.get("index") is not None else "the failing test"
        stopped = (
            " (stopped at the limit)" if time_limit_s and t_fail >= 0.999 * time_limit_s else ""
        )
        parts.append(f"{which} ran {seconds(t_fail)}{stopped}")
    if total:
        parts.append(f"the tests run took {seconds(total)} in all")
    limit = f"The time limit is {time_limit_s:g} s per test" if time_limit_s else None
    if not parts:
        return f"{limit}." if limit else None
    measured = " and ".join(parts)
    return f"{limit}; {measured}." if limit else f"Measured time: {measured}."


def execution_feedback(sample: dict, time_limit_s: float | None = None) -> str:
    """A few sentences of execution statistics for one failed sample (no expected outputs):
    what failed and where, tests passed, the longest input handled, the measured time against
    the time limit (timing_feedback), and what kind of fix the failure class asks for."""
    status, outcome = sample.get("status"), sample.get("outcome")
    if outcome == "format_error" and sample.get("finish_reason") == "length":
        return (
            "The previous reply was cut off at the length limit before it finished, so "
            "nothing was run. Reply with shorter reasoning, then one complete ```python "
            "code block."
        )
    if outcome == "format_error" and not sample.get("code"):
        return (
            "The previous reply contained no parsable Python code block, so nothing was "
            "run. Reply with reasoning, then one complete ```python code block."
        )
    lines = []
    passed, total = sample.get("passed"), sample.get("total")
    ff = sample.get("first_failure") or {}
    what = _STATUS_TEXT.get(ff.get("status") or status, f"failed ({status})")
    where = f" on test {ff['index'] + 1}" if ff.get("index") is not None else ""
    if ff.get("input_len") is not None:
        where += f" (input length {ff['input_len']:,} characters)"
    lines.append(f"The program {what}{where}.")
    if passed is not None and total:
        lines.append(f"It passed {passed} of {total} tests.")
    if ff.get("longest_passed_len"):
        lines.append(
            f"The longest input it handled correctly had {ff['longest_passed_len']:,} characters."
        )
    timing = timing_feedback(sample, time_limit_s)
    if timing:
        lines.append(timing)
    kind = failure_kind(status, outcome)
    if kind == HANG:
        lines.append(
            "It did not finish even on the smallest inputs it failed, so it is not "
            "merely slow: look for an infinite loop, a missing base case or runaway "
            "memory use."
        )
    elif (ff.get("status") or status) == "time_limit":
        lines.append("A faster algorithm is needed for large inputs.")
    elif outcome == "correctness_failure":
        lines.append("The logic is wrong for some inputs: check the edge cases and the algorithm.")
    return " ".join(lines)


def repair_prompt(problem, sample: dict) -> str:
    """The statement, the failed program and the execution feedback, asking for a fix."""
    code = (sample.get("code") or "").strip()
    shown = f"```python\n{code}\n```" if code else "(no code block)"
    return (
        f"{problem.prompt.strip()}\n\n"
        f"A previous attempt at this problem:\n{shown}\n\n"
        f"Execution feedback: {execution_feedback(sample, problem.time_limit_s)}\n\n"
        "Write a corrected, complete solution."
    )


def repair_problem(problem, sample: dict):
    """A Problem with the original's tests and limits and the repair prompt; id
    "<problem id>~repair~<sample index>-<prompt hash>", metadata {repair_of, original_problem,
    failure, status}."""
    sid = sample.get("id") or f"{problem.id}#{sample.get('sample')}"
    meta = dict(problem.metadata or {}) | {
        "repair_of": sid,
        "original_problem": problem.id,
        "failure": sample.get("outcome"),
        "status": sample.get("status"),
    }
    prompt = repair_prompt(problem, sample)
    # the id names the content: another failed attempt is another task (no stale reuse)
    digest = hashlib.sha256(prompt.encode()).hexdigest()[:8]
    return dataclasses.replace(
        problem,
        id=f"{problem.id}~repair~{sid.split('#')[-1]}-{digest}",
        prompt=prompt,
        metadata=meta,
    )


def repair_tasks(problems, samples, *, outcomes=FAILURES, max_per_problem: int = 2, seed: int = 0):
    """(tasks, report): repair Problems from failed samples; report counts eligible/taken by
    failure class, problems without a failure, and samples skipped as passing."""
    by_id = {p.id: p for p in problems}
    failed = defaultdict(list)
    report = Counter()
    for s in samples:
        pid = s.get("problem_id")
        if pid not in by_id:
            raise ValueError(
                f"sample {s.get('id')!r}: problem {pid!r} is not among the "
                f"{len(by_id)} problems given"
            )
        if s.get("outcome") in outcomes:
            failed[pid].append(s)
            report[f"eligible:{s['outcome']}"] += 1
        else:
            report[f"not_eligible:{s.get('outcome')}"] += 1
    rng = random.Random(seed)
    tasks = []
    for pid in sorted(by_id):
        got = failed.get(pid, [])
        if not got:
            report["problems_without_failure"] += 1
            continue
        rng.shuffle(got)
        # distinct outcomes first, then the rest
        seen, first, rest = set(), [], []
        for s in got:
            (rest if s["outcome"] in seen else first).append(s)
            seen.add(s["outcome"])
        for s in (first + rest)[:max_per_problem]:
            tasks.append(repair_problem(by_id[pid], s))
            report[f"taken:{s['outcome']}"] += 1
    report["tasks"] = len(tasks)
    return tasks, dict(report)


def pooled_rate(rows) -> float:
    """Correct over total of rows [correct, n] (one per original problem): the repair rate of
    those problems with every sample counted, the statistic repair_rates resamples."""
    rows = np.asarray(rows, dtype=float)
    return float(rows[:, 0].sum() / rows[:, 1].sum())


def repair_rates(tasks, rows, *, n_boot: int = 1000, seed: int = 0) -> dict:
    """Repair rate (a repair sample is correct) overall ("all") and per failure class: every
    sample counts (correct / n), with a percentile bootstrap CI over the original problems
    (metadata "original_problem"; a cluster bootstrap, module docstring): the problems are
    resampled with replacement, each with all its tasks and samples. rows are evaluation
    samples of the tasks. Raises when a task has no row, naming it."""
    by_task = defaultdict(list)
    for r in rows:
        by_task[r["problem_id"]].append(int(r["outcome"] == "correct"))
    groups = defaultdict(dict)  # name -> {original problem: [correct, n, tasks]}
    for t in tasks:
        if t.id not in by_task:
            raise ValueError(f"repair task {t.id!r} has no evaluated sample")
        vals = by_task[t.id]
        original = (t.metadata or {}).get("original_problem", t.id)
        for name in ("all", t.metadata["failure"]):
            cell = groups[name].setdefault(original, [0, 0, 0])
            cell[0] += sum(vals)
            cell[1] += len(vals)
            cell[2] += 1
    out = {}
    for name, per_problem in groups.items():
        counts = [[c, n] for c, n, _ in per_problem.values()]
        mean, lo, hi = bootstrap_ci(counts, stat=pooled_rate, n_boot=n_boot, seed=seed)
        out[name] = {
            "repair_rate": mean,
            "ci_low": lo,
            "ci_high": hi,
            "n": sum(n for _, n in counts),
            "n_tasks": sum(k for _, _, k in per_problem.values()),
            "n_problems": len(per_problem),
        }
    return out
