"""The reward-function wrapper and the batch plumbing every code reward shares.

    fn = RewardFunction("outcome", compute, ("out",))  # compute(prompts, completions, kwargs)
    parsed, results = execute(completions, kwargs, runner)   # assemble + run in the sandbox
    rows = [base_row(p, r) for p, r in zip(parsed, results)]  # fmt/out/status/outcome/error/reason

Truncated completions: a completion that hit the token limit is a format error (paper B: format
errors at |alpha| > 2 are "token exhaustion"), even when a partial code block parses. TRL 1.16
gives reward functions `completion_ids` (each cut after its first EOS) and calls a completion
truncated when its last id is neither an EOS nor the pad token; `truncated_flags` applies that
rule with the stop ids a RewardFunction carries in `stop_token_ids` (recode_lib.training.grpo
sets them from the trainer). A RewardFunction scores a truncated completion as an empty answer:
R_fmt = 0, nothing executed, no outcome credit, reason "truncated". Without completion_ids or
stop ids (direct calls, evaluation) nothing is treated as truncated.

Same program as evaluation: a code reward receives the real problem — a training row's
`problem` column is the Problem as JSON text (Problem.to_json; recode_lib.training.grpo.code_row
writes it) and `execute` reads it back with Problem.from_json, the one conversion — so assemble
gets the very Problem evaluation gives it (starter code, entry point, metadata["prelude"]) and
the sandbox the same tests, limits and bench_env.record_extras (`run_problems`): a reward of 1
means the evaluation verdict is correct. `execute` also refuses, before running anything, tests
that run in the submission's own process unless the runner allows them
(SandboxRunner.check_tests; recode_lib.rewards.execution).

`column` reads a dataset column (list or scalar) for a batch (TRL's strings or chat messages
become text with recode_lib.core.prompts.completion_text / prompt_text). It registers no reward
(recode_lib.rewards.code does).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from recode_lib.core.assemble import assemble
from recode_lib.core.bench_env import record_extras
from recode_lib.core.errors import RecodeError
from recode_lib.core.prompts import completion_text, failure_reason
from recode_lib.data.schema import Problem, ProblemError
from recode_lib.rewards.execution import REWARD_ERROR, SandboxRunner
from recode_lib.rewards.registry import RewardDataError
from recode_lib.sandbox.result import Outcome, Status


class RewardFunction:
    """A TRL reward function: __call__ returns floats; details() returns per-sample dicts.

    A sample whose reward could not be computed — a sandbox or reward-model infrastructure
    failure (row "error": the batch timed out, the sandbox raised, the RM endpoint failed) —
    gets None, not 0: TRL leaves a completion every reward function returned None for out of
    its group's baseline (advantage 0) instead of counting a failure of the machinery as a
    wrong answer, which would skew the group's advantages. Its reason is logged as usual.

    No exception of one sample leaves a reward function (guarded_rows): a batch whose
    computation raises anything but a RecodeError (a configuration or dataset error, raised
    before anything runs) is computed again sample by sample, and a sample that raises alone
    gets None with the exception as its logged reason; the others keep their rewards."""

    def __init__(self, name: str, compute: Callable[..., list[dict]], components: tuple[str, ...]):
        self.__name__ = name
        self._compute = compute
        self.components = components
        self.stop_token_ids: list[int] | None = None  # EOS ids + pad: see truncated_flags

    def details(self, prompts, completions, **kwargs) -> list[dict]:
        completions = list(completions)
        flags = truncated_flags(kwargs.get("completion_ids"), self.stop_token_ids, len(completions))
        if any(flags):
            completions = ["" if f else c for c, f in zip(completions, flags, strict=True)]
        rows = guarded_rows(self._compute, list(prompts), completions, kwargs)
        for r, f in zip(rows, flags, strict=True):
            r["truncated"] = f
            if f:
                r["reason"] = "truncated (hit the token limit)"
        return rows

    def __call__(self, prompts, completions, **kwargs) -> list[float | None]:
        log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
        rows = self.details(prompts, completions, **kwargs)
        rewards = []
        for r in rows:
            if r.get("error"):
                rewards.append(None)
                continue
            v = float(r["reward"])
            if not math.isfinite(v):
                r["reason"] = (r.get("reason", "") + f"; non-finite reward {v}").strip("; ")
                v = 0.0
            rewards.append(v)
        if rows and log_metric is not None:
            for c in ("reward",) + self.components:
                vals = [r[c] for r in rows if r.get(c) is not None]
                if vals:
                    log_metric(f"{self.__name__}/{c}", sum(vals) / len(vals))
            log_metric(
                f"{self.__name__}/error_rate", sum(r.get("error", False) for r in rows) / len(rows)
            )
        if rows and log_extra is not None:
            for c in self.components:
                log_extra(f"{self.__name__}/{c}", [r.get(c) for r in rows])
            log_extra(f"{self.__name__}/reason", [r.get("reason", "") for r in rows])
        return rewards


def failed_row(exc: BaseException) -> dict:
    """The row of a sample whose reward raised: an infrastructure None, with the reason."""
    return {"reward": 0.0, "error": True, "reason": "reward error: " + failure_reason(exc)}


def sample_kwargs(kwargs: dict, i: int, n: int) -> dict:
    """The columns of row i alone: every list or tuple of n values cut to [i:i+1]."""
    return {
        k: (v[i : i + 1] if isinstance(v, (list, tuple)) and len(v) == n else v)
        for k, v in kwargs.items()
    }


def guarded_rows(compute, prompts: list, completions: list, kwargs: dict) -> list[dict]:
    """compute(prompts, completions, kwargs), one row per completion, that never lets one
    sample's exception reach the training or evaluation loop: RecodeErrors (configuration and
    dataset errors) are raised; on any other exception the batch is computed again sample by
    sample and a sample that still raises gets failed_row. A backstop: the seams below it
    (recode_lib.core.prompts.parse_response, recode_lib.core.assemble.assemble, the sandbox runner,
    the process reward) never raise for a completion, so no completion is known to reach it. Limit:
    with a collective (ZeRO-3-sharded) reward model a rank in the fallback would make other
    collective calls than its peers."""
    n = len(completions)
    try:
        rows = compute(prompts, completions, kwargs)
        if len(rows) != n:
            raise RuntimeError(f"the reward computed {len(rows)} rows for {n} completions")
        return rows
    except RecodeError:
        raise
    except Exception as exc:
        if n == 1:
            return [failed_row(exc)]
    out = []
    for i in range(n):
        try:
            row = compute(prompts[i : i + 1], completions[i : i + 1], sample_kwargs(kwargs, i, n))
            if len(row) != 1:
                raise RuntimeError(f"the reward computed {len(row)} rows for one completion")
            out.append(row[0])
        except RecodeError:
            raise
        except Exception as exc:
            out.append(failed_row(exc))
    return out


def truncated_flags(completion_ids, stop_token_ids, n: int) -> list[bool]:
    """TRL's rule per completion: truncated iff its ids are non-empty and the last is not a stop
    id (EOS or pad). All False without completion_ids or stop ids."""
    if not completion_ids or not stop_token_ids:
        return [False] * n
    stops = {int(t) for t in stop_token_ids if t is not None}
    ids = list(completion_ids)
    if len(ids) != n:
        raise RewardDataError(f"completion_ids has {len(ids)} rows for {n} completions")
    return [bool(len(row)) and int(list(row)[-1]) not in stops for row in ids]


def column(kwargs: dict, name: str, n: int):
    """Column `name` of a batch of n rows: a list as is, a missing or scalar value repeated."""
    v = kwargs.get(name)
    return list(v) if isinstance(v, (list, tuple)) else [v] * n


def row_problems(kwargs: dict, n: int) -> list[Problem]:
    """The Problem of each of a batch's n rows, from its `problem` column (Problem.from_json:
    to_json's text, a to_dict mapping or a Problem); RewardDataError (a ValueError) naming the
    row when the column is missing or a value is not a problem."""
    if "problem" not in kwargs:
        raise RewardDataError(
            "the dataset has no 'problem' column: code rewards judge each completion against "
            "its problem (recode_lib.training.grpo.build_dataset writes it)"
        )
    out = []
    for i, value in enumerate(column(kwargs, "problem", n)):
        try:
            out.append(Problem.from_json(value, f"row {i}"))
        except ProblemError as exc:
            raise RewardDataError(str(exc)) from None
    return out


def run_problems(runner: SandboxRunner, problems: list, codes: list, ids: list, step=None):
    """runner.run of codes[i] on problems[i]: its tests, time and memory limits and
    bench_env.record_extras (the record fields recode_lib.sandbox.sandbox_record gives it;
    passed only when a problem has some, so a runner without extras still serves)."""
    extras = [record_extras(p) for p in problems]
    return runner.run(
        codes,
        [p.tests for p in problems],
        ids=ids,
        step=step,
        time_limit_s=[float(p.time_limit_s) for p in problems],
        memory_mb=[int(p.memory_mb) for p in problems],
        **({"extras": extras} if any(extras) else {}),
    )


def execute(completions, kwargs, runner: SandboxRunner, texts=None) -> tuple[list, list]:
    """(parsed responses, sandbox results) for a batch against each row's problem (row_problems);
    raises RewardDataError (a ValueError) for a row without a problem, and InProcessTestsError
    (a ValueError) for problems whose tests run in the submission's process unless the runner
    allows them — checked for the whole batch before anything runs. assemble never raises for
    a completion (a format error instead)."""
    n = len(completions)
    texts = texts or [completion_text(c) for c in completions]
    problems = row_problems(kwargs, n)
    for i, p in enumerate(problems):
        runner.check_tests(p.tests, f"row {i} (problem_id {p.id!r})")
    progs = [assemble(p, t) for p, t in zip(problems, texts, strict=True)]
    step = getattr(kwargs.get("trainer_state"), "global_step", None)
    ids = [f"{p.id}#{i}" for i, p in enumerate(problems)]
    results = run_problems(runner, problems, [p.code for p in progs], ids, step)
    return [p.parsed for p in progs], results


def base_row(parsed, result) -> dict:
    """The shared per-sample fields of a code reward from a parsed response and its result."""
    err = result.get("status") == REWARD_ERROR
    reason = result.get("reason", "") if err else ("" if parsed.format_ok else parsed.reason)
    if not err and result.get("status") not in (Status.PASSED, None) and parsed.code is not None:
        reason = (reason + "; " if reason else "") + str(result.get("status"))
    return {
        "fmt": float(parsed.format_ok),
        "out": float(result.get("outcome") == Outcome.CORRECT),
        "status": result.get("status"),
        "outcome": result.get("outcome"),
        "error": err,
        "reason": reason,
    }
