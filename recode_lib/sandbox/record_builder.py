"""The one builder of sandbox input records: every path that judges code builds its record here
(evaluation's rows, the GRPO rewards' SandboxRunner, CRPL's and LCB-RB's traces).

    rec = sandbox_record("humaneval/0#3", code, problem)   # a Problem's tests, limits, extras
    rec = submission_record(sid, code, tests, time_limit_s=10.0, memory_mb=1024,
                            extras={"requires": ["numpy"]})

A problem's record carries its tests, time and memory limits and
recode_lib.core.bench_env.record_extras ("requires": the modules it needs, so a problem the
interpreter cannot run is `env_missing`; "python": BigCodeBench's own interpreter when built).
code None is a sample without code (the sandbox judges it `no_code`, running nothing). It builds
records only: it validates nothing (records.parse_record does) and runs nothing.
"""

from __future__ import annotations

from recode_lib.core.bench_env import record_extras

EXTRA_FIELDS = ("requires", "python")  # what a record carries besides code, tests and limits


def submission_record(
    sid,
    code: str | None,
    tests: dict,
    *,
    time_limit_s: float | None = None,
    memory_mb: int | None = None,
    extras: dict | None = None,
) -> dict:
    """The record judging `code` on `tests`; a limit of None is left out (the sandbox's
    configured default applies). `extras` may hold only EXTRA_FIELDS (ValueError naming any
    other key: an extra never replaces the id, code, tests or limits)."""
    extras = extras or {}
    unknown = sorted(set(extras) - set(EXTRA_FIELDS))
    if unknown:
        raise ValueError(f"record {sid!r}: unknown extras {unknown} (allowed: {EXTRA_FIELDS})")
    rec = {"id": sid, "code": code, "tests": tests}
    if time_limit_s is not None:
        rec["time_limit_s"] = float(time_limit_s)
    if memory_mb is not None:
        rec["memory_mb"] = int(memory_mb)
    rec.update(extras)
    return rec


def sandbox_record(sid, code: str | None, problem) -> dict:
    """The record judging `code` (None: no code) on `problem` (a Problem, or anything with
    tests, time_limit_s, memory_mb, and the source/metadata record_extras reads)."""
    return submission_record(
        sid,
        code,
        problem.tests,
        time_limit_s=problem.time_limit_s,
        memory_mb=problem.memory_mb,
        extras=record_extras(problem),
    )
