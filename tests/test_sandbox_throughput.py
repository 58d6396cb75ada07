"""The judge's shortcuts for speed decide exactly as the full path does: a plain expected
value compared on the raw output (verdict.test_status), plain values kept as given at parse
time (records.parse_record); and several workers start the records with the longest time
limits first while results keep the input order (pool.run_specs); codec.digest's shortcut for
plain strings; the held-back S line never stalls the judge's watchdog; one record judged in the
caller's thread stops at once on Ctrl-C."""

import hashlib
import json
import math
import signal
import threading
import time

import pytest

from recode_lib.sandbox import SandboxConfig, codec, execute, execute_many
from recode_lib.sandbox.pool import get_pool
from recode_lib.sandbox.records import parse_record
from recode_lib.sandbox.verdict import test_status as status_of

# (raw JSON output as the judge receives it, expected value as a record gives it)
PAIRS = [
    (1, 1),
    (1, 2),
    (1.0, 1),
    (1, 1.0),
    (True, 1),
    (1, True),
    (0.1 + 0.2, 0.3),
    (0.30000001, 0.3),
    ("a", "a"),
    ("a", "b"),
    (None, None),
    (None, 0),
    ([1, 2], [1, 2]),
    ([1, 2], [2, 1]),
    ([1.0, 2.0], [1, 2]),
    ([True], [1]),
    ([0.1 + 0.2], [0.3]),
    ([[1]], [1]),
    ([{"__t": "tuple", "v": [1]}], [1]),
    ({"__t": "tuple", "v": [1, 2]}, [1, 2]),
    ({"__t": "float", "v": "nan"}, math.nan),
    ({"__t": "float", "v": "nan"}, [math.nan]),
    ({"__t": "opaque", "type": "X", "repr": "x"}, 1),
    ([1, {"__t": "opaque", "type": "X", "repr": "x"}], [1, 2]),
    ({"__t": "fraction", "v": [1, 2]}, 0.5),
    ([10**8 + 1], [10**8]),
    ("1", 1),
    ([], []),
    ([], [0]),
]


@pytest.mark.parametrize("atol", [0, 1e-6])
@pytest.mark.parametrize("out,expected", PAIRS)
def test_plain_shortcut_agrees_with_the_full_comparison(out, expected, atol):
    rec = {
        "id": "p",
        "code": "def f():\n    return 0\n",
        "tests": {
            "kind": "call",
            "fn_name": "f",
            "atol": atol,
            "cases": [{"args": [], "expected": expected}],
        },
    }
    spec = parse_record(rec, SandboxConfig())
    msg = {"i": 0, "st": "ok", "out": out, "t": 0.0, "m": 0.0}
    fast = status_of(spec, msg)
    spec.plain = [False]  # the full path: decode, opaque check, default_equal
    assert fast == status_of(spec, msg)


def test_plain_args_kept_as_given_and_tagged_ones_decoded():
    rec = {
        "id": "p",
        "code": "def f(x):\n    return x\n",
        "tests": {
            "kind": "call",
            "fn_name": "f",
            "cases": [
                {"args": [[1, "{"]], "expected": [1, "{"]},
                {"args": [{"__t": "tuple", "v": [1]}], "expected": {"__t": "set", "v": [1]}},
            ],
        },
    }
    spec = parse_record(rec, SandboxConfig())
    assert spec.args == [[[1, "{"]], [(1,)]]
    assert spec.expected == [[1, "{"], {1}]
    assert spec.plain == [True, False]


def test_longest_limit_starts_first_and_results_keep_input_order():
    sleep = "import time\ndef f():\n    time.sleep(0.4)\n    return 1\n"

    def rec(i, limit):
        return {
            "id": i,
            "code": sleep,
            "time_limit_s": limit,
            "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": 1}]},
        }

    records = [rec("a", 2), rec("b", 2), rec("slow", 9)]
    finished = []
    res = execute_many(
        records,
        workers=2,
        config=SandboxConfig(workers=2),
        on_result=lambda r: finished.append(r["id"]),
    )
    assert [r["id"] for r in res] == ["a", "b", "slow"]
    assert all(r["status"] == "passed" for r in res)
    # "slow" and "a" start together, "b" after them: in input order "slow" would finish last
    assert finished[-1] == "b"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "0 1 2 3",
        'a"b',
        "a\\b",
        "a\nb",
        "\x00",
        "\x1f",
        "\x7f",
        "é",
        "\u2028",
        "\udc80",
        "x" * 5000,
    ],
)
def test_the_digest_shortcut_hashes_the_canonical_json_of_a_string(text):
    """codec.digest hashes an ASCII string needing no escape without json.dumps: the same
    bytes as the canonical encoding, for strings that need escapes or are not ASCII too."""
    canonical = json.dumps(text, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    want = hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
    assert codec.digest(text) == want


def _sleeper(load_s, call_s, cases=1):
    return {
        "id": "s",
        "code": (
            f"import time\ntime.sleep({load_s})\ndef f():\n    time.sleep({call_s})\n    return 1\n"
        ),
        "tests": {
            "kind": "call",
            "fn_name": "f",
            "cases": [{"args": [], "expected": 1}] * cases,
        },
    }


def test_a_slow_load_then_a_slow_test_is_not_taken_for_a_stalled_worker():
    """The worker holds back S (the load ended) to save the judge a wakeup, but no longer than
    zygote.HOLD_S: a load and a first test each within the limit, together longer than the
    judge's watchdog (the largest limit + stall_grace_s), still pass."""
    cfg = SandboxConfig(time_limit_s=2.0, stall_grace_s=1.0, workers=1)
    res = execute(_sleeper(1.6, 1.6), config=cfg)
    assert res["status"] == "passed", res.get("reason")


def test_an_interrupted_one_record_execute_returns_at_once_and_starts_no_worker():
    """execute() judges its one record in the caller's thread: Ctrl-C there ends the call at
    once, kills the worker and starts no fresh one on the way out."""
    cfg = SandboxConfig(time_limit_s=20.0, memory_mb=300, workers=1)  # a pool of its own
    rec = _sleeper(0, 10)
    assert execute(dict(rec, code="def f():\n    return 1\n"), config=cfg)["status"] == "passed"
    main = threading.main_thread().ident  # a real SIGINT, as Ctrl-C sends (it ends a read)
    timer = threading.Timer(1.0, signal.pthread_kill, (main, signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        execute(rec, config=cfg)
    timer.join()
    assert time.monotonic() - t0 < 6.0
    assert [w for w in get_pool(cfg).workers() if w.alive()] == []
    assert execute(dict(rec, code="def f():\n    return 1\n"), config=cfg)["status"] == "passed"
