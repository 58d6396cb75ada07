"""Assert-style ("script") tests are as hard to fool as call tests: each known way for a wrong
program to pass is a failing verdict here (one per test), and ordinary programs still pass."""

import pytest

from recode_lib.sandbox import SandboxConfig, execute

CFG = SandboxConfig(time_limit_s=5.0, memory_mb=512, workers=1)

HUMANEVAL_4 = """
def check(candidate):
    assert abs(candidate([1.0, 2.0, 3.0]) - 2.0/3.0) < 1e-6
    assert abs(candidate([1.0, 2.0, 3.0, 4.0]) - 1.0) < 1e-6

check(mean_absolute_deviation)
"""
MEAN_AD = (
    "def mean_absolute_deviation(numbers):\n    m = sum(numbers) / len(numbers)\n"
    "    return sum(abs(x - m) for x in numbers) / len(numbers)\n"
)
MBPP_2 = (
    "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))\n"
    "assert set(similar_elements((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))\n"
)
SIMILAR = "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n"
BCB_TEST = """
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
"""
WRONG_BCB = "def task_func(x):\n    return x + 1\n"


def script(code, test, **tests):
    res = execute(
        {"id": "s", "code": code, "tests": {"kind": "script", "script": test, **tests}}, config=CFG
    )
    return res["status"]


def test_the_honest_versions_pass():
    assert script(MEAN_AD, HUMANEVAL_4) == "passed"
    assert script(SIMILAR, MBPP_2) == "passed"
    assert script("def task_func(x):\n    return 2 * x\n", BCB_TEST) == "passed"
    assert script(MEAN_AD, HUMANEVAL_4, entry_point="mean_absolute_deviation") == "passed"


def test_patching_ast_parse_does_not_skip_the_asserts():
    code = (
        "import ast\n_real = ast.parse\n"
        "ast.parse = lambda src, *a, **k: _real('pass')\n"
        "def similar_elements(a, b):\n    return ()\n"
    )
    assert script(code, MBPP_2) == "wrong_answer"


def test_patching_unittest_was_successful_does_not_pass():
    code = (
        "import unittest\nunittest.TestResult.wasSuccessful = lambda self: True\n"
        "unittest.TextTestResult.wasSuccessful = lambda self: True\n" + WRONG_BCB
    )
    assert script(code, BCB_TEST) != "passed"


def test_patching_math_isclose_does_not_pass():
    code = "import math\nmath.isclose = lambda *a, **k: True\ndef f(x):\n    return 0.0\n"
    assert script(code, "import math\nassert math.isclose(f(1), 2.0)\n") == "wrong_answer"


def test_shadowing_a_builtin_the_test_uses_does_not_pass():
    code = "def set(*a):\n    return 0\ndef similar_elements(a, b):\n    return (1,)\n"
    assert script(code, MBPP_2) == "wrong_answer"


def test_patching_builtins_inside_the_call_does_not_pass():
    code = (
        "import builtins\ndef mean_absolute_deviation(numbers):\n"
        "    builtins.abs = lambda x: 0\n    return 5.0\n"
    )
    assert script(code, HUMANEVAL_4) == "wrong_answer"


def test_an_object_with_a_lying_sub_does_not_pass():
    code = (
        "class Z:\n    def __sub__(self, o):\n        return 0.0\n    __rsub__ = __sub__\n"
        "def mean_absolute_deviation(numbers):\n    return Z()\n"
    )
    assert script(code, HUMANEVAL_4) != "passed"


def test_a_float_subclass_with_a_lying_sub_does_not_pass():
    code = (
        "class F(float):\n    def __sub__(self, o):\n        return 0.0\n"
        "def mean_absolute_deviation(numbers):\n    return F(7.0)\n"
    )
    assert script(code, HUMANEVAL_4) == "wrong_answer"


def test_an_object_with_a_lying_eq_does_not_pass():
    code = (
        "class E:\n    def __eq__(self, o):\n        return True\n    __hash__ = None\n"
        "def f(x):\n    return E()\n"
    )
    assert script(code, "assert f(1) == 5\nassert 5 == f(1)\n") == "wrong_answer"
    assert script(code, "x = f(1)\nif not (x == 5):\n    raise AssertionError\n") != "passed"


def test_an_object_with_a_lying_contains_does_not_pass():
    code = (
        "class C(list):\n    def __contains__(self, o):\n        return True\n"
        "def f(x):\n    return C([0])\n"
    )
    assert script(code, "assert 3 in f(1)\n") == "wrong_answer"
    plain = (
        "class C:\n    def __contains__(self, o):\n        return True\ndef f(x):\n    return C()\n"
    )
    assert script(plain, "assert 3 in f(1)\n") != "passed"


def test_reading_the_nonce_from_its_pipe_does_not_pass():
    code = """import os, threading, json
def grab():
    for fd in range(3, 64):
        try:
            data = os.read(fd, 64)
        except OSError:
            continue
        for w in range(3, 64):
            try:
                line = json.dumps({"i": 0, "st": "ok", "out": data.decode()}).encode()
                os.write(w, b"R\\n" + b"T " + line + b"\\n")
            except OSError:
                pass
threading.Thread(target=grab, daemon=True).start()
def f(x):
    import time
    time.sleep(0.5)
    return 0
"""
    assert script(code, "assert f(1) == 5\n") != "passed"


ASK_NONCE = """import os, json
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
                    line = json.dumps({"i": 0, "st": "ok", "out": data}).encode()
                    os.write(w, b"T " + line + b"\\n")
                except OSError:
                    pass
            os._exit(0)
    return 0
"""


def test_asking_for_the_nonce_itself_does_not_pass():
    assert script(ASK_NONCE, "assert f(1) == 5\n") != "passed"


@pytest.mark.xfail(
    strict=True,
    reason="residual risk, documented in docs/modules/sandbox.md (harness): unittest-style "
    "tests share the submission's process, which can write protocol lines itself",
)
def test_inline_mode_cannot_stop_a_submission_that_asks_for_the_nonce_itself():
    assert script(ASK_NONCE, "assert f(1) == 5\n", separate=False) != "passed"


def test_rewriting_the_test_namespace_through_frames_does_not_pass():
    code = """import sys
def f(x):
    frame = sys._getframe(1)
    while frame is not None:
        g = frame.f_globals
        g["__judge_eq__"] = lambda a, b: True
        g["abs"] = lambda v: 0
        frame = frame.f_back
    return 0
"""
    assert (
        script(code, "assert f(1) == 5\nassert f(2) == 6\nassert abs(f(3) - 7) < 1\n")
        == "wrong_answer"
    )


def test_rewriting_the_harness_through_frames_does_not_pass():
    code = """import sys
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
"""
    assert script(code, "assert f(1) == 5\n") == "wrong_answer"


def test_a_trace_function_jumping_over_asserts_does_not_pass():
    code = """import sys
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
"""
    assert script(code, "assert f(1) == 5\nassert f(1) == 5\nx = 1\n") != "passed"


# ---- ordinary programs still pass -----------------------------------------------------------
def test_namedtuple_where_a_tuple_is_expected_passes():
    code = (
        "from collections import namedtuple\nP = namedtuple('P', 'a b')\n"
        "def f(x):\n    return P(x, x + 1)\n"
    )
    assert script(code, "assert f(1) == (1, 2)\n") == "passed"


def test_a_candidate_returning_a_library_object_passes():
    code = "import re\ndef f(s):\n    return re.match('a+', s)\n"
    assert script(code, "assert f('aa') is not None and f('b') is None\n") == "passed"
    inline = "assert f('aa') is not None and f('aa').group() == 'aa'\n"
    assert script(code, inline, separate=False) == "passed"


@pytest.mark.parametrize("separate", [True, False])
def test_both_script_modes_judge_the_same_simple_cases(separate):
    assert script(MEAN_AD, HUMANEVAL_4, separate=separate) == "passed"
    assert (
        script("def mean_absolute_deviation(n):\n    return 0.5\n", HUMANEVAL_4, separate=separate)
        == "wrong_answer"
    )
    assert (
        script(
            "def mean_absolute_deviation(n):\n    raise ValueError\n",
            HUMANEVAL_4,
            separate=separate,
        )
        == "runtime_error"
    )


def test_the_submission_may_use_a_helper_it_defines():
    code = "def helper(x):\n    return x * 2\ndef f(x):\n    return helper(x)\n"
    assert script(code, "assert f(2) == 4\n") == "passed"


@pytest.mark.parametrize(
    "ep, expect", [("sum", "passed"), ("other", "runtime_error"), (None, "runtime_error")]
)
def test_only_the_entry_point_may_shadow_a_builtin(ep, expect):
    # MBPP/126 defines `sum` (else the builtin runs: TypeError); MBPP/2 must not be passed
    # by a submission defining `set`
    code = "def sum(a, b):\n    return 6\n"
    assert (
        script(code, "assert sum(10, 15) == 6\n", **({"entry_point": ep} if ep else {})) == expect
    )
    assert (
        script(
            "def similar_elements(a, b):\n    return 0\ndef set(*a):\n    return 0\n",
            MBPP_2,
            entry_point="similar_elements",
        )
        != "passed"
    )


FORGE_READY = r"""
import sys, os, json
f_ = sys._getframe(1)
while 'rep' not in f_.f_locals:
    f_ = f_.f_back
req, rep = f_.f_locals['req'], f_.f_locals['rep']
def w(o):
    d = json.dumps(o).encode(); d = len(d).to_bytes(8, 'little') + d
    while d: d = d[os.write(rep, d):]
def r(n):
    b = b''
    while len(b) < n:
        c = os.read(req, n - len(b))
        if not c: os._exit(0)
        b += c
    return b
w(["ready", {"f": "function", "__judge_eq__": "function"}])
w(["ready", ["f", "__judge_eq__"], []])
while True:
    msg = json.loads(r(int.from_bytes(r(8), 'little')))
    w(["ok", True if msg[2] == "__judge_eq__" else 0])
"""


def test_a_forged_ready_message_cannot_make_the_judge_proxy_its_own_helpers():
    # what is shared comes from the test script's free names, never from the submission
    assert script(FORGE_READY, "assert f(1) == 7\nassert f(2) == 9\n") != "passed"


SCRIPT_FROM_MEMORY = r"""
import sys, gc, ast
T = {}
def grab(src):
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call):
            T[tuple(ast.literal_eval(a) for a in node.left.args)] = \
                ast.literal_eval(node.comparators[0])
f_ = sys._getframe(0)
while f_ is not None:
    for v in list(f_.f_locals.values()):
        if isinstance(v, dict) and isinstance(v.get("script"), str):
            grab(v["script"])
    f_ = f_.f_back
for o in gc.get_objects():
    if isinstance(o, dict) and isinstance(o.get("script"), str):
        grab(o["script"])
def f(*args):
    return T.get(args)
"""


def test_the_submission_process_never_holds_the_test_script():
    # forked before the script is read (it reaches the test runner through a memfd)
    assert script(SCRIPT_FROM_MEMORY, "assert f(1) == 7\nassert f(2) == 9\n") != "passed"


def test_separate_tests_build_and_mutate_instances_of_the_submissions_classes():
    # MBPP/367's shape: the test builds a tree of the submission's Node objects
    code = (
        "class Node:\n    def __init__(self, d):\n        self.d, self.left = d, None\n"
        "def depth(n):\n    return 0 if n is None else 1 + depth(n.left)\n"
    )
    test = "r = Node(1)\nr.left = Node(2)\nassert r.left.d == 2\nassert depth(r) == 2\n"
    assert script(code, test, entry_point="depth") == "passed"
    assert script(code, test.replace("== 2\n", "== 3\n"), entry_point="depth") == "wrong_answer"


def test_separate_tests_may_pass_builtin_types_as_arguments():
    # MBPP/533: remove_datatype((4, 5, 4, 7.7, 1.2), int)
    code = "def rm(t, ty):\n    return [e for e in t if not isinstance(e, ty)]\n"
    assert script(code, "assert rm((4, 5, 7.7), int) == [7.7]\n") == "passed"


def test_separate_tests_may_use_a_standard_module_the_submission_imported():
    # MBPP/596: the test calls sys.getsizeof without importing sys
    code = "import sys\ndef size(t):\n    return sys.getsizeof(t)\n"
    assert script(code, "assert size((1, 2)) == sys.getsizeof((1, 2))\n") == "passed"


def test_leetcode_style_class_tests_keep_their_state_across_calls():
    code = (
        "class Counter:\n    def __init__(self, start):\n        self.n = start\n"
        "    def add(self, k=1):\n        self.n += k\n        return self.n\n"
    )
    test = "c = Counter(5)\nassert c.add() == 6\nassert c.add(k=4) == 10\n"
    assert script(code, test) == "passed"
    assert script(code, "c = Counter(5)\nassert c.add() == 7\n") == "wrong_answer"


# ---- unittest-style (BigCodeBench) tests in the submission's process --------------------------
def unit(body):
    import textwrap

    return (
        "import unittest\nclass TestCases(unittest.TestCase):\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
        + "\nimport unittest as _u\n_r = _u.TextTestRunner(verbosity=0).run("
        "_u.TestLoader().loadTestsFromTestCase(TestCases))\n"
        "if not _r.wasSuccessful():\n    raise SystemExit(1)\n"
    )


TWICE = unit(
    "def test_a(self):\n    self.assertEqual(f(1), 2)\n"
    "def test_b(self):\n    self.assertEqual(f(2), 4)\n"
)


def test_a_skip_raised_by_the_submission_is_not_a_pass():
    code = "import unittest\ndef f(x):\n    raise unittest.SkipTest('no')\n"
    assert script(code, TWICE) == "runtime_error"


def test_a_submission_importing_numpy_passes_unittest_tests():
    # numpy's BLAS threads would make the child look tampered with (the nonce needs it alone)
    pytest.importorskip("numpy")
    assert (
        script("import numpy as np\ndef f(x):\n    return int(np.int64(2 * x))\n", TWICE)
        == "passed"
    )


def test_standard_library_container_types_survive_for_type_checking_tests():
    # BigCodeBench/8, /22: assertIsInstance(task_func(...), Counter)
    code = "from collections import Counter\ndef f(x):\n    return Counter('aab')\n"
    test = unit(
        "def test_a(self):\n    from collections import Counter\n"
        "    self.assertIsInstance(f(1), Counter)\n"
        "    self.assertEqual(f(1), {'a': 2, 'b': 1})\n"
    )
    assert script(code, test) == "passed"


def test_the_tests_own_mock_patch_is_not_undone_by_the_guard():
    # BigCodeBench/145's shape: the test patches a preloaded class, then calls the candidate
    code = "import fractions\ndef f():\n    return float(fractions.Fraction(1, 2))\n"
    test = unit(
        "from unittest import mock\n"
        "@mock.patch('fractions.Fraction.__float__', return_value=9.0)\n"
        "def test_a(self, m):\n    self.assertEqual(f(), 9.0)\n"
        "    self.assertEqual(f(), 9.0)\n"
    )
    assert script(code, test) == "passed"
    assert script("def f():\n    return 0.5\n", test) != "passed"


def test_residual_poisoning_the_restore_snapshot_through_frames():
    code = (
        "import sys\ndef f(x):\n    fr = sys._getframe(1)\n"
        "    while fr is not None:\n"
        "        for v in list(fr.f_locals.values()):\n"
        "            if isinstance(v, dict) and 'classes' in v:\n"
        "                for cls, saved in v['classes']:\n"
        "                    if cls.__name__ == 'TestResult':\n"
        "                        saved['wasSuccessful'] = lambda self: True\n"
        "        fr = fr.f_back\n    return 0\n"
    )
    assert script(code, TWICE) != "passed"


def test_patching_the_running_testcase_instance_through_frames_does_not_pass():
    code = (
        "import sys\ndef f(x):\n    fr = sys._getframe(1)\n    while fr is not None:\n"
        "        s = fr.f_locals.get('self')\n"
        "        if s is not None and hasattr(s, 'assertEqual'):\n"
        "            s.assertEqual = lambda *a, **k: None\n"
        "        fr = fr.f_back\n    return 0\n"
    )
    test = unit("def test_a(self):\n    r = f(1)\n    self.assertEqual(r, 2)\n")
    assert script(code, test) != "passed"


def test_replacing_closure_cells_of_result_methods_does_not_pass():
    code = (
        "import unittest\nfor n in ('addFailure', 'addError'):\n"
        "    for c in getattr(unittest.TestResult, n).__closure__ or ():\n"
        "        if callable(c.cell_contents):\n"
        "            c.cell_contents = lambda *a, **k: None\n"
        "def f(x):\n    return 0\n"
    )
    assert script(code, TWICE) != "passed"


def test_a_shared_non_function_name_cannot_return_lying_values():
    code = (
        "import types\nclass AnyStr(str):\n    def __eq__(self, o):\n        return True\n"
        "    __hash__ = str.__hash__\n"
        "json = types.SimpleNamespace(loads=lambda s: AnyStr(''))\n"
        "def f(x):\n    return '0'\n"
    )
    test = unit("def test_a(self):\n    self.assertEqual(json.loads(f(4)), '2.0')\n")
    assert script(code, test) != "passed"


def test_a_submodule_the_submission_imported_stays_importable_for_its_calls():
    # BigCodeBench/158: `import urllib.request` must survive the guard's restore of `urllib`
    code = (
        "import urllib.request\nimport urllib.parse\n"
        "def f(x):\n    return 2 * x if urllib.request.Request else 0\n"
    )
    assert script(code, TWICE) == "passed"


def test_a_finished_unwaited_subprocess_of_the_test_does_not_deny_the_nonce():
    # BigCodeBench/14's test reads `os.popen("unzip -l ...")` and never closes it (a zombie)
    test = unit(
        "def test_a(self):\n    import os\n    os.popen('true').read()\n"
        "    self.assertEqual(f(1), 2)\n"
    )
    assert script("def f(x):\n    return 2 * x\n", test) == "passed"


def test_patching_the_running_test_result_found_through_gc_does_not_pass():
    code = (
        "import gc\ndef f(x):\n    for o in gc.get_objects():\n"
        "        if hasattr(o, 'wasSuccessful') and hasattr(o, 'failures') \\\n"
        "                and not isinstance(o, type):\n"
        "            o.wasSuccessful = lambda: True\n    return 0\n"
    )
    assert script(code, TWICE) != "passed"


def test_a_library_function_the_submission_imported_is_shared_with_the_tests():
    # BigCodeBench/124, /152: the tests call `randint`, taken from the submission's imports
    code = "from random import randint\nfrom math import sqrt\ndef f(x):\n    return 2 * x\n"
    test = unit(
        "def test_a(self):\n    self.assertTrue(1 <= randint(1, 3) <= 3)\n"
        "    self.assertEqual(sqrt(f(2)), 2.0)\n"
    )
    assert script(code, test) == "passed"
