"""The judge's side of the worker protocol and the value comparison, fed untrusted data:
fuzzed bytes, valid JSON of the wrong shape, and adversarial values. No process is started."""

import json
import random
import time
import tracemalloc
from decimal import Decimal

import pytest

from recode_lib.sandbox.protocol import ProtocolError, parse_line, parse_line_full, parse_ok_line
from recode_lib.sandbox.verdict import default_equal, stdio_equal

MAX = 1 << 20


def parse(body, tag="T", job=1, n=3):
    return parse_line(f"{tag} {job} ".encode() + body + b"\n", job, n, MAX)


def test_a_good_line_parses_to_a_clean_message():
    msg = parse(b'{"i": 2, "st": "ok", "out": [1, 2], "t": 0.5, "m": 12.0, "extra": 1}')
    assert (msg.tag, msg.body) == (
        "T",
        {"i": 2, "st": "ok", "out": [1, 2], "t": 0.5, "m": 12.0, "e": None},
    )


def test_random_bytes_only_ever_raise_protocol_error():
    rng = random.Random(11)
    for _ in range(3000):
        line = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 80)))
        prefix = rng.choice([b"", b"T 1 ", b"D 1 ", b"X 1 ", b"S 1", b"T 2 "])
        try:
            parse_line(prefix + line + rng.choice([b"\n", b""]), 1, 3, MAX)
        except ProtocolError:
            pass


def _random_json(rng, depth=0):
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 6:
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(3))]
    if kind == 7:
        return {
            rng.choice(["i", "st", "t", "m", "out", "e", "nonce", "peak_mb"]): _random_json(
                rng, depth + 1
            )
            for _ in range(rng.randrange(5))
        }
    if kind == 8:
        return {
            "i": rng.choice([0, 1, 2, 3, -1, True, 1.0, "0"]),
            "st": rng.choice(["ok", "error", ["ok"], {"a": 1}, 7]),
            "t": rng.choice([0, 1e308, -1, "1", None, [1]]),
            "m": rng.choice([0, 10**400, 2.5, None]),
        }
    return [
        None,
        True,
        rng.randrange(-(10**30), 10**30),
        rng.random() * 1e300,
        "ok",
        rng.choice(["error", "wrong", "x" * 50, ""]),
    ][kind]


def test_valid_json_of_the_wrong_shape_only_ever_raises_protocol_error():
    rng = random.Random(12)
    accepted = 0
    for _ in range(5000):
        tag = rng.choice("STXD")
        body = json.dumps(_random_json(rng)).encode()
        try:
            msg = parse_line(f"{tag} 1 ".encode() + body + b"\n", 1, 3, MAX)
        except ProtocolError:
            continue
        accepted += 1
        if msg.tag == "T":
            assert 0 <= msg.body["i"] < 3 and isinstance(msg.body["st"], str)
            assert all(v is None or 0 <= v < 1e9 for v in (msg.body["t"], msg.body["m"]))
    assert accepted > 0


@pytest.mark.parametrize(
    "body",
    [
        b"7",
        b"nope",
        b'{"i": 0, "st": ["ok"]}',
        b'{"i": 0, "st": {}}',
        b'{"i": 0, "st": "ok", "t": 1e400}',
        b'{"i": 0, "st": "ok", "t": NaN}',
        b'{"i": 0, "st": "ok", "t": ' + b"9" * 5000 + b"}",
        b'{"i": 99, "st": "ok"}',
        b'{"i": true, "st": "ok"}',
    ],
)
def test_malformed_bodies_are_rejected(body):
    with pytest.raises(ProtocolError):
        parse(body)


def test_a_line_of_another_job_is_rejected():
    with pytest.raises(ProtocolError, match="another job"):
        parse_line(b'T 6 {"i": 0, "st": "ok", "out": 1}\n', 7, 3, MAX)
    with pytest.raises(ProtocolError):
        parse_line(b'T {"i": 0, "st": "ok", "out": 1}\n', 7, 3, MAX)  # no job id at all


def test_deep_nesting_is_rejected_before_parsing():
    with pytest.raises(ProtocolError, match="deeper"):
        parse(b'{"i": 0, "st": "ok", "out": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")


def test_brackets_inside_strings_do_not_count_as_nesting():
    msg = parse(b'{"i": 0, "st": "ok", "out": "' + b"[" * 10_000 + b'"}')
    assert msg.body["out"] == "[" * 10_000


def test_an_overlong_or_unterminated_line_is_rejected():
    with pytest.raises(ProtocolError):
        parse_line(b"T 1 " + b"1" * 100 + b"\n", 1, 3, 50)
    with pytest.raises(ProtocolError):
        parse_line(b'T 1 {"i": 0, "st": "ok"}', 1, 3, MAX)


def test_a_6mb_forged_line_costs_the_judge_little_memory():
    line = b'T 1 {"i": 0, "st": "ok", "out": [' + b"[]," * (2 << 20) + b"[]]}\n"
    tracemalloc.start()
    try:
        with pytest.raises(ProtocolError):
            parse_line(line, 1, 3, 64 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40 << 20


# ---- value comparison: a boolean for any pair, never an exception ----------------------------
def _value(rng, depth=0):
    pool = [
        0,
        1,
        -1,
        10**400,
        -(10**400),
        1e308,
        float("inf"),
        float("nan"),
        0.1,
        1e-320,
        True,
        None,
        "",
        "nan",
        "1e999999999",
        b"x",
        3 + 4j,
        complex(float("nan"), 1),
    ]
    k = rng.randrange(12 if depth < 3 else 8)
    if k < 8:
        return rng.choice(pool)
    if k == 8:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if k == 9:
        return tuple(_value(rng, depth + 1) for _ in range(rng.randrange(4)))
    if k == 10:
        return {"a": _value(rng, depth + 1), 1: _value(rng, depth + 1)}
    return [rng.random() for _ in range(3)]


def test_default_equal_returns_a_bool_for_any_pair():
    rng = random.Random(13)
    deep = []
    for _ in range(5000):
        deep = [deep]
    specials = [deep, [10**400], [1.0, 2.0]]
    for _ in range(6000):
        a = _value(rng) if rng.random() < 0.95 else rng.choice(specials)
        b = _value(rng) if rng.random() < 0.95 else rng.choice(specials)
        for atol in (0.0, 1e-6):
            assert default_equal(a, b, atol) in (True, False)


def test_huge_int_against_floats_is_simply_unequal():
    assert default_equal([10**400], [1.5]) is False
    assert default_equal(10**400, 1.5) is False


_NUMBERS = [
    "sNaN",
    "nan",
    "NaN",
    "-sNaN",
    "1e999999999",
    "-1e999999999",
    "inf",
    "1e-999999999",
    "0",
    "1.00",
    "1",
    "x",
    "",
    "1e99999999999999999999",
]


def test_stdio_equal_returns_a_bool_for_any_pair_of_number_texts():
    rng = random.Random(14)
    for _ in range(3000):
        a = " ".join(rng.choice(_NUMBERS) for _ in range(rng.randrange(1, 4)))
        b = " ".join(rng.choice(_NUMBERS) for _ in range(rng.randrange(1, 4)))
        for tol in (None, 1e-6):
            assert stdio_equal(a, b, tol) in (True, False)


def test_special_decimals_never_match_a_different_line():
    assert not stdio_equal("sNaN", "1", 1e-6) and not stdio_equal("nan", "1", None)
    assert not stdio_equal("1e999999999", "1", 1e-6)
    assert stdio_equal("1.0", "1.00") and Decimal("1.0") == Decimal("1.00")


def test_a_6mb_line_of_distinct_keys_is_refused_before_it_costs_memory():
    keys = b",".join(b'"k%d": 0' % i for i in range(1_100_000))
    line = b'T 1 {"i": 0, "st": "ok", "out": {' + keys + b"}}\n"
    tracemalloc.start()
    try:
        with pytest.raises(ProtocolError, match="elements"):
            parse_line(line, 1, 3, 64 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(line)


def test_a_t_line_with_a_duplicated_index_key_is_rejected():
    # the worker routes by the first "i" (test 0), JSON keeps the last (test 1): not one test
    line = b'T 7 {"i": 0, "st": "ok", "out": 1, "i": 1}\n'
    with pytest.raises(ProtocolError):
        parse_line(line, job=7, n_tests=3, max_bytes=1 << 16)


# ---- the shortcut for the harness's usual passing line (protocol.parse_ok_line) --------------
def _ok_line(out: bytes, i=0, job=1, t=b"1.25e-05", m=b"9.5") -> bytes:
    return b'T %d {"i": %d, "st": "ok", "out": %s, "t": %s, "m": %s}\n' % (job, i, out, t, m)


OUTS = [
    b"1",
    b"-0.0",
    b'[1, 2.5, "a"]',
    b'"x, \\"t\\": 1, \\"m\\": 2}"',  # the tail's text inside the output string
    b'{"__t": "tuple", "v": [1, {"__t": "set", "v": []}]}',
    b'"\\ud800"',
    b"123456789012345678901234567890",
    b"null",
]


def _full(line, n=3):
    try:
        return parse_line_full(line, 1, n, MAX)
    except ProtocolError:
        return "refused"


@pytest.mark.parametrize("out", OUTS)
def test_the_usual_passing_line_takes_the_shortcut_and_reads_as_the_full_parser_reads_it(out):
    line = _ok_line(out)
    assert parse_ok_line(line, 1, 3, MAX) == _full(line) != "refused"


@pytest.mark.parametrize(
    "line",
    [
        _ok_line(b"NaN"),
        _ok_line(b"Infinity"),
        _ok_line(b'1, "i": 2'),  # a second "i" key: JSON keeps the last one
        _ok_line(b"[1"),
        _ok_line(b"1", t=b"1000000000.0"),  # out of range
        _ok_line(b"1", t=b"007"),  # not a JSON number
        _ok_line(b"1", m=b"-1.0"),
        _ok_line(b"1", i=3),  # no such test
        _ok_line(b"1", job=2),  # another job
        _ok_line(b"1").replace(b'"i": 0', b'"i": 00'),
        _ok_line(b"[" * 5000 + b"]" * 5000),  # deeper than MAX_DEPTH (3.13's json parses it)
        _ok_line(b"[" * 256 + b"]" * 256),  # with the body's object, one over MAX_DEPTH
        _ok_line(b'[{"a": ' * 128 + b"1" + b"}]" * 128),  # 256 levels, mixed, + the body's
        _ok_line(b'"\xff"'),  # not UTF-8
        _ok_line(b"1")[:-1],  # no newline
    ],
)
def test_a_line_the_full_parser_refuses_never_takes_the_shortcut(line):
    assert _full(line) == "refused"
    assert parse_ok_line(line, 1, 3, MAX) is None


@pytest.mark.parametrize(
    "out",
    [
        b"[" * 255 + b"]" * 255,  # with the body's object, MAX_DEPTH itself
        b'["' + b"[" * 1000 + b'", [[1]]]',  # brackets inside a string do not nest
        b"[" + b", ".join([b"[1, [2]]"] * 400) + b"]",  # many openers, 3 deep
    ],
)
def test_a_line_within_the_depth_bound_reads_alike_on_both_paths(out):
    """MAX_DEPTH is the protocol's own bound on every Python: json's guard (the C recursion
    limit) refuses 5,000 levels on 3.11 and 3.12 but not on 3.13."""
    line = _ok_line(out)
    assert parse_ok_line(line, 1, 3, MAX) == _full(line) != "refused"


def test_mutated_passing_lines_read_alike_by_the_shortcut_and_the_full_parser():
    """Fuzz: random byte edits of passing lines; the shortcut either declines (None) or
    returns exactly the full parser's message, and never accepts a line it refuses."""
    rng = random.Random(13)
    alphabet = b'0123456789"\\[]{},: .eE-+tTinamfsukoNI\n\xff'
    taken = 0
    for _ in range(6000):
        line = bytearray(_ok_line(rng.choice(OUTS), i=rng.randrange(3)))
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(line) + 1)
            op = rng.randrange(3)
            if op == 0:
                line[at:at] = bytes([rng.choice(alphabet)])
            elif op == 1 and at < len(line):
                del line[at]
            elif at < len(line):
                line[at] = rng.choice(alphabet)
        line = bytes(line)
        fast = parse_ok_line(line, 1, 3, MAX)
        if fast is not None:
            taken += 1
            assert fast == _full(line), line
    assert taken > 100  # the fuzz reached lines the shortcut takes


def _cpu_seconds(line: bytes) -> float:
    t = time.process_time()
    try:
        parse_line(line, 1, 3, 64 << 20)
    except ProtocolError:
        pass
    return time.process_time() - t


@pytest.mark.parametrize("k", [30_000, 400_000], ids=["under 64 KB", "over 64 KB"])
def test_a_line_of_escaped_quotes_costs_the_judge_linear_time(k):
    """A string that never closes, made of escaped quotes, then brackets: the string pattern
    used to retry from every escaped quote, quadratic (~7 s of judge CPU for a forged 40 KB
    line, ~15 s at 60 KB; the bounds check of a line over 64 KB grew as its square too). Now
    one pass: milliseconds."""
    line = b'T 1 {"i": 0, "st": "ok", "out": "' + b'\\"' * k + b"[" * 300 + b"\n"
    assert (len(line) < (64 << 10)) == (k < 32_000)
    assert min(_cpu_seconds(line) for _ in range(2)) < 1.0
