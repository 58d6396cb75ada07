"""Validate a sandbox input record and turn it into a job for a worker plus what the judge keeps.

    spec = parse_record(record, config, where="in.jsonl:3")
    spec.job        # sent to the worker: code, kind, inputs (texts: stdin, or the JSON of the
                    # arguments), order, limits (never the expected values)
    spec.expected   # kept by the judge: decoded expected outputs (call) / texts (stdio)

It runs nothing (pool.py and zygote.py do); the expected values stay with the judge, never in
the job.
More: docs/modules/sandbox.md (recode_lib.sandbox.records).
"""

from __future__ import annotations

import difflib
import json
import math
import os
from dataclasses import dataclass, field

from recode_lib.core.errors import RecodeError
from recode_lib.core.jsonl import nested_deeper
from recode_lib.sandbox import codec
from recode_lib.sandbox.environment import MODULE_NAME, top_level


class RecordError(RecodeError, ValueError):
    """A sandbox input record that does not fit the contract."""


@dataclass
class Spec:
    id: object
    kind: str
    job: dict
    expected: list = field(default_factory=list)
    args: list = field(default_factory=list)
    input_lens: list = field(default_factory=list)
    atol: float = 0.0
    checker: str | None = None
    stdio_checker: str | None = None  # testlib C++ source (checker.py)
    stdio_tol: float | None = None
    no_code: bool = False
    requires: tuple = ()  # top-level modules the problem needs (environment.py)
    python: str | None = None  # the record's own interpreter (None: the config's)
    # call tests: whether expected[i] is a plain scalar or a flat list of them, so that
    # `out == expected` on the raw JSON output already decides a pass (verdict.test_status)
    plain: list = field(default_factory=list)


# types codec.decode returns as they are, and whose == is the builtin one
PLAIN_SCALARS = (int, float, str, bool, type(None))


def _fail(where, msg):
    raise RecordError(f"{where}: {msg}")


MAX_CASE_LIMIT_S = 1e9  # a case's own time_limit_s is below this (finite, float-sized)
RECORD_FIELDS = ("id", "code", "tests", "time_limit_s", "memory_mb", "requires", "python")
TESTS_FIELDS = {
    "stdio": ("kind", "cases", "float_tol", "checker", "time_rule"),
    "call": ("kind", "fn_name", "cases", "atol", "checker", "time_rule"),
    "script": ("kind", "script", "entry_point", "separate", "helpers", "time_rule"),
}
CASE_FIELDS = {
    "stdio": ("input", "output", "input_len", "time_limit_s"),
    "call": ("args", "expected", "input_len", "time_limit_s"),
}


MAX_ID_DEPTH = 64  # lists/objects in an id nest at most this deep


def check_id(value, where: str) -> None:
    """RecordError unless `value` can be written back as the id of a strict-JSON, UTF-8 output
    line exactly as given: not null, nested at most MAX_ID_DEPTH deep, and no NaN/infinity or
    lone surrogate anywhere in it. The depth is bounded explicitly: bounded only by the
    interpreter's recursion limit, an id ~970 deep passed `recode sandbox`'s reading of its
    lines and failed the same check deeper in the stack (execute_many), which stopped the whole
    file instead of refusing that line."""
    if value is None:
        _fail(where, "field 'id' must not be null")
    if nested_deeper(value, MAX_ID_DEPTH):
        _fail(
            where,
            f"field 'id' cannot be written back as strict JSON (nested too deeply: more than "
            f"{MAX_ID_DEPTH} levels)",
        )
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (ValueError, TypeError, UnicodeError, RecursionError) as exc:
        why = (
            "a lone surrogate"
            if isinstance(exc, UnicodeError)
            else ("nested too deeply" if isinstance(exc, RecursionError) else "NaN or infinity")
        )
        _fail(where, f"field 'id' cannot be written back as strict JSON ({why}): {value!r:.80}")


def _unknown(obj: dict, allowed, prefix: str, where: str) -> None:
    for name in obj:
        if name not in allowed:
            near = difflib.get_close_matches(str(name), allowed, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            _fail(
                where,
                f"unknown field {prefix + str(name)!r}{hint}; the record format has "
                f"{', '.join(allowed)} (docs/sandbox.md, Records)",
            )


def check_fields(rec, where: str) -> None:
    """RecordError naming the first field of `rec`, its tests or a case that the record
    contract does not have (a misspelling is otherwise ignored silently). Checks names only;
    parse_record checks values."""
    if not isinstance(rec, dict):
        _fail(where or "record", f"expected a JSON object, got {type(rec).__name__}")
    _unknown(rec, RECORD_FIELDS, "", where)
    tests = rec.get("tests")
    if not isinstance(tests, dict) or tests.get("kind") not in TESTS_FIELDS:
        return  # parse_record names what is wrong with tests
    kind = tests["kind"]
    _unknown(tests, TESTS_FIELDS[kind], "tests.", where)
    cases = tests.get("cases")
    if kind in CASE_FIELDS and isinstance(cases, list):
        for j, case in enumerate(cases):
            if isinstance(case, dict):
                _unknown(case, CASE_FIELDS[kind], f"tests.cases[{j}].", where)


IN_PROCESS_MARKERS = ("unittest", "mock")  # a script naming one runs in-process by default


def script_separate(tests: dict):
    """The `separate` of script tests: tests.separate when given (validated by parse_record),
    else True unless the script mentions unittest or mock (those tests need the submission's
    objects in their own process). The one rule; runs_in_process and parse_record use it."""
    sep = tests.get("separate")
    if sep is None:
        script = tests.get("script")
        sep = not (isinstance(script, str) and any(w in script for w in IN_PROCESS_MARKERS))
    return sep


def runs_in_process(tests) -> bool:
    """True when these tests run in the submission's own process — tests.kind "script" and not
    separate (script_separate) — where the submission can forge the verdict (result.IN_PROCESS).
    Decided from the tests alone, before and without running anything."""
    return (
        isinstance(tests, dict)
        and tests.get("kind") == "script"
        and script_separate(tests) is not True
    )


PER_RECORD = "per_record"  # the time rule of tests without tests.time_rule


def time_rule_of(tests) -> str:
    """The time-limit rule the tests were built with: tests["time_rule"] ("evalplus": each
    case its own limit, "recode": one per task, data/evalplus.py), else "per_record" (one limit
    for every test of the record). For rows and summaries (evaluation.summary.time_rule_counts)."""
    rule = tests.get("time_rule") if isinstance(tests, dict) else None
    return rule if isinstance(rule, str) and rule else PER_RECORD


def parse_record(rec, config, where: str = "") -> Spec:
    where = where or f"record {rec.get('id', '?')!r}" if isinstance(rec, dict) else where
    if not isinstance(rec, dict):
        _fail(where or "record", f"expected a JSON object, got {type(rec).__name__}")
    for req in ("id", "tests"):
        if req not in rec:
            _fail(where, f"missing field {req!r}")
    check_id(rec["id"], where)
    code = rec.get("code")
    if code is not None and not isinstance(code, str):
        _fail(where, f"field 'code' must be a string or null, got {type(code).__name__}")
    tests = rec["tests"]
    if not isinstance(tests, dict):
        _fail(where, f"field 'tests' must be an object, got {type(tests).__name__}")
    kind = tests.get("kind")
    if kind not in ("stdio", "call", "script"):
        _fail(where, f"field 'tests.kind' must be stdio, call or script, got {kind!r}")
    tl = rec.get("time_limit_s", config.time_limit_s)
    mem = rec.get("memory_mb", config.memory_mb)
    for name, val in (("time_limit_s", tl), ("memory_mb", mem)):
        if (
            isinstance(val, bool)
            or not isinstance(val, (int, float))
            or not val > 0
            or not math.isfinite(val)
        ):
            _fail(where, f"field {name!r} must be a positive finite number, got {val!r:.80}")
    rule = tests.get("time_rule")
    if rule is not None and (not isinstance(rule, str) or not rule):
        _fail(where, f"field 'tests.time_rule' must be a non-empty string, got {rule!r:.80}")
    requires = rec.get("requires")
    if requires is not None and (
        not isinstance(requires, list)
        or not all(isinstance(m, str) and MODULE_NAME.match(m) for m in requires)
    ):
        _fail(where, f"field 'requires' must be a list of module names, got {requires!r:.80}")
    python = rec.get("python")
    if python is not None and not (
        isinstance(python, str)
        and os.path.isabs(python)
        and os.path.isfile(python)
        and os.access(python, os.X_OK)
    ):
        _fail(
            where,
            f"field 'python' must be the absolute path of an executable file, got {python!r:.120}",
        )
    spec = Spec(
        id=rec["id"],
        kind=kind,
        job={},
        no_code=not (code or "").strip(),
        requires=tuple(sorted({top_level(m) for m in requires or ()})),
        python=python,
    )
    job = {
        "op": "job",
        "kind": kind,
        "code": code or "",
        "time_limit_s": float(tl),
        "memory_mb": int(mem),
        "max_output": config.max_output_bytes,
        "sealed": bool(config.sealed_inputs) and kind == "call",
    }
    if kind == "script":
        if not isinstance(tests.get("script"), str):
            _fail(where, "field 'tests.script' must be a string")
        ep = tests.get("entry_point")
        if ep is not None and (not isinstance(ep, str) or not ep.isidentifier()):
            _fail(where, f"field 'tests.entry_point' must be a Python name, got {ep!r:.80}")
        sep = script_separate(tests)
        if not isinstance(sep, bool):
            _fail(where, f"field 'tests.separate' must be true or false, got {sep!r:.80}")
        helpers = tests.get("helpers")
        if helpers is not None and not isinstance(helpers, str):
            _fail(
                where,
                "field 'tests.helpers' must be Python source (a string), got "
                f"{type(helpers).__name__}",
            )
        job.update(
            script=tests["script"],
            inputs=[],
            order=[0],
            entry_point=ep,
            separate=sep,
            helpers=helpers,
        )
        spec.input_lens = [0]
        spec.job = job
        return spec
    cases = tests.get("cases")
    if not isinstance(cases, list) or not cases:
        _fail(where, "field 'tests.cases' must be a non-empty list")
    inputs, case_limits, own_limits = [], [], False
    for j, case in enumerate(cases):
        cw = f"field 'tests.cases[{j}]"
        if not isinstance(case, dict):
            _fail(where, f"{cw}' must be an object")
        if kind == "stdio":
            for key in ("input", "output"):
                if not isinstance(case.get(key), str):
                    _fail(where, f"{cw}.{key}' must be a string, got {case.get(key)!r:.80}")
            inputs.append(case["input"])
            spec.expected.append(case["output"])
            n = len(case["input"])
        else:
            if not isinstance(case.get("args"), list):
                _fail(where, f"{cw}.args' must be a list, got {case.get('args')!r:.80}")
            if "expected" not in case:
                _fail(where, f"{cw}' has no 'expected'")
            text = json.dumps(case["args"])  # the worker stores it as text, see zygote.py
            try:
                # plain values (no dict anywhere, so no tag) decode to themselves: kept as
                # given, skipping the decoder's copy (HumanEval+'s ~124,000 cases: 0.5 s)
                args = case["args"] if "{" not in text else codec.decode(case["args"])
                exp = case["expected"]
                plain = type(exp) in PLAIN_SCALARS or (
                    type(exp) is list and all(type(v) in PLAIN_SCALARS for v in exp)
                )
                spec.expected.append(exp if plain else codec.decode(exp))
                spec.plain.append(plain)
                spec.args.append(args)
            except (ValueError, TypeError, KeyError) as exc:
                _fail(where, f"{cw}': bad tagged value ({exc})")
            inputs.append(text)
            n = len(text)
        ln = case.get("input_len")
        if ln is None:
            ln = n
        elif isinstance(ln, bool) or not isinstance(ln, int) or ln < 0:
            _fail(where, f"{cw}.input_len' must be a non-negative integer, got {ln!r}")
        spec.input_lens.append(ln)
        ctl = case.get("time_limit_s")
        if ctl is not None:
            if (
                isinstance(ctl, bool)
                or not isinstance(ctl, (int, float))
                or not 0 < ctl < MAX_CASE_LIMIT_S
            ):
                _fail(
                    where,
                    f"{cw}.time_limit_s' must be a positive finite number of seconds "
                    f"(below {MAX_CASE_LIMIT_S:g}), got {ctl!r:.80}",
                )
            own_limits = True
        case_limits.append(float(tl) if ctl is None else float(ctl))
    if kind == "call":
        if not isinstance(tests.get("fn_name"), str) or not tests["fn_name"]:
            _fail(where, "field 'tests.fn_name' must be a non-empty string")
        atol = tests.get("atol", 0) or 0
        if (
            isinstance(atol, bool)
            or not isinstance(atol, (int, float))
            or not atol >= 0
            or not math.isfinite(atol)
        ):
            _fail(where, f"field 'tests.atol' must be a non-negative number, got {atol!r}")
        spec.atol = float(atol)
        checker = tests.get("checker")
        if checker is not None and not isinstance(checker, str):
            _fail(where, "field 'tests.checker' must be Python source (a string)")
        spec.checker = checker
        job["fn_name"] = tests["fn_name"]
    else:
        tol = tests.get("float_tol")
        if tol is not None and (
            isinstance(tol, bool)
            or not isinstance(tol, (int, float))
            or not tol >= 0
            or not math.isfinite(tol)
        ):
            _fail(where, f"field 'tests.float_tol' must be a non-negative number, got {tol!r}")
        spec.stdio_tol = tol
        sc = tests.get("checker")
        if sc is not None and (not isinstance(sc, str) or not sc.strip()):
            _fail(
                where,
                "field 'tests.checker' of stdio tests must be testlib C++ source "
                f"(a non-empty string), got {sc!r:.80}",
            )
        spec.stdio_checker = sc
    job["inputs"] = inputs
    job["order"] = sorted(range(len(inputs)), key=spec.input_lens.__getitem__)
    if own_limits:  # per-test limits, parallel to inputs (the record's where a case has none)
        job["time_limits"] = case_limits
    spec.job = job
    return spec
