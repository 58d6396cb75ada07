"""Calls bounded in time from any thread (recode_lib.core.bounded_call), and the math answer
check that uses them off the main thread (recode_lib.core.math_answers.answer_correct)."""

import threading
import time

import pytest

from recode_lib.core import math_answers
from recode_lib.core.bounded_call import CallTimedOut, ChildDied, ChildFailed, bounded_call


def in_thread(fn, *args, join_s: float):
    """fn(*args) in a worker thread: (its result or None, seconds it took or None if still
    running after join_s)."""
    box = {}

    def run():
        t0 = time.monotonic()
        box["result"] = fn(*args)
        box["s"] = time.monotonic() - t0

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(join_s)
    return box.get("result"), box.get("s")


def test_bounded_call_returns_the_result():
    assert bounded_call("math:sqrt", [4], timeout_s=30) == 2.0


def test_bounded_call_overrun_raises_within_the_bound():
    t0 = time.monotonic()
    with pytest.raises(CallTimedOut):
        bounded_call("time:sleep", [60], timeout_s=0.5)
    assert time.monotonic() - t0 < 20  # the child's start plus the bound, not the minute


def test_bounded_call_error_in_the_child_is_childfailed_and_the_child_serves_again():
    with pytest.raises(ChildFailed, match="ValueError"):
        bounded_call("math:sqrt", [-1], timeout_s=30)
    assert bounded_call("math:sqrt", [9], timeout_s=30) == 3.0


def test_bounded_call_child_that_dies_is_childdied_and_replaced():
    with pytest.raises(ChildDied):
        bounded_call("os:_exit", [3], timeout_s=30)
    assert bounded_call("os:getpid", [], timeout_s=30) > 0


def test_bounded_call_strings_travel_intact():
    s = "a\ud800b\u2028\n\"'\\\x00é"
    assert bounded_call("builtins:str", [s], timeout_s=30) == s


def test_math_answer_from_a_worker_thread_is_checked():
    pytest.importorskip("math_verify")
    result, s = in_thread(
        math_answers.answer_correct, "<think>so</think> \\boxed{25}", "025", join_s=120
    )
    assert s is not None and result == (True, "")


def test_math_answer_from_a_worker_thread_is_bounded_in_time(monkeypatch):
    """math-verify's own timeouts are signals (main thread only): off it, an answer whose
    expansion runs for minutes must still get a verdict (wrong) within the bound."""
    pytest.importorskip("math_verify")
    monkeypatch.setattr(math_answers, "CHECK_TIMEOUT_S", 1.0, raising=False)
    text = "<think>expand it</think> \\boxed{(x+1)^{100000}}"
    math_answers.answer_correct("<think>so</think> \\boxed{1}", "1")  # import math-verify here
    result, s = in_thread(math_answers.answer_correct, text, "25", join_s=15)
    assert s is not None, "the check was still running after 15 s"
    assert result[0] is False


def test_concurrent_callers_each_get_their_own_result():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda x: bounded_call("math:sqrt", [x * x], timeout_s=60), range(8)))
    assert got == [float(x) for x in range(8)]
