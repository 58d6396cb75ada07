"""Red team, round 10 (attacks on round 9's fixes, 7a35909): repeats beside a few colliding
values whose == runs in Python, honest values the first hash_safe refused (tuples of -1 and -2,
powers of two), and runs of `"",` that the first string bound did not cover. Each test failed on
7a35909 (checked); the honest-value ones passed before it (regressions it introduced)."""

from __future__ import annotations

import itertools
import json
import time

from judge_attacks import bounds_check_cpu, judged_with_cpu, set_oracle_record


def test_a_forged_line_of_empty_strings_with_commas_costs_the_judge_about_what_json_costs():
    """7a35909 bounded the strings _outside_strings walks by the separators count, so '""'
    runs are refused after 301; but '"",' runs carry one separator per string: an 8 MB line
    is still one Python loop turn per string (2.7M turns, ~1.5 s here; up to MAX_STRINGS =
    4M turns at 12 MB, ~2 s) before 'too many elements', ~15-20x json.loads of the same text."""

    body = b"[" * 300 + b'"",' * ((8 << 20) // 3)
    spent = bounds_check_cpu(body)
    assert spent < 0.5, f"the bounds check of one 8 MB line took {spent:.1f} s of CPU"


def _set_of_tuples(prefix, n, colliding):
    if colliding:  # 16 distinct tuples of one hash (hash(-1) == hash(-2)), then duplicates
        tails = list(itertools.product([-1, -2], repeat=4))
        tails = tails[:15] + [tails[15]] * (n - 15)
    else:
        tails = [[k] for k in range(n)]
    v = [{"__t": "tuple", "v": prefix + list(t)} for t in tails]
    return json.loads(json.dumps({"__t": "set", "v": v}))


def test_hash_safe_and_set_cost_on_sixteen_colliders_stays_near_a_plain_decode():
    """No hash value holds more than 16 distinct items, so hash_safe lets it through, but
    its slow path (`x not in group`) and then set() each compare every duplicate with the 15
    other colliders, each comparison walking a long equal prefix of Fractions
    (Fraction.__eq__ is Python code): ~7x a same-size set of distinct tuples. At the element
    bound (a 9.6 MB line, 995,000 commas) this costs the judge ~8.8 s of CPU per record,
    hash_safe doubling what set() alone costs; the same through MBPP+'s set oracle with a
    plain returned list (no forging)."""
    from recode_lib.sandbox import codec

    prefix = [{"__t": "fraction", "v": [1, 3]}] * 200
    bad, base = _set_of_tuples(prefix, 200, True), _set_of_tuples(prefix, 200, False)
    c0 = time.process_time()
    codec.decode(base)
    t_base = time.process_time() - c0
    c0 = time.process_time()
    codec.decode(bad)
    t_bad = time.process_time() - c0
    assert t_bad < 3 * t_base, f"colliding {t_bad:.2f} s vs distinct {t_base:.2f} s"


def test_an_honest_set_of_sign_tuples_is_not_a_hash_flood():
    """hash(-1) == hash(-2), so tuples over {-1, -2} of length 5 share one hash: 32 distinct
    honest items. MBPP+'s set oracle judges the right answer wrong (hash_safe raises)."""
    from recode_lib.sandbox import SandboxConfig, execute
    from recode_lib.sandbox.codec import encode

    exp = list(itertools.product([-1, -2], repeat=5))
    code = (
        "import itertools\n"
        "def larg_nnum(lst, n):\n"
        "    return list(itertools.product([-1, -2], repeat=n))\n"
    )
    rec = set_oracle_record("signs", code, [[1], 5], encode(exp))
    assert execute(rec, SandboxConfig())["status"] == "passed"


def test_an_honest_dict_keyed_by_powers_of_two_is_not_a_hash_flood():
    """hash(2**k) == 2**(k % 61): {2**k: k for k in range(1100)} has 18 distinct keys per
    hash value; the decoded output is refused, a right answer judged wrong_answer (and the same
    value as a record's expected output makes the record itself a RecordError)."""
    from recode_lib.sandbox import SandboxConfig, execute

    rec = {
        "id": "pow2",
        "code": "def f(n):\n    return {2**k: k for k in range(n)}\n",
        "tests": {
            "kind": "call",
            "fn_name": "f",
            "checker": (
                "def check(args, output, expected, atol):\n"
                "    return output == {2**k: k for k in range(1100)}\n"
            ),
            "cases": [{"args": [1100], "expected": 0}],
        },
    }
    assert execute(rec, SandboxConfig())["status"] == "passed"


def test_a_record_whose_expected_set_has_sign_tuples_is_accepted():
    from recode_lib.sandbox import SandboxConfig, execute
    from recode_lib.sandbox.codec import encode

    exp = set(itertools.product([-1, -2], repeat=5))
    rec = {
        "id": "signs-expected",
        "code": (
            "import itertools\ndef f(n):\n    return set(itertools.product([-1, -2], repeat=n))\n"
        ),
        "tests": {
            "kind": "call",
            "fn_name": "f",
            "cases": [{"args": [5], "expected": encode(exp)}],
        },
    }
    assert execute(rec, SandboxConfig())["status"] == "passed"


def test_a_set_of_fifteen_fractions_and_many_float_zeros_costs_the_judge_linear_time():
    """hash(Fraction(k * (2**61 - 1))) == hash(0.0) == 0: 15 distinct Fractions and one float
    share a hash (16: hash_safe accepts), so no flood, but every one of N duplicate 0.0s is
    compared with the 15 Fractions, in hash_safe's slow path (`x not in group`) and again in
    set(), and float == Fraction is Fraction.__eq__ -> Fraction.from_float (~2 us, Python):
    ~68 us per element. A forged 0.2 MB line (50,000 elements) costs the judge ~3.4 s of CPU;
    at the element bound (1,000,000 elements, a 4 MB line) ~70 s, per record, in the trainer's
    process. The same through MBPP+'s set oracle with a plain returned list (no forging)."""
    from recode_lib.sandbox import codec

    m = (1 << 61) - 1
    v = [{"__t": "fraction", "v": [k * m, 1]} for k in range(1, 16)] + [0.0] * 20_000
    c0 = time.process_time()
    try:
        codec.decode({"__t": "set", "v": v})
    except ValueError:
        pass
    spent = time.process_time() - c0
    assert spent < 0.25, f"decoding a 20,000-element set took {spent:.1f} s of judge CPU"


def test_a_returned_list_of_fractions_and_zeros_costs_an_mbpp_set_checker_linear_time():
    code = (
        "from fractions import Fraction\n"
        "def larg_nnum(lst, n):\n"
        "    m = (1 << 61) - 1\n"
        "    return [Fraction(k * m) for k in range(1, 16)] + [0.0] * 30000\n"
    )
    res, judge_cpu = judged_with_cpu(set_oracle_record("frac-zeros-set-eq", code))
    assert res["status"] != "passed"
    assert judge_cpu < 1.0, f"the judge spent {judge_cpu:.1f} s of CPU on one 0.12 MB output"
