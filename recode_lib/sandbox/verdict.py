"""Verdicts: compare outputs with expected values, and fold per-test statuses into a result.

    run = Run(spec, early_stop)           # one record's verdicts as its messages arrive
    run.on_message(msg)                   # a validated protocol.Message -> True to stop early
    run.result(done_body, reason=None)    # -> result.Result
    test_status(spec, msg, nonce) -> "passed" | "wrong_answer" | ...   (one worker T message)
    summarize(spec, tests) -> {"status", "outcome", "passed", "total", "time_s", "memory_mb"}

Comparisons run in the judge on decoded plain data: nothing the submission defines takes part in
them.
More: docs/modules/sandbox.md (recode_lib.sandbox.verdict).
"""

from __future__ import annotations

import cmath
import math
import re
from decimal import Decimal, InvalidOperation, Overflow, localcontext
from functools import lru_cache
from itertools import zip_longest

from recode_lib.sandbox import codec
from recode_lib.sandbox.checker import check_output, compile_checker, fallback_reason
from recode_lib.sandbox.protocol import RAW
from recode_lib.sandbox.result import (
    CORRECTNESS,
    IN_PROCESS,
    ISOLATED,
    SKIPPED,
    Outcome,
    Status,
    outcome_of,
)
from recode_lib.sandbox.rk import DEFAULT_RK_RULE, strictness

STRICTNESS_KS = (1, 2, 3, 4, 5, "inf")


def _is_floats(x) -> bool:
    """EvalPlus's is_floats on plain decoded data (no numpy arrays reach the judge)."""
    if type(x) is float:
        return True
    if isinstance(x, (list, tuple)) and x:
        return all(type(i) is float for i in x)
    return False


def _num(x) -> bool:
    return type(x) in (int, float, bool, complex)


def _finite(x) -> bool:
    return cmath.isfinite(x) if type(x) is complex else math.isfinite(x)


def _allclose(a, b, atol: float, rtol: float = 1e-7) -> bool:
    """numpy.isclose(a, b).all() for numbers and (nested) lists/tuples of equal lengths."""
    if _num(a) and _num(b):
        if not (_finite(a) and _finite(b)):
            return a == b  # numpy: non-finite values by equality (NaN never equal)
        return abs(a - b) <= atol + rtol * abs(b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return all(_allclose(x, y, atol, rtol) for x, y in zip(a, b, strict=True))
    return False


def default_equal(out, exp, atol: float = 0.0) -> bool:
    """EvalPlus 0.3.1's output comparison on plain data (the module docstring says exactly
    where it differs: nested broadcasting, ragged nesting, atol carried across tests); sets and
    dicts compare with == only, as in EvalPlus. Never raises."""
    try:
        return _default_equal(out, exp, atol)
    except Exception:  # OverflowError, RecursionError, MemoryError, a hostile checker value...
        return False


def _default_equal(out, exp, atol: float) -> bool:
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


_TOKEN = re.compile(r"\S+")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
MAX_NUMBER_CHARS = 4300  # a longer token is compared as text only


def _decimal(tok: str):
    """The finite Decimal a token spells, else None (bounded: no huge or odd tokens)."""
    if len(tok) > MAX_NUMBER_CHARS:
        return None
    try:
        d = Decimal(tok)
    except (InvalidOperation, ValueError):
        return None
    return d if d.is_finite() else None


def _numeric(tok: str) -> bool:
    if _PLAIN_NUMBER.fullmatch(tok):
        return len(tok) <= MAX_NUMBER_CHARS
    return _decimal(tok) is not None


def stdio_equal(out: str, exp: str, float_tol: float | None = None) -> bool:
    """LiveCodeBench's line/number comparison (module docstring); never raises. Exact text
    first; then the line counts; lines are taken one at a time and a differing line is
    compared token by token, lazily (a Decimal only for tokens that differ), so neither a
    huge wrong line nor millions of lines cost the judge much memory."""
    try:
        if out == exp:
            return True
        with localcontext() as ctx:
            ctx.traps[InvalidOperation] = ctx.traps[Overflow] = False
            return _stdio_equal(out, exp, float_tol)
    except Exception:
        return False


def _lines(text: str):
    """The lines of text, lazily: a list of millions of short lines would cost the judge
    ~8x the output's size (a str object per line)."""
    pos = 0
    while True:
        j = text.find("\n", pos)
        if j < 0:
            yield text[pos:]
            return
        yield text[pos:j]
        pos = j + 1


def _stdio_equal(out: str, exp: str, float_tol: float | None) -> bool:
    got, want = out.strip(), exp.strip()
    if got.count("\n") != want.count("\n"):  # line counts first, without splitting
        return False
    tol = Decimal(str(float_tol)) if float_tol is not None else None
    for g, w in zip(_lines(got), _lines(want), strict=True):
        g, w = g.strip(), w.strip()
        if g == w:
            continue
        # lazily, pair by pair: the work is bounded by the expected line, not the output
        for mg, mw in zip_longest(_TOKEN.finditer(g), _TOKEN.finditer(w)):
            if mg is None or mw is None:
                return False  # token counts differ
            a, b = mg.group(), mw.group()
            if a == b:
                if not _numeric(a):
                    return False  # a differing line matches only if it is all numbers
                continue
            x, y = _decimal(a), _decimal(b)
            if x is None or y is None:
                return False  # nan, sNaN, inf or text never match a differing token
            if x == y:
                continue
            if tol is None or not abs(x - y) <= tol * max(1, abs(y)):
                return False
    return True


def test_status(spec, msg: dict, nonce: str | None = None) -> str:
    """The status of one validated T message body (never raises)."""
    st = msg.get("st")
    if st != "ok":
        return RAW.get(st, Status.RUNTIME_ERROR)
    i = msg["i"]
    if not 0 <= i < len(spec.input_lens):
        return Status.RUNTIME_ERROR
    if spec.kind == "script":
        forged = nonce is None or msg.get("out") != nonce
        return Status.RUNTIME_ERROR if forged else Status.PASSED
    out = msg.get("out")
    plain = spec.plain
    if spec.kind == "call" and not spec.checker and i < len(plain) and plain[i]:
        # the expected value is a scalar or a flat list of scalars (records.PLAIN_SCALARS):
        # equal to it, the raw JSON output holds no dict (no tag, nothing opaque) and decodes
        # to itself, so `out == expected` is default_equal's exact test, and it passed
        # (cannot raise: one side is flat); anything else takes the full path below
        if out == spec.expected[i]:
            return Status.PASSED
    if spec.kind == "stdio":
        if not isinstance(out, str):
            return Status.WRONG_ANSWER
        ok = None
        if spec.stdio_checker:
            ok = check_output(spec.stdio_checker, spec.job["inputs"][i], spec.expected[i], out)
        if ok is None:
            ok = stdio_equal(out, spec.expected[i], spec.stdio_tol)
        return Status.PASSED if ok else Status.WRONG_ANSWER
    try:
        value = codec.decode(out)
        opaque = codec.contains_opaque(out)
    except Exception:
        return Status.WRONG_ANSWER  # an output that cannot be decoded cannot be right
    if (
        spec.checker
    ):  # trusted problem code; an opaque value reaches it as an Opaque (equal to nothing)
        try:
            ok = bool(
                _compile_checker(spec.checker)(spec.args[i], value, spec.expected[i], spec.atol)
            )
        except Exception:
            ok = False
    else:
        ok = not opaque and default_equal(value, spec.expected[i], spec.atol)
    return Status.PASSED if ok else Status.WRONG_ANSWER


def summarize(spec, tests: list[dict]) -> dict:
    order = spec.job.get("order", range(len(tests)))
    failing = [
        tests[i]["status"] for i in order if tests[i]["status"] not in (Status.PASSED, SKIPPED)
    ]
    if not failing:
        ok = all(t["status"] == Status.PASSED for t in tests)
        status = Status.PASSED if ok else Status.RUNTIME_ERROR
    elif Status.SYNTAX_ERROR in failing:
        status = Status.SYNTAX_ERROR
    else:
        corr = [s for s in failing if s in CORRECTNESS]
        status = corr[0] if corr else failing[0]
    times = [t["time_s"] for t in tests if t["time_s"] is not None]
    mems = [t["memory_mb"] for t in tests if t["memory_mb"] is not None]
    return {
        "status": status,
        "outcome": outcome_of(status, tests),
        "passed": sum(t["status"] == Status.PASSED for t in tests),
        "total": len(tests),
        "time_s": round(sum(times), 6),
        "memory_mb": round(max(mems), 2) if mems else None,
    }


def trust_of(spec) -> str:
    """result.IN_PROCESS when the spec's script tests run in the submission's process (not
    separate), else result.ISOLATED (stdio, call, separate script tests)."""
    if spec.kind == "script" and spec.job.get("separate") is not True:
        return IN_PROCESS
    return ISOLATED


def _fresh_tests(spec) -> list[dict]:
    return [
        {"status": "skipped", "time_s": None, "memory_mb": None, "input_len": n}
        for n in spec.input_lens
    ]


def no_code_result(spec) -> dict:
    tests = _fresh_tests(spec)
    for t in tests:
        t["status"] = Status.NO_CODE
    out = {
        "id": spec.id,
        "status": Status.NO_CODE,
        "outcome": Outcome.FORMAT_ERROR,
        "passed": 0,
        "total": len(tests),
        "time_s": 0.0,
        "memory_mb": None,
        "tests": tests,
        "trust": trust_of(spec),
        "reason": "no code to run",
    }
    if spec.kind != "script":
        out["strictness"] = {str(k): 0 for k in STRICTNESS_KS}
        out["strictness_rule"] = DEFAULT_RK_RULE
    return out


REASON_CHARS = 300


def one_line(text: str, limit: int = REASON_CHARS) -> str:
    """Untrusted text as one printable line of at most `limit` characters."""
    return "".join(c if c.isprintable() else " " for c in str(text)).strip()[:limit]


# an in-process script test that reported success without the worker's nonce (zygote.Child.
# release_nonce): its process was not a lone thread at the end, or the report was forged
UNVERIFIED = (
    "its success could not be verified: the test process was not alone when the tests "
    "ended (a thread or process still running, e.g. a library's native thread pool), "
    "or its report did not carry the judge's nonce"
)


def failure_reason(spec, tests: list[dict], errors: dict) -> str | None:
    """Why a failed record failed, for its "reason": the first failing test (in execution
    order) and what the sandbox reported for it (the exception's type and last line, as the
    sandboxed process sent it: untrusted text, made one printable line) or, when it reported
    nothing, its status. None when every test passed or was not run."""
    for i in spec.job.get("order", range(len(tests))):
        st = tests[i]["status"]
        if st in (Status.PASSED, SKIPPED):
            continue
        where = f"test {i + 1} of {len(tests)}" if len(tests) > 1 else "the test"
        err = errors.get(i)
        return one_line(f"{where}: {st}" + (f": {err}" if err else ""))
    return None


def env_missing_result(spec, missing) -> dict:
    """The verdict of a record whose problem needs modules the sandbox's interpreter lacks
    (environment.py): status env_missing, outcome not_counted, nothing run, the reason naming
    them."""
    tests = _fresh_tests(spec)
    for t in tests:
        t["status"] = Status.ENV_MISSING
    out = {
        "id": spec.id,
        "status": Status.ENV_MISSING,
        "outcome": Outcome.NOT_COUNTED,
        "passed": 0,
        "total": len(tests),
        "time_s": 0.0,
        "memory_mb": None,
        "tests": tests,
        "trust": trust_of(spec),
        "reason": "not installed for the sandbox's interpreter: " + ", ".join(missing),
    }
    if spec.kind != "script":
        out["strictness"] = {str(k): 0 for k in STRICTNESS_KS}
        out["strictness_rule"] = DEFAULT_RK_RULE
    return out


class Run:
    """One record's verdicts, built from its validated messages as they arrive."""

    def __init__(self, spec, early_stop: bool = False):
        self.spec, self.early_stop = spec, early_stop
        self.tests = _fresh_tests(spec)
        self.script_msgs: list[dict] = []
        self.errors: dict[int, str] = {}  # test index -> the sandbox's error text (untrusted)

    def on_message(self, msg) -> bool:
        """Record an X or T message (protocol.Message); True asks the worker to stop."""
        if msg.tag == "X":
            st = RAW.get(msg.body["st"], Status.RUNTIME_ERROR)
            if st == Status.PASSED:  # a load failure never passes (protocol.LOAD_FAILURES)
                st = Status.RUNTIME_ERROR
            for i, t in enumerate(self.tests):
                if t["status"] == "skipped":
                    t["status"] = st
                    if msg.body.get("e"):
                        self.errors[i] = "the submission did not load: " + msg.body["e"]
            return False
        if msg.tag != "T":
            return False
        body = msg.body
        t = self.tests[body["i"]]
        if t["status"] != "skipped":
            return False
        if body.get("e"):
            self.errors[body["i"]] = body["e"]
        if self.spec.kind == "script":
            self.script_msgs.append(body)
            return False
        st = test_status(self.spec, body)
        t.update(status=st, time_s=body["t"], memory_mb=body["m"])
        return self.early_stop and st != Status.PASSED

    def result(self, done: dict | None, reason: str | None = None) -> dict:
        """The record's result; done=None (the job did not end cleanly) fails what is left."""
        if done is None:
            for t in self.tests:
                if t["status"] == "skipped":
                    t["status"] = Status.RUNTIME_ERROR
            done = {}
        for body in self.script_msgs:
            st = test_status(self.spec, body, done.get("nonce"))
            if (
                st == Status.RUNTIME_ERROR
                and body.get("st") == "ok"
                and not self.errors.get(body["i"])
            ):
                self.errors[body["i"]] = UNVERIFIED
            self.tests[0].update(status=st, time_s=body["t"], memory_mb=body["m"])
        result = {
            "id": self.spec.id,
            **summarize(self.spec, self.tests),
            "tests": self.tests,
            "trust": trust_of(self.spec),
        }
        peak = done.get("peak_mb")
        if peak and (result["memory_mb"] is None or peak > result["memory_mb"]):
            result["memory_mb"] = round(peak, 2)
        reason = reason or failure_reason(self.spec, self.tests, self.errors)
        if reason:
            result["reason"] = reason
        if self.spec.kind != "script":
            result["strictness"] = strictness(result, STRICTNESS_KS, DEFAULT_RK_RULE)
            result["strictness_rule"] = DEFAULT_RK_RULE
        if self.spec.stdio_checker:
            built = compile_checker(self.spec.stdio_checker)
            result["checker"] = "testlib" if built else "exact_fallback"
            if not built:  # only where the user asked for it (SandboxConfig.checker_fallback)
                result["checker_reason"] = fallback_reason(self.spec.stdio_checker) or "unavailable"
        return result
