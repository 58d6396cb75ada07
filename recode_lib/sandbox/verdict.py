"""Verdicts: compare outputs with expected values, and fold per-test statuses into a result.

    test_status(spec, msg, nonce) -> "passed" | "wrong_answer" | ...   (one worker T message)
    summarize(spec, tests) -> {"status", "outcome", "passed", "total", "time_s", "memory_mb"}

Comparisons run in the judge, on decoded plain data, so nothing the submission defines takes
part in them:
- call: EvalPlus 0.3.1 rules — `out == expected`; if that fails and atol != 0 (atol becomes
  1e-6 when the expected value is a float or a non-empty list/tuple of floats) the types must
  match, list/tuple lengths must match and every element satisfy |out - exp| <= atol + 1e-7*|exp|
  (numpy.allclose, NaN unequal, equal infinities equal). A `checker` replaces all of this.
- stdio: LiveCodeBench rules — outputs stripped, split into lines, lines compared after
  stripping; a differing line still matches when both split into the same numbers
  (Decimal equality: "1.0" == "1.00"), or within `float_tol` when the tests give one.
Aggregation: passed if every test passed; else the status of the first failing test (in
execution order: ascending input length), preferring a correctness failure (wrong_answer,
runtime_error) over time/memory; outcome per the extrapolation paper: correct |
optimization_failure (every completed test right, some over time or memory) |
correctness_failure | format_error (no_code, syntax_error).
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from recode_lib.sandbox import codec

RAW = {"error": "runtime_error", "crash": "runtime_error", "output": "runtime_error",
       "memory": "memory_limit", "timeout": "time_limit", "syntax": "syntax_error",
       "wrong": "wrong_answer"}
CORRECTNESS = ("wrong_answer", "runtime_error")
LIMITS = ("time_limit", "memory_limit")


def _is_floats(x) -> bool:
    if type(x) is float:
        return True
    if isinstance(x, (list, tuple)) and x:
        return all(type(i) is float for i in x)
    return False


def _num(x) -> bool:
    return type(x) in (int, float, bool)


def _allclose(a, b, atol: float, rtol: float = 1e-7) -> bool:
    if _num(a) and _num(b):
        if math.isinf(a) or math.isinf(b):
            return a == b
        return abs(a - b) <= atol + rtol * abs(b)  # NaN compares False
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return all(_allclose(x, y, atol, rtol) for x, y in zip(a, b))
    return False


def default_equal(out, exp, atol: float = 0.0) -> bool:
    """EvalPlus's output comparison on plain data (see the module docstring)."""
    try:
        exact = out == exp
    except Exception:
        return False
    if atol == 0 and _is_floats(exp):
        atol = 1e-6
    if not exact and atol != 0:
        if type(out) is not type(exp):
            return False
        if isinstance(exp, (list, tuple)) and len(out) != len(exp):
            return False
        return _allclose(out, exp, atol)
    return bool(exact)


@lru_cache(maxsize=256)
def _compile_checker(source: str):
    ns = {"default_equal": default_equal, "math": math}
    exec(compile(source, "<checker>", "exec"), ns)
    if not callable(ns.get("check")):
        raise ValueError("tests.checker must define check(args, output, expected, atol)")
    return ns["check"]


def _decimals(line: str):
    try:
        return [Decimal(tok) for tok in line.split()]
    except (InvalidOperation, ValueError):
        return None


def stdio_equal(out: str, exp: str, float_tol: float | None = None) -> bool:
    got, want = out.strip().split("\n"), exp.strip().split("\n")
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        g, w = g.strip(), w.strip()
        if g == w:
            continue
        dg, dw = _decimals(g), _decimals(w)
        if dg is None or dw is None or len(dg) != len(dw):
            return False
        if dg == dw:
            continue
        if float_tol is None or not all(
                abs(x - y) <= Decimal(str(float_tol)) * max(1, abs(y)) for x, y in zip(dg, dw)):
            return False
    return True


def test_status(spec, msg: dict, nonce: str | None = None) -> str:
    st = msg.get("st")
    if st != "ok":
        return RAW.get(st, "runtime_error")
    i = msg["i"]
    if spec.kind == "script":
        return "passed" if nonce is not None and msg.get("out") == nonce else "runtime_error"
    out = msg.get("out")
    if spec.kind == "stdio":
        ok = isinstance(out, str) and stdio_equal(out, spec.expected[i], spec.stdio_tol)
        return "passed" if ok else "wrong_answer"
    try:
        value = codec.decode(out)
    except Exception:
        return "wrong_answer"
    if spec.checker:  # trusted problem code; an opaque value reaches it as an Opaque (equal to nothing)
        try:
            ok = bool(_compile_checker(spec.checker)(spec.args[i], value, spec.expected[i],
                                                     spec.atol))
        except Exception:
            ok = False
    elif codec.contains_opaque(out):
        ok = False
    else:
        ok = default_equal(value, spec.expected[i], spec.atol)
    return "passed" if ok else "wrong_answer"


def outcome_of(status: str, tests: list[dict]) -> str:
    if status == "passed":
        return "correct"
    if status in ("no_code", "syntax_error"):
        return "format_error"
    if any(t["status"] in CORRECTNESS for t in tests):
        return "correctness_failure"
    return "optimization_failure"


def summarize(spec, tests: list[dict]) -> dict:
    order = spec.job.get("order", range(len(tests)))
    failing = [tests[i]["status"] for i in order if tests[i]["status"] not in ("passed", "skipped")]
    if not failing:
        status = "passed" if all(t["status"] == "passed" for t in tests) else "runtime_error"
    elif "syntax_error" in failing:
        status = "syntax_error"
    else:
        corr = [s for s in failing if s in CORRECTNESS]
        status = corr[0] if corr else failing[0]
    times = [t["time_s"] for t in tests if t["time_s"] is not None]
    mems = [t["memory_mb"] for t in tests if t["memory_mb"] is not None]
    return {"status": status, "outcome": outcome_of(status, tests),
            "passed": sum(t["status"] == "passed" for t in tests), "total": len(tests),
            "time_s": round(sum(times), 6), "memory_mb": round(max(mems), 2) if mems else None}
