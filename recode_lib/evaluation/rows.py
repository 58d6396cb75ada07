"""The one row builder of evaluation: a finished episode and its sandbox verdict -> a
samples.jsonl row.

    row, record = episode_row(problem, episode)      # record: what the sandbox judges
    row.update(result_fields(sandbox_result))        # the verdict's fields (one set, any setting)
    rows = check_rows(JsonlStore(out / "samples.jsonl"))   # {id: row}; raises on a bad row

Every setting (single, tool, agentic: recode_lib.evaluation.episodes) writes the same fields:
  id "<problem_id>#<sample>", problem_id, sample, setting, response (the final answer's text),
  code (the program recode_lib.core.assemble built from it; None: a format error), n_tokens (the
  model's tokens over every turn, tool results excluded), finish_reason (of the last turn),
  format_ok, format_reason, assembly, dropped, time_rule (records.time_rule_of the tests),
  turns, tool_calls, tool_errors, tool_statuses, no_answer ("" or why the episode gave no
  answer), transcript (the generated messages and tool results; None in the single setting,
  whose one message is `response`), and the verdict's fields (result_fields): status, outcome,
  passed, total, time_s, memory_mb, trust, reason (why it failed: the exception's type and last
  line, the judge's refusal or the missing modules; None when it passed), strictness
  ({"1".."5","inf"}: R_k of the extrapolation paper), first_failure (sandbox.first_failure; None
  when correct or when there was no code), checker (only for problems with a testlib checker:
  "testlib" or "exact_fallback", the latter only where the user asked for the fallback, with
  checker_reason).
A sample without code (no parsable block, no answer, or a truncated answer: paper B's format
errors at |alpha| > 2 are "token exhaustion"; a response the judge cannot read: nested too
deep for Python's parser, not text — recode_lib.core.assemble never raises for one) is still a
sandbox record, with code None: the
sandbox judges it without running anything (status "no_code", outcome "format_error",
recode_lib.sandbox.verdict.no_code_result), so a no-code row is the same dict shape, built by
the same function, in every setting. Every row can be written as UTF-8 JSON (storable: a lone
surrogate in a response becomes U+FFFD). It generates nothing and runs nothing itself.
"""

from __future__ import annotations

import json

from recode_lib.core.assemble import assemble
from recode_lib.core.jsonl import JsonlError, JsonlStore
from recode_lib.core.prompts import failure_reason
from recode_lib.data.schema import Problem
from recode_lib.generation.base import FinishReason
from recode_lib.sandbox import first_failure, sandbox_record, strictness
from recode_lib.sandbox.records import time_rule_of
from recode_lib.sandbox.rk import DEFAULT_RK_RULE

STRICTNESS_KS = (1, 2, 3, 4, 5, "inf")
TRUNCATED = FinishReason.LENGTH  # the finish_reason of a response that hit max_new_tokens
REQUIRED = (
    "problem_id",
    "sample",
    "response",
    "code",
    "status",
    "outcome",
    "passed",
    "total",
    "n_tokens",
    "finish_reason",
)
RESULT_FIELDS = ("status", "outcome", "passed", "total", "time_s", "memory_mb")


def as_problems(problems) -> list[Problem]:
    """Problems (or their dicts) checked: each a Problem, ids distinct, at least one."""
    out, seen = [], set()
    for i, p in enumerate(problems):
        if isinstance(p, dict):
            p = Problem.from_dict(p, where=f"problem {i} ({p.get('id', '?')!r})")
        if not isinstance(p, Problem):
            raise TypeError(f"problem {i}: expected a Problem, got {type(p).__name__}")
        if p.id in seen:
            raise ValueError(f"problem {i}: duplicate id {p.id!r}")
        seen.add(p.id)
        out.append(p)
    if not out:
        raise ValueError("evaluate: no problems")
    return out


def sample_id(problem_id: str, sample: int) -> str:
    return f"{problem_id}#{sample}"


def episode_row(p, episode) -> tuple[dict, dict]:
    """(the row's episode fields, the sandbox record that judges its code: the sandbox's one
    builder, recode_lib.sandbox.sandbox_record) for one finished episode
    (recode_lib.evaluation.episodes.FinishedEpisode) of problem p."""
    prog = assemble(p, episode.response)
    sid = sample_id(p.id, episode.sample)
    cut = episode.truncated
    row = {
        "id": sid,
        "problem_id": p.id,
        "sample": episode.sample,
        "setting": episode.setting,
        "response": episode.response,
        "code": None if cut else prog.code,
        "n_tokens": episode.n_tokens,
        "finish_reason": episode.finish_reason,
        "format_ok": prog.parsed.format_ok and not cut,
        "format_reason": f"truncated at the token limit ({episode.n_tokens} tokens)"
        if cut
        else episode.no_answer or prog.parsed.reason,
        "assembly": prog.how,
        "dropped": prog.dropped,
        "time_rule": time_rule_of(p.tests),
        "turns": episode.turns,
        "tool_calls": episode.tool_calls,
        "tool_errors": episode.tool_errors,
        "tool_statuses": list(episode.tool_statuses),
        "no_answer": episode.no_answer,
        "transcript": episode.transcript,
    }
    return storable(row), sandbox_record(sid, row["code"], p)


def storable(row: dict) -> dict:
    """`row` as samples.jsonl can hold it (UTF-8 JSON): a field with a lone surrogate (a
    backend may decode one from JSON) gets U+FFFD in its place; a field that cannot be written
    at all (nested too deep) becomes a one-line note. A row that writes is returned as is."""
    try:
        json.dumps(row, ensure_ascii=False, default=str).encode("utf-8")
        return row
    except Exception:
        pass
    out = {}
    for key, value in row.items():
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
            try:
                text.encode("utf-8")
                out[key] = value
            except UnicodeEncodeError:
                fixed = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
                out[key] = json.loads(fixed)
        except Exception as exc:
            out[key] = f"<not storable: {failure_reason(exc)}>"
    return out


def result_fields(res: dict) -> dict:
    """The row fields of one sandbox result (an executed program or the sandbox's no-code
    verdict alike): status, outcome, passed, total, time_s, memory_mb, trust, strictness,
    first_failure (None for no code), and checker when the result has one."""
    out = {f: res[f] for f in RESULT_FIELDS}
    out["trust"] = res.get("trust")
    out["reason"] = res.get(
        "reason"
    )  # why it failed (sandbox.result.Result.reason); None if passed
    out["strictness"] = strictness(res, STRICTNESS_KS, DEFAULT_RK_RULE)
    out["strictness_rule"] = (
        DEFAULT_RK_RULE  # sandbox.rk.RK_RULES: how R_k reads small-test-less problems
    )
    out["first_failure"] = None if res["status"] == "no_code" else first_failure(res)
    if "checker" in res:  # testlib | exact_fallback (CodeContests+; fallback only when asked)
        out["checker"] = res["checker"]
        if res.get("checker_reason"):
            out["checker_reason"] = res["checker_reason"]
    return out


def check_rows(store: JsonlStore) -> dict[str, dict]:
    """{id: row} of a samples.jsonl; JsonlError naming the record that lacks a REQUIRED field."""
    by_id = {}
    for j, r in enumerate(store.records()):
        for f in REQUIRED:
            if f not in r:
                raise JsonlError(f"{store.path}: record {j + 1} (id {r['id']!r}) lacks field {f!r}")
        by_id[r["id"]] = r
    return by_id
