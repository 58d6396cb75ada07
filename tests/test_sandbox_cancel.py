"""sandbox.Cancel: a stop switch for one execute_many call (the reward's batch timeout). Once
set, no queued record starts and the running ones are killed with their workers; what finished
before keeps its result, the rest come back as None, and the pool stays usable."""

from __future__ import annotations

import threading
import time

import pytest

from recode_lib import sandbox


def call_record(rid: str, body: str, n: int = 1) -> dict:
    return {
        "id": rid,
        "code": f"import time\ndef f(x):\n{body}\n    return x\n",
        "tests": {
            "kind": "call",
            "fn_name": "f",
            "cases": [{"args": [i], "expected": i} for i in range(n)],
        },
        "time_limit_s": 60,
    }


def test_a_cancel_kills_the_running_record_and_reports_nothing():
    cancel, seen, box = sandbox.Cancel(), [], {}
    slow = call_record("slow", "    time.sleep(30)")
    t = threading.Thread(
        target=lambda: box.update(
            out=sandbox.execute_many([slow], workers=1, on_result=seen.append, cancel=cancel)
        )
    )
    t0 = time.monotonic()
    t.start()
    time.sleep(1.5)  # the record is running its 30 s test
    cancel.set()
    t.join(15)
    assert not t.is_alive() and time.monotonic() - t0 < 15
    assert box["out"] == [None] and seen == []


def test_a_cancel_set_before_the_call_starts_no_record():
    cancel, seen = sandbox.Cancel(), []
    cancel.set()
    out = sandbox.execute_many(
        [call_record("a", "    pass")], workers=1, on_result=seen.append, cancel=cancel
    )
    assert out == [None] and seen == []


def test_records_finished_before_the_cancel_keep_their_results():
    cancel = sandbox.Cancel()

    def on_result(res):
        cancel.set()  # the first result in: the second record never starts

    out = sandbox.execute_many(
        [call_record("fast", "    pass"), call_record("next", "    pass")],
        workers=1,
        on_result=on_result,
        cancel=cancel,
    )
    assert out[0]["id"] == "fast" and out[0]["status"] == "passed"
    assert out[1] is None


def test_the_pool_judges_normally_after_a_cancel():
    cancel = sandbox.Cancel()
    t = threading.Thread(
        target=sandbox.execute_many,
        args=([call_record("slow", "    time.sleep(30)")],),
        kwargs={"workers": 1, "on_result": lambda r: None, "cancel": cancel},
    )
    t.start()
    time.sleep(1.5)
    cancel.set()
    t.join(15)
    assert sandbox.execute(call_record("after", "    pass", n=3))["status"] == "passed"


def test_cancel_is_refused_for_the_ray_fan_out():
    with pytest.raises(ValueError, match="cancel applies to the local pool"):
        sandbox.execute_many([call_record("a", "    pass")], ray="local", cancel=sandbox.Cancel())
