"""Red team, round 9 (attacks on judge round 4): hash floods in the judge's set and dict
building, a string's closing brackets hiding nesting depth, the passing-line shortcut's
rounding, and the bounds check's cost on forged strings. The first six tests failed on the code
before the fixes (7df0c43; checked); the rest check that the fixes refuse nothing honest."""

from __future__ import annotations

import pytest
from judge_attacks import bounds_check_cpu, forged_record, judged_with_cpu, set_oracle_record

from recode_lib.sandbox import SandboxConfig, execute


def _colliding_ints(n: int) -> str:
    m = (1 << 61) - 1  # hash(k * m) == 0 for every int k: CPython's int hash is x mod 2**61-1
    return ", ".join(str(k * m) for k in range(1, n + 1))


@pytest.mark.parametrize("kind", ["set", "dict"])
def test_a_forged_set_or_dict_of_colliding_ints_costs_the_judge_linear_time(kind):
    """codec.decode builds a set (or a dict's keys) from the child's output in the judge's
    process; ints whose hashes collide make that O(n^2): 20,000 of them (a 0.5 MB line, the
    output bound is 64 MB and 1,000,000 elements) cost the judge ~2.5 s of CPU, 100,000 ~1 min,
    1,000,000 ~hours, in the trainer's process, beyond every time limit and the batch timeout."""
    ints = _colliding_ints(20_000)
    if kind == "dict":
        ints = ", ".join(f"[{k}, 0]" for k in ints.split(", "))
    res, judge_cpu = judged_with_cpu(
        forged_record("hashflood-" + kind, '{"__t": "' + kind + '", "v": [' + ints + "]}")
    )
    assert res["status"] != "passed"
    assert judge_cpu < 1.0, f"the judge spent {judge_cpu:.1f} s of CPU on one {kind} line"


def test_the_passing_line_shortcut_refuses_what_the_full_parser_refuses():
    """parse_ok_line must decide exactly as parse_line_full. A time written with more digits
    than a double holds ('999999999.99999999999') is below 1e9 by its digit count (the
    shortcut's bound) but float() rounds it to 1e9: the shortcut accepts the line (t = 1e9,
    the test passes), the full parser refuses it (T.t out of range: a protocol violation, the
    record a runtime_error). The verdict of a line depends on which path read it."""
    from recode_lib.sandbox import protocol

    line = b'T 3 {"i": 0, "st": "ok", "out": 1, "t": 999999999.99999999999, "m": 1.0}\n'
    try:
        full = protocol.parse_line_full(line, 3, 1, 1 << 20)
    except protocol.ProtocolError:
        full = None
    fast = protocol.parse_ok_line(line, 3, 1, 1 << 20)
    assert full is None  # the full parser refuses it
    assert fast is None, f"the shortcut accepted it: {fast}"


def test_a_forged_line_of_empty_strings_costs_the_judge_about_what_json_costs():
    """check_shape walks the strings of a line that breaks a naive bound one regex match at a
    time in Python (_outside_strings): a forged 8 MB line of '""' pairs behind 300 '[' costs
    ~2.4 s of judge CPU (a 64 MB line, the bound on one line, ~20 s), ~40x what json.loads
    costs on 8 MB. Linear, but each record can send one such line (then the worker is
    replaced), in the trainer's process."""

    body = b"[" * 300 + b'""' * (4 << 20)
    spent = bounds_check_cpu(body)
    assert spent < 0.5, f"the bounds check of one 8 MB line took {spent:.1f} s of CPU"


def test_a_returned_list_of_colliding_ints_costs_an_mbpp_set_checker_linear_time():
    """No forging needed: MBPP+'s set-equality oracle (larg_nnum, similar_elements, Diff ...)
    runs set(output) in the judge. A submission returns a plain list (cheap to build, linear
    to encode) of ints whose hashes collide; the judge's set() of it is O(n^2): 20,000 of them
    cost ~2.5 s of judge CPU, 200,000 (a 5 MB output) minutes."""

    code = (
        "def larg_nnum(lst, n):\n"
        "    m = (1 << 61) - 1\n"
        "    return [k * m for k in range(1, 20001)]\n"
    )
    res, judge_cpu = judged_with_cpu(set_oracle_record("hashflood-set-eq", code))
    assert res["status"] != "passed"
    assert judge_cpu < 1.0, f"the judge spent {judge_cpu:.1f} s of CPU on one 0.5 MB output"


def test_closing_brackets_inside_a_string_do_not_hide_the_nesting_depth():
    """too_deep (and check_shape over 64 KB) first sum every bracket, strings' included, and
    accept when that stays within MAX_DEPTH, assuming that over-counts; but a string's ']'
    counts -1: '["]]]...]", [[[...]]]' sums to ~0 while nesting 300 (or, on 3.11, up to
    json's own guard ~1,000; 3.13's json parses 5,000) levels deep. The protocol's own bound,
    the same on every Python, is bypassed: both parsers accept a line nested past MAX_DEPTH."""
    from recode_lib.sandbox import protocol

    d = 300
    out = b'["' + b"]" * d + b'", ' + b"[" * d + b"1" + b"]" * d + b"]"
    line = b'T 1 {"i": 0, "st": "ok", "out": ' + out + b', "t": 0.1, "m": 1.0}\n'
    assert protocol.parse_ok_line(line, 1, 3, 1 << 30) is None
    big = out[:-1] + b', "' + b"x" * 70_000 + b'"]'  # over SMALL: check_shape's path
    big_line = b'T 1 {"i": 0, "st": "ok", "out": ' + big + b', "t": 0.1, "m": 1.0}\n'
    for forged in (line, big_line):  # nested d + 2 deep (MAX_DEPTH 256): refused either way
        with pytest.raises(protocol.ProtocolError, match="deeper"):
            protocol.parse_line_full(forged, 1, 3, 1 << 30)


# ---- the fixes keep what is right (they must not refuse honest values or lines) ----------


def test_hash_safe_keeps_the_set_of_many_repeats_and_the_one_natural_int_collision():
    from recode_lib.sandbox.codec import hash_safe

    items = [0, 1, -1, -2] * 50_000  # -1 and -2 share a hash: many repeats of both
    assert hash_safe(items) == [0, 1, -1, -2]  # the same set, each exact repeat once
    assert hash_safe(iter(range(1000))) == list(range(1000))  # no shared hash: as given
    assert hash_safe([]) == []
    mixed = [1, True, 1.0, 0.0, -0.0, 0, False] * 100  # equal values of other types: all kept
    assert set(hash_safe(mixed)) == set(mixed) and len(hash_safe(mixed)) == 7


def test_hash_safe_refuses_a_flood_and_keeps_honest_collisions():
    import itertools

    import pytest

    from recode_lib.sandbox.codec import FLOOD_BUDGET, hash_safe

    m = (1 << 61) - 1
    few = [k * m for k in range(1, 17)]
    assert hash_safe(few * 100) == few  # a handful of colliding values: built as before
    n = int(FLOOD_BUDGET**0.5) + 10  # n colliding values cost n^2 comparisons: over the budget
    with pytest.raises(ValueError, match="hash flood"):
        hash_safe([k * m for k in range(1, n)])
    signs = list(itertools.product([-1, -2], repeat=5))  # 32 tuples, one hash value
    assert hash_safe(signs) == signs
    powers = [2.0**k for k in range(-1074, 1024)]  # 2,098 floats, ~34 per hash value
    assert hash_safe(powers) == powers
    with pytest.raises(TypeError):
        hash_safe([[1], [2]])  # unhashable items fail as set() fails


def test_decoded_sets_and_dicts_are_the_same_values_as_before():
    from recode_lib.sandbox.codec import decode, encode

    for v in (
        set(range(-5, 300)),
        frozenset({(1, 2), (3, 4), -1, -2}),
        {(1, 2): "a", 3: [4, 5], -1: None, -2: 0.5},
        {k: k for k in range(500)},
    ):
        back = decode(encode(v))
        assert back == v and type(back) is type(v)


def test_a_flooded_set_in_a_forged_line_is_a_wrong_answer_not_a_pass():
    m = (1 << 61) - 1
    body = '{"__t": "set", "v": [' + ", ".join(str(k * m) for k in range(1, 40)) + "]}"
    assert execute(forged_record("flood-small", body), SandboxConfig())["status"] == "wrong_answer"


def test_the_mbpp_set_oracle_still_passes_a_right_answer_with_duplicates():
    code = "def larg_nnum(lst, n):\n    return [100, 90, 90, 100]\n"  # the same set as expected
    rec = set_oracle_record("set-eq-right", code, [[10, 100, 90], 2])
    assert execute(rec, SandboxConfig())["status"] == "passed"


def test_a_deep_line_with_many_strings_within_the_bounds_is_accepted_by_both_parsers():
    """The strings are cut (over 256 openers) and counted against the separators that follow
    them: a valid line is never refused for it, below and above 64 KB."""
    import json

    from recode_lib.sandbox import protocol

    for n in (50, 20_000):  # below and above SMALL
        value = [["]]]", {"k": "}"}]] * 150 + ['x\\"]'] * n  # 301 openers, depth 4
        out = json.dumps(value).encode()
        line = b'T 1 {"i": 0, "st": "ok", "out": ' + out + b', "t": 0.1, "m": 1.0}\n'
        msg = protocol.parse_line(line, 1, 3, 1 << 30)
        assert msg.body["out"] == value
        assert protocol.parse_line_full(line, 1, 3, 1 << 30).body["out"] == value
