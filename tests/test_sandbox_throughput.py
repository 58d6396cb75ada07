"""The judge's shortcuts for speed decide exactly as the full path does: a plain expected
value compared on the raw output (verdict.test_status), plain values kept as given at parse
time (records.parse_record); and several workers start the records with the longest time
limits first while results keep the input order (pool.run_specs)."""

import hashlib
import json
import math

import pytest

from recode_lib.sandbox import SandboxConfig, codec, execute_many
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
