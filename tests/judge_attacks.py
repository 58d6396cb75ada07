"""Shared by the judge red-team tests (tests/test_judge_redteam9.py, ..10.py): a call-test
submission that forges its own result line, an MBPP+ set-oracle record, a record judged with
the judge's own CPU time measured, and the CPU of the protocol's bounds check on a forged body.
It judges nothing itself (the tests do)."""

from __future__ import annotations

import time

from recode_lib.data.evalplus import oracle_checker
from recode_lib.sandbox import SandboxConfig, execute, protocol


def forging(body: str) -> str:
    """A call-test submission that writes its own T line (allowed: a submission may forge its
    own outputs, the judge compares them) with `body` as the output, then returns."""
    return (
        "import os, sys\n"
        "def f(x):\n"
        "    wfd = sys._getframe(1).f_locals['wfd']\n"
        "    body = " + repr(body) + "\n"
        '    data = (\'T {"i": 0, "st": "ok", "out": \' + body'
        ' + \', "t": 0.001, "m": 1.0}\\n\').encode()\n'
        "    while data:\n"
        "        data = data[os.write(wfd, data):]\n"
        "    return x\n"
    )


def forged_record(rid: str, body: str) -> dict:
    """A one-test call record whose submission forges `body` as its output (expected: 1)."""
    return {
        "id": rid,
        "code": forging(body),
        "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [1], "expected": 1}]},
    }


LARG_NNUM_ARGS = [[10, 20, 50, 70, 90, 20, 50, 40, 60, 80, 100], 2]


def set_oracle_record(rid: str, code: str, args=None, expected=None) -> dict:
    """One test of MBPP+'s larg_nnum under EvalPlus's set-equality oracle; `code` defines it
    (by default the task's own first case: args LARG_NNUM_ARGS, expected [100, 90])."""
    args = LARG_NNUM_ARGS if args is None else args
    expected = [100, 90] if expected is None else expected
    return {
        "id": rid,
        "code": code,
        "tests": {
            "kind": "call",
            "fn_name": "larg_nnum",
            "checker": oracle_checker("mbpp", "larg_nnum"),
            "cases": [{"args": args, "expected": expected}],
        },
    }


def judged_with_cpu(rec: dict) -> tuple[dict, float]:
    """(execute's result, the CPU seconds this process, the judge, spent on it)."""
    c0 = time.process_time()
    res = execute(rec, SandboxConfig())
    return res, time.process_time() - c0


def bounds_check_cpu(body: bytes) -> float:
    """The CPU seconds protocol.load_json spends on `body` (accepted or refused)."""
    c0 = time.process_time()
    try:
        protocol.load_json(body)
    except protocol.ProtocolError:
        pass
    return time.process_time() - c0
