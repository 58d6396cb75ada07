"""Values as EvalPlus and an inline test see them: a Fraction or Decimal compares by value
(EvalPlus's `out == expected`), and in-place changes to arguments reach separate script tests
as they reach inline ones. One property per test; lying objects still never pass."""

import pytest

from recode_lib.sandbox import SandboxConfig, codec, execute

CFG = SandboxConfig(time_limit_s=5.0, memory_mb=512, workers=1)


def call(code, expected, args=(), **extra):
    rec = {
        "id": "v",
        "code": code,
        "tests": {
            "kind": "call",
            "fn_name": "f",
            "cases": [{"args": list(args), "expected": expected}],
            **extra,
        },
    }
    return execute(rec, config=CFG)["status"]


def script(code, test):
    rec = {"id": "s", "code": code, "tests": {"kind": "script", "script": test}}
    res = execute(rec, config=CFG)
    assert res["trust"] == "isolated"  # a separate script test (no unittest/mock)
    return res["status"]


# ---- numbers --------------------------------------------------------------------------------


def test_a_fraction_equal_to_the_expected_float_passes():
    assert (
        call("from fractions import Fraction\ndef f():\n    return Fraction(1, 2)\n", 0.5)
        == "passed"
    )


def test_a_decimal_equal_to_the_expected_float_passes():
    assert (
        call("from decimal import Decimal\ndef f():\n    return Decimal('0.5')\n", 0.5) == "passed"
    )


def test_fractions_inside_a_list_compare_by_value():
    code = "from fractions import Fraction as F\ndef f():\n    return [F(1, 4), F(3)]\n"
    assert call(code, [0.25, 3]) == "passed"


def test_a_fraction_only_near_the_expected_float_fails_as_in_evalplus():
    # EvalPlus: 1/3 == 0.333... is False, and its tolerance needs type(out) == type(expected)
    assert (
        call("from fractions import Fraction\ndef f():\n    return Fraction(1, 3)\n", 1 / 3)
        == "wrong_answer"
    )


def test_a_fraction_subclass_that_equals_everything_is_judged_by_its_value():
    code = (
        "from fractions import Fraction\nclass Liar(Fraction):\n"
        "    def __eq__(self, other):\n        return True\n"
        "    def __float__(self):\n        return 0.5\n"
        "    def __str__(self):\n        return '0.5'\n"
        "def f():\n    return Liar(1, 3)\n"
    )
    assert call(code, 0.5) == "wrong_answer"


def test_a_decimal_subclass_with_a_lying_str_is_judged_by_its_value():
    code = (
        "from decimal import Decimal\nclass Liar(Decimal):\n"
        "    def __str__(self):\n        return '0.5'\n"
        "    def __eq__(self, other):\n        return True\n"
        "def f():\n    return Liar('0.25')\n"
    )
    assert call(code, 0.5) == "wrong_answer"


def test_a_number_like_object_with_a_lying_float_fails():
    code = (
        "import numbers\nclass R(numbers.Real):\n"
        "    __float__ = lambda self: 0.5\n    __eq__ = lambda self, o: True\n"
        "for _n in R.__abstractmethods__:\n    setattr(R, _n, lambda *a: 0.5)\n"
        "R.__abstractmethods__ = frozenset()\n"
        "def f():\n    return R()\n"
    )
    assert call(code, 0.5) == "wrong_answer"


def test_a_signalling_nan_decimal_is_wrong_not_a_judge_error():
    res = call("from decimal import Decimal\ndef f():\n    return Decimal('sNaN')\n", 0.5)
    assert res == "wrong_answer"


@pytest.mark.parametrize(
    "tag",
    [
        {"__t": "fraction", "v": [1, 0]},
        {"__t": "fraction", "v": [True, 2]},
        {"__t": "fraction", "v": [2**13000, 3]},
        {"__t": "fraction", "v": [1]},
        {"__t": "decimal", "v": "0.5x"},
        {"__t": "decimal", "v": "1" * 5001},
    ],
)
def test_a_malformed_or_oversized_number_tag_is_refused(tag):
    with pytest.raises(ValueError):
        codec.decode(tag)


def test_a_fraction_in_a_separate_script_test_compares_by_value():
    code = "from fractions import Fraction\ndef half():\n    return Fraction(1, 2)\n"
    assert script(code, "assert half() == 0.5\nassert abs(half() - 0.5) < 1e-9\n") == "passed"


# ---- in-place effects on arguments (separate script tests) -----------------------------------


def test_an_in_place_sort_is_seen_by_a_separate_script_test():
    assert (
        script("def s(a):\n    a.sort()\n", "x = [3, 1, 2]\ns(x)\nassert x == [1, 2, 3]\n")
        == "passed"
    )


def test_an_in_place_method_of_a_solution_class_is_seen():
    code = (
        "class Solution:\n    def rotate(self, nums, k):\n        k %= len(nums)\n"
        "        nums[:] = nums[-k:] + nums[:-k]\n"
    )
    test = "nums = [1, 2, 3, 4]\nSolution().rotate(nums, 1)\nassert nums == [4, 1, 2, 3]\n"
    assert script(code, test) == "passed"


def test_in_place_changes_to_dicts_and_keyword_arguments_are_seen():
    code = "def f(d, *, out):\n    d['b'] = 2\n    del d['a']\n    out.append(len(d))\n"
    test = "d = {'a': 1}\nr = []\nf(d, out=r)\nassert d == {'b': 2} and r == [1]\n"
    assert script(code, test) == "passed"


def test_a_nested_change_keeps_the_tests_inner_objects():
    test = "g = [[0] * 3 for _ in range(3)]\nrow = g[1]\nf(g)\nassert row[1] == 5 and g[1] is row\n"
    assert script("def f(g):\n    g[1][1] = 5\n", test) == "passed"


def test_a_function_in_a_changed_list_stays_the_tests_own():
    test = "g = lambda: 7\nx = [g]\nf(x)\nassert x[0] is g and x[1] == 1\n"
    assert script("def f(a):\n    a.append(1)\n", test) == "passed"


def test_a_copy_sorted_but_not_in_place_still_fails():
    assert (
        script("def s(a):\n    return sorted(a)\n", "x = [3, 1, 2]\ns(x)\nassert x == [1, 2, 3]\n")
        == "wrong_answer"
    )


def test_objects_written_into_an_argument_that_equal_everything_do_not_pass():
    code = (
        "class E:\n    def __eq__(self, other):\n        return True\n"
        "def s(a):\n    a[:] = [E(), E(), E()]\n"
    )
    assert script(code, "x = [3, 1, 2]\ns(x)\nassert x == [1, 2, 3]\n") == "wrong_answer"
