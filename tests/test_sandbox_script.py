"""Assert-style ("script") tests are as hard to fool as call tests: each known way for a wrong
program to pass is a failing verdict here (one per test), and ordinary programs still pass."""

import pytest

from recode_lib.sandbox import SandboxConfig, execute

CFG = SandboxConfig(time_limit_s=5.0, memory_mb=512, workers=1)

HUMANEVAL_4 = '''
def check(candidate):
    assert abs(candidate([1.0, 2.0, 3.0]) - 2.0/3.0) < 1e-6
    assert abs(candidate([1.0, 2.0, 3.0, 4.0]) - 1.0) < 1e-6

check(mean_absolute_deviation)
'''
MEAN_AD = ("def mean_absolute_deviation(numbers):\n    m = sum(numbers) / len(numbers)\n"
           "    return sum(abs(x - m) for x in numbers) / len(numbers)\n")
MBPP_2 = ("assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))\n"
          "assert set(similar_elements((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))\n")
SIMILAR = "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n"
BCB_TEST = '''
import unittest
class TestCases(unittest.TestCase):
    def test_double(self):
        self.assertEqual(task_func(2), 4)
    def test_zero(self):
        self.assertEqual(task_func(0), 0)

import unittest as _unittest
_suite = _unittest.TestLoader().loadTestsFromTestCase(TestCases)
_result = _unittest.TextTestRunner(verbosity=0).run(_suite)
if not _result.wasSuccessful():
    raise SystemExit(1)
'''
WRONG_BCB = "def task_func(x):\n    return x + 1\n"


def script(code, test, **tests):
    res = execute({"id": "s", "code": code, "tests": {"kind": "script", "script": test, **tests}},
                  config=CFG)
    return res["status"]


def test_the_honest_versions_pass():
    assert script(MEAN_AD, HUMANEVAL_4) == "passed"
    assert script(SIMILAR, MBPP_2) == "passed"
    assert script("def task_func(x):\n    return 2 * x\n", BCB_TEST) == "passed"
    assert script(MEAN_AD, HUMANEVAL_4, entry_point="mean_absolute_deviation") == "passed"


def test_patching_ast_parse_does_not_skip_the_asserts():
    code = ("import ast\n_real = ast.parse\n"
            "ast.parse = lambda src, *a, **k: _real('pass')\n"
            "def similar_elements(a, b):\n    return ()\n")
    assert script(code, MBPP_2) == "wrong_answer"


def test_patching_unittest_was_successful_does_not_pass():
    code = ("import unittest\nunittest.TestResult.wasSuccessful = lambda self: True\n"
            "unittest.TextTestResult.wasSuccessful = lambda self: True\n" + WRONG_BCB)
    assert script(code, BCB_TEST) != "passed"


def test_patching_math_isclose_does_not_pass():
    code = "import math\nmath.isclose = lambda *a, **k: True\ndef f(x):\n    return 0.0\n"
    assert script(code, "import math\nassert math.isclose(f(1), 2.0)\n") == "wrong_answer"


def test_shadowing_a_builtin_the_test_uses_does_not_pass():
    code = "def set(*a):\n    return 0\ndef similar_elements(a, b):\n    return (1,)\n"
    assert script(code, MBPP_2) == "wrong_answer"


def test_patching_builtins_inside_the_call_does_not_pass():
    code = ("import builtins\ndef mean_absolute_deviation(numbers):\n"
            "    builtins.abs = lambda x: 0\n    return 5.0\n")
    assert script(code, HUMANEVAL_4) == "wrong_answer"


def test_an_object_with_a_lying_sub_does_not_pass():
    code = ("class Z:\n    def __sub__(self, o):\n        return 0.0\n    __rsub__ = __sub__\n"
            "def mean_absolute_deviation(numbers):\n    return Z()\n")
    assert script(code, HUMANEVAL_4) != "passed"


def test_a_float_subclass_with_a_lying_sub_does_not_pass():
    code = ("class F(float):\n    def __sub__(self, o):\n        return 0.0\n"
            "def mean_absolute_deviation(numbers):\n    return F(7.0)\n")
    assert script(code, HUMANEVAL_4) == "wrong_answer"


def test_an_object_with_a_lying_eq_does_not_pass():
    code = ("class E:\n    def __eq__(self, o):\n        return True\n    __hash__ = None\n"
            "def f(x):\n    return E()\n")
    assert script(code, "assert f(1) == 5\nassert 5 == f(1)\n") == "wrong_answer"
    assert script(code, "x = f(1)\nif not (x == 5):\n    raise AssertionError\n") != "passed"


def test_an_object_with_a_lying_contains_does_not_pass():
    code = ("class C(list):\n    def __contains__(self, o):\n        return True\n"
            "def f(x):\n    return C([0])\n")
    assert script(code, "assert 3 in f(1)\n") == "wrong_answer"
    plain = "class C:\n    def __contains__(self, o):\n        return True\ndef f(x):\n    return C()\n"
    assert script(plain, "assert 3 in f(1)\n") != "passed"


def test_reading_the_nonce_from_its_pipe_does_not_pass():
    code = ('''import os, threading, json
def grab():
    for fd in range(3, 64):
        try:
            data = os.read(fd, 64)
        except OSError:
            continue
        for w in range(3, 64):
            try:
                os.write(w, b"R\\n" + b"T " + json.dumps({"i": 0, "st": "ok", "out": data.decode()}).encode() + b"\\n")
            except OSError:
                pass
threading.Thread(target=grab, daemon=True).start()
def f(x):
    import time
    time.sleep(0.5)
    return 0
''')
    assert script(code, "assert f(1) == 5\n") != "passed"


ASK_NONCE = ('''import os, json
def f(x):
    for w in range(3, 64):
        try:
            os.write(w, b"R\\n")
        except OSError:
            pass
    for fd in range(3, 64):
        try:
            data = os.read(fd, 64).decode()
        except OSError:
            continue
        if len(data) == 32:
            for w in range(3, 64):
                try:
                    os.write(w, b"T " + json.dumps({"i": 0, "st": "ok", "out": data}).encode() + b"\\n")
                except OSError:
                    pass
            os._exit(0)
    return 0
''')


def test_asking_for_the_nonce_itself_does_not_pass():
    assert script(ASK_NONCE, "assert f(1) == 5\n") != "passed"


@pytest.mark.xfail(strict=True, reason="residual risk, documented in harness.py: unittest-style "
                   "tests share the submission's process, which can write protocol lines itself")
def test_inline_mode_cannot_stop_a_submission_that_asks_for_the_nonce_itself():
    assert script(ASK_NONCE, "assert f(1) == 5\n", separate=False) != "passed"


def test_rewriting_the_test_namespace_through_frames_does_not_pass():
    code = ('''import sys
def f(x):
    frame = sys._getframe(1)
    while frame is not None:
        g = frame.f_globals
        g["__judge_eq__"] = lambda a, b: True
        g["abs"] = lambda v: 0
        frame = frame.f_back
    return 0
''')
    assert script(code, "assert f(1) == 5\nassert f(2) == 6\nassert abs(f(3) - 7) < 1\n") \
        == "wrong_answer"


def test_rewriting_the_harness_through_frames_does_not_pass():
    code = ('''import sys
def f(x):
    frame = sys._getframe(1)
    while frame is not None:
        g = frame.f_globals
        if "_send" in g:
            real = g["_send"]
            def send(wfd, tag, obj=None):
                obj = dict(obj or {}, st="ok")
                return real(wfd, tag, obj)
            g["_send"] = send
            g["_status_of"] = lambda exc: "ok"
        frame = frame.f_back
    return 0
''')
    assert script(code, "assert f(1) == 5\n") == "wrong_answer"


def test_a_trace_function_jumping_over_asserts_does_not_pass():
    code = ('''import sys
def f(x):
    def tracer(frame, event, arg):
        if frame.f_code.co_filename == "<tests>" and event == "line":
            try:
                frame.f_lineno = 3
            except Exception:
                pass
        return tracer
    sys.settrace(tracer)
    sys._getframe(1).f_trace = tracer
    return 0
''')
    assert script(code, "assert f(1) == 5\nassert f(1) == 5\nx = 1\n") != "passed"


# ---- ordinary programs still pass -----------------------------------------------------------
def test_namedtuple_where_a_tuple_is_expected_passes():
    code = ("from collections import namedtuple\nP = namedtuple('P', 'a b')\n"
            "def f(x):\n    return P(x, x + 1)\n")
    assert script(code, "assert f(1) == (1, 2)\n") == "passed"


def test_a_candidate_returning_a_library_object_passes():
    code = "import re\ndef f(s):\n    return re.match('a+', s)\n"
    assert script(code, "assert f('aa') is not None and f('b') is None\n") == "passed"
    inline = "assert f('aa') is not None and f('aa').group() == 'aa'\n"
    assert script(code, inline, separate=False) == "passed"


@pytest.mark.parametrize("separate", [True, False])
def test_both_script_modes_judge_the_same_simple_cases(separate):
    assert script(MEAN_AD, HUMANEVAL_4, separate=separate) == "passed"
    assert script("def mean_absolute_deviation(n):\n    return 0.5\n", HUMANEVAL_4,
                  separate=separate) == "wrong_answer"
    assert script("def mean_absolute_deviation(n):\n    raise ValueError\n", HUMANEVAL_4,
                  separate=separate) == "runtime_error"


def test_the_submission_may_use_a_helper_it_defines():
    code = "def helper(x):\n    return x * 2\ndef f(x):\n    return helper(x)\n"
    assert script(code, "assert f(2) == 4\n") == "passed"


@pytest.mark.parametrize("ep, expect", [("f", "runtime_error"), (None, "passed")])
def test_entry_point_is_the_only_shared_name(ep, expect):
    code = "def helper(x):\n    return x\ndef f(x):\n    return x\n"
    assert script(code, "assert helper(f(2)) == 2\n", **({"entry_point": ep} if ep else {})) \
        == expect


def test_leetcode_style_class_tests_keep_their_state_across_calls():
    code = ("class Counter:\n    def __init__(self, start):\n        self.n = start\n"
            "    def add(self, k=1):\n        self.n += k\n        return self.n\n")
    test = "c = Counter(5)\nassert c.add() == 6\nassert c.add(k=4) == 10\n"
    assert script(code, test) == "passed"
    assert script(code, "c = Counter(5)\nassert c.add() == 7\n") == "wrong_answer"
