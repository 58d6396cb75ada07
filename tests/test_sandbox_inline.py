"""In-process unittest tests (BigCodeBench's shape, `separate=False`): each known way for a
wrong submission to pass them is a failing verdict here, one hostile property per test, and
correct BigCodeBench-style solutions still pass (the controls)."""

import textwrap

import pytest

from recode_lib.sandbox import SandboxConfig, execute, execute_many

CFG = SandboxConfig(time_limit_s=10.0, memory_mb=512, workers=1)

RUNNER = (
    "\nimport unittest as _unittest\n"
    "_suite = _unittest.TestLoader().loadTestsFromTestCase(TestCases)\n"
    "_result = _unittest.TextTestRunner(verbosity=0).run(_suite)\n"
    "if not _result.wasSuccessful():\n    raise SystemExit(1)\n"
)


def unit(body):
    """A BigCodeBench test script: a TestCase class, then recode's runner (data/bigcodebench)."""
    return (
        "import unittest\nclass TestCases(unittest.TestCase):\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
        + RUNNER
    )


# task_func doubles its argument; a wrong submission returns something else
DOUBLE = unit("""
def test_a(self):
    self.assertEqual(task_func(1), 2)
def test_b(self):
    self.assertEqual(task_func(2), 4)
def test_c(self):
    self.assertEqual(task_func(3), 6)
""")
RIGHT = "def task_func(x):\n    return 2 * x\n"

# the patch every attack below tries to make outlive the guard: all results count as success
PATCH = (
    "def _patch():\n    import unittest\n"
    "    for c in (unittest.TestResult, unittest.TextTestResult):\n"
    "        c.wasSuccessful = lambda self: True\n"
)


def verdict(code, test=DOUBLE, entry_point="task_func"):
    tests = {"kind": "script", "script": test, "separate": False}
    if entry_point:
        tests["entry_point"] = entry_point
    return execute({"id": "bcb", "code": code, "tests": tests}, config=CFG)["status"]


def test_control_a_correct_solution_passes():
    assert verdict(RIGHT) == "passed"
    assert verdict("def task_func(x):\n    return x + 1\n") != "passed"


def frames_to(cond):
    """Source of a helper that walks the stack up from its caller to the first frame for which
    `cond` (an expression in `f`) holds."""
    return (
        "import sys\ndef _find():\n    f = sys._getframe(1)\n"
        f"    while f is not None and not ({cond}):\n        f = f.f_back\n    return f\n"
    )


OUTCOME = frames_to("type(f.f_locals.get('outcome')).__name__ == '_Outcome'")


# ---- unittest's own machinery ------------------------------------------------------------------
def test_unittests_internal_stop_exception_is_an_error():
    code = "import unittest.case\ndef task_func(x):\n    raise unittest.case._ShouldStop()\n"
    assert verdict(code) != "passed"


def test_the_running_outcome_cannot_be_told_to_expect_a_failure():
    code = OUTCOME + (
        "def task_func(x):\n    _find().f_locals['outcome'].expecting_failure = True\n"
        "    return 0\n"
    )
    assert verdict(code) != "passed"


def test_the_running_outcome_cannot_be_given_another_result():
    code = OUTCOME + (
        "import unittest\ndef task_func(x):\n"
        "    _find().f_locals['outcome'].result = unittest.TestResult()\n"
        "    return 0\n"
    )
    assert verdict(code) != "passed"


def test_the_running_results_lists_cannot_be_emptied():
    # test_c's call drops the failures test_a and test_b left in the result
    code = frames_to("'result' in f.f_locals and hasattr(f.f_locals['result'], 'failures')") + (
        "def task_func(x):\n    r = _find().f_locals['result']\n"
        "    r.failures.clear()\n    r.errors.clear()\n    return 6 if x == 3 else 0\n"
    )
    assert verdict(code) != "passed"


def test_the_running_tests_type_equality_functions_cannot_be_replaced():
    code = frames_to("'self' in f.f_locals and hasattr(f.f_locals['self'], 'assertEqual')") + (
        "def task_func(x):\n    t = _find().f_locals['self']\n"
        "    t._type_equality_funcs[int] = lambda *a, **k: None\n    return 0\n"
    )
    assert verdict(code) != "passed"


def test_the_first_call_cannot_replace_the_test_classes_other_methods():
    code = frames_to("'self' in f.f_locals and hasattr(f.f_locals['self'], 'assertEqual')") + (
        "def task_func(x):\n    cls = type(_find().f_locals['self'])\n"
        "    for name in ('test_b', 'test_c'):\n        setattr(cls, name, lambda self: None)\n"
        "    return 2 if x == 1 else 0\n"
    )
    assert verdict(code) != "passed"


def test_the_first_call_cannot_mark_the_later_tests_skipped():
    code = frames_to("'self' in f.f_locals and hasattr(f.f_locals['self'], 'assertEqual')") + (
        "def task_func(x):\n    cls = type(_find().f_locals['self'])\n"
        "    for name in ('test_b', 'test_c'):\n"
        "        getattr(cls, name).__unittest_skip__ = True\n"
        "    return 2 if x == 1 else 0\n"
    )
    assert verdict(code) != "passed"


# ---- values and exceptions cross only as plain data ----------------------------------------------
def test_a_raised_exceptions_str_runs_no_code_after_the_call():
    code = PATCH + (
        "class E(Exception):\n    def __str__(self):\n        _patch()\n"
        "        return 'e'\ndef task_func(x):\n    raise E()\n"
    )
    assert verdict(code) != "passed"


def test_a_raised_exceptions_metaclass_runs_no_code_after_the_call():
    code = PATCH + (
        "class M(type):\n    def __getattribute__(cls, name):\n        _patch()\n"
        "        return type.__getattribute__(cls, name)\n"
        "class E(Exception, metaclass=M):\n    pass\n"
        "def task_func(x):\n    raise E()\n"
    )
    assert verdict(code) != "passed"


@pytest.mark.parametrize("hook", ["__eq__", "__hash__"])
def test_a_returned_objects_metaclass_runs_no_code_after_the_call(hook):
    body = {
        "__eq__": "    def __eq__(cls, other):\n        _patch()\n        return False\n"
        "    __hash__ = type.__hash__\n",
        "__hash__": "    def __hash__(cls):\n        _patch()\n        return 1\n",
    }[hook]
    code = (
        PATCH
        + "class M(type):\n"
        + body
        + (
            "class K(metaclass=M):\n    pass\n"
            "def task_func(x):\n    return {'k': K(), 's': [K()]}\n"
        )
    )
    assert verdict(code) != "passed"


def test_a_returned_objects_finalizer_runs_no_code_after_the_call():
    code = PATCH + (
        "class D:\n    def __del__(self):\n        _patch()\ndef task_func(x):\n    return D()\n"
    )
    assert verdict(code) != "passed"


def test_a_returned_generator_runs_no_unguarded_code():
    code = PATCH + ("def task_func(x):\n    yield 0\n    _patch()\n")
    test = unit("def test_a(self):\n    self.assertEqual(list(task_func(1)), [2])\n")
    assert verdict(code, test) != "passed"


# a plain container's elements are checked at C speed (harness._plainify's fast path): one
# object of the submission's at the end of a long one must still become opaque
_LIAR = "class E:\n    __eq__ = lambda self, other: True\n    __hash__ = lambda self: hash(-1)\n"
_TAILS = {
    "list": ("[0] * 5000 + [E()]", "[0] * 5000 + [7]"),
    "tuple": ("tuple([0] * 5000 + [E()])", "tuple([0] * 5000 + [7])"),
    "set": ("set(range(5000)) | {E()}", "set(range(5000)) | {-1}"),
    "dict_value": (
        "{**{i: i for i in range(5000)}, 'k': E()}",
        "{**{i: i for i in range(5000)}, 'k': 7}",
    ),
    "dict_key": (
        "{**{i: i for i in range(5000)}, E(): 1}",
        "{**{i: i for i in range(5000)}, -1: 1}",
    ),
}


@pytest.mark.parametrize("kind", sorted(_TAILS))
def test_an_object_that_equals_anything_at_the_end_of_a_long_container_is_not_plain(kind):
    made, expected = _TAILS[kind]
    test = unit(f"def test_a(self):\n    self.assertEqual(task_func(1), {expected})\n")
    assert verdict(f"def task_func(x):\n    return {expected}\n", test) == "passed"  # control
    assert verdict(_LIAR + f"def task_func(x):\n    return {made}\n", test) != "passed"


def test_mock_any_is_not_a_value_equal_to_everything():
    code = "from unittest import mock\ndef task_func(x):\n    return mock.ANY\n"
    assert verdict(code) != "passed"


def test_a_mock_told_to_compare_equal_is_not_a_value_equal_to_everything():
    code = (
        "from unittest import mock\ndef task_func(x):\n    m = mock.MagicMock()\n"
        "    m.__eq__.return_value = True\n    return m\n"
    )
    assert verdict(code) != "passed"


def test_a_class_posing_as_a_library_class_is_still_the_submissions():
    code = (
        "class E:\n    __module__ = 'json'\n    __eq__ = staticmethod(lambda other: True)\n"
        "    __hash__ = None\ndef task_func(x):\n    return E()\n"
    )
    assert verdict(code) != "passed"


# ---- nothing of the submission's runs between the calls
# --------------------------------------------
def test_gc_callbacks_run_no_code_after_the_call():
    code = PATCH + (
        "import gc\ngc.callbacks.append(lambda phase, info: _patch())\n"
        "def task_func(x):\n    return [object() for _ in range(3000)] and 0\n"
    )
    assert verdict(code) != "passed"


def test_cyclic_garbage_with_a_low_gc_threshold_runs_no_code_after_the_call():
    # each finalizer leaves the next cycle behind: with threshold 1 one runs at every allocation
    code = PATCH + (
        "import gc\nclass D:\n    def __del__(self):\n        _patch()\n"
        "        n = D()\n        n.me = n\n"
        "def task_func(x):\n    gc.set_threshold(1)\n    d = D()\n    d.me = d\n"
        "    return 0\n"
    )
    assert verdict(code) != "passed"


def test_a_patch_made_between_calls_is_undone_at_the_next_call():
    # the list the test passed holds a finalizer that runs when test_a's frame dies, between
    # two calls: the guard of the next call must not take that state as its baseline
    code = PATCH + (
        "class D:\n    def __del__(self):\n        _patch()\n"
        "def task_func(x):\n    if type(x) is list:\n        x.append(D())\n"
        "    return 0\n"
    )
    test = unit(
        "def test_a(self):\n    data = [1]\n    self.assertEqual(task_func(data), 2)\n"
        "def test_b(self):\n    self.assertEqual(task_func(2), 4)\n"
        "def test_c(self):\n    self.assertEqual(task_func(3), 6)\n"
    )
    assert verdict(code, test) != "passed"


def test_an_audit_hook_cannot_repatch_during_the_restore():
    code = PATCH + (
        "import sys, textwrap\n"
        "def hook(event, args):\n"
        "    if event == 'object.__setattr__' and args[1:2] == ('__code__',):\n"
        "        _patch()\n"
        "sys.addaudithook(hook)\n"
        "def task_func(x):\n    textwrap.dedent.__code__ = textwrap.indent.__code__\n"
        "    _patch()\n    return 0\n"
    )
    assert verdict(code) != "passed"


def test_the_guard_cannot_be_disabled_through_the_judges_globals():
    code = PATCH + (
        "import sys\ndef task_func(x):\n    h = sys._getframe(1).f_globals\n"
        "    for name in list(h):\n"
        "        if name.startswith('_restore') or name in ('_put', '_leave', '_flush'):\n"
        "            h[name] = lambda *a, **k: None\n"
        "    _patch()\n    return 0\n"
    )
    assert verdict(code) != "passed"


def test_the_restore_snapshot_cannot_be_poisoned_through_frames():
    # whatever the guard restores from, reachable through frames, must not be editable
    code = PATCH + (
        "import sys, unittest\nreal = unittest.TestResult.wasSuccessful\n"
        "def poison(v, depth=0, seen=set()):\n"
        "    if id(v) in seen or depth > 6:\n        return\n"
        "    seen.add(id(v))\n"
        "    if type(v) is dict:\n"
        "        for k, x in list(v.items()):\n"
        "            if x is real:\n                v[k] = lambda self: True\n"
        "            poison(x, depth + 1)\n"
        "    elif type(v) in (list, tuple):\n"
        "        for i, x in enumerate(list(v)):\n"
        "            if x is real and type(v) is list:\n"
        "                v[i] = lambda self: True\n"
        "            poison(x, depth + 1)\n"
        "def task_func(x):\n    f = sys._getframe(1)\n    while f is not None:\n"
        "        poison(dict(f.f_locals))\n        f = f.f_back\n"
        "    _patch()\n    return 0\n"
    )
    assert verdict(code) != "passed"


# ---- the expected values stay out of the submission's reach
# ----------------------------------------
def test_the_calling_tests_code_constants_are_not_readable():
    code = (
        "import sys\ndef task_func(x):\n    f = sys._getframe(1)\n"
        "    while f.f_code.co_filename != '<tests>':\n        f = f.f_back\n"
        "    return [c for c in f.f_code.co_consts if type(c) is int][-1]\n"
    )
    assert verdict(code) != "passed"


def test_the_later_tests_code_is_not_readable_between_calls():
    # a finalizer the tests free after test_a (outside any call) reads test_b's and test_c's code
    code = (
        "import unittest\nT = {}\nclass D:\n    def __del__(self):\n"
        "        for cls in unittest.TestCase.__subclasses__():\n"
        "            for f in list(vars(cls).values()):\n"
        "                ints = [c for c in getattr(f, '__code__', f).co_consts\n"
        "                        if type(c) is int] if callable(f) else []\n"
        "                if len(ints) == 2:\n                    T[ints[0]] = ints[1]\n"
        "def task_func(x):\n    if type(x) is list:\n        x.append(D())\n"
        "        return 2\n    return T.get(x, 0)\n"
    )
    test = unit(
        "def test_a(self):\n    data = [1]\n    self.assertEqual(task_func(data), 2)\n"
        "def test_b(self):\n    self.assertEqual(task_func(2), 4)\n"
        "def test_c(self):\n    self.assertEqual(task_func(3), 6)\n"
    )
    assert verdict(code, test) != "passed"


def test_the_test_script_cannot_be_read_from_an_open_fd_at_import():
    code = (
        "import os, re\nT = {}\nfor fd in range(3, 256):\n    try:\n"
        "        data = os.pread(fd, 1 << 20, 0).decode('utf-8', 'replace')\n"
        "    except OSError:\n        continue\n"
        "    for a, b in re.findall(r'task_func\\((\\d+)\\), (\\d+)\\)', data):\n"
        "        T[int(a)] = int(b)\n"
        "def task_func(x):\n    return T.get(x)\n"
    )
    assert verdict(code) != "passed"


def test_the_test_script_cannot_be_read_from_the_judges_frames_at_import():
    code = (
        "import sys, types\nT = {}\ndef grab(c, depth=0):\n"
        "    if type(c) is types.CodeType and depth < 5:\n"
        "        ints = [k for k in c.co_consts if type(k) is int]\n"
        "        if len(ints) == 2:\n            T[ints[0]] = ints[1]\n"
        "        for k in c.co_consts:\n            grab(k, depth + 1)\n"
        "f = sys._getframe(0)\nwhile f is not None:\n"
        "    for v in list(f.f_locals.values()):\n"
        "        for c in (v if type(v) is list else [v]):\n            grab(c)\n"
        "    f = f.f_back\n"
        "def task_func(x):\n    return T.get(x)\n"
    )
    assert verdict(code) != "passed"


# ---- correct BigCodeBench-style solutions still pass
# -------------------------------------------------
def test_control_an_idle_thread_pool_left_open_passes():
    code = (
        "from concurrent.futures import ThreadPoolExecutor\nPOOL = ThreadPoolExecutor(2)\n"
        "def task_func(x):\n    return POOL.submit(lambda: 2 * x).result()\n"
    )
    assert verdict(code) == "passed"


def test_control_idle_pool_workers_still_leaving_the_kernel_do_not_refuse_a_right_answer():
    # concurrent.futures joins its workers in threading's exit callback; each leaves the
    # kernel's task list a moment after the join, and with 8 of them the nonce was asked for
    # before the last had gone in about 1 record in 13 (the CI failure of 2026-12-04)
    code = (
        "import time\nfrom concurrent.futures import ThreadPoolExecutor\n"
        "POOL = ThreadPoolExecutor(8)\ndef task_func(x):\n"
        "    [f.result() for f in [POOL.submit(time.sleep, 0.001) for _ in range(8)]]\n"
        "    return 2 * x\n"
    )
    tests = {"kind": "script", "script": DOUBLE, "separate": False, "entry_point": "task_func"}
    records = [{"id": i, "code": code, "tests": tests} for i in range(40)]
    results = execute_many(records, workers=2, config=CFG)
    assert [(r["status"], r.get("reason")) for r in results] == [("passed", None)] * 40


def test_control_a_pool_of_32_threads_fits_the_memory_limit():
    # glibc's arena per thread reserved 64 MB of address space each: 12 workers failed at 512 MB
    code = (
        "import time\nfrom concurrent.futures import ThreadPoolExecutor\n"
        "POOL = ThreadPoolExecutor(32)\ndef task_func(x):\n"
        "    [f.result() for f in [POOL.submit(time.sleep, 0.01) for _ in range(32)]]\n"
        "    return 2 * x\n"
    )
    assert verdict(code) == "passed"


def test_control_a_daemon_thread_still_running_is_refused():
    code = (
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n" + RIGHT
    )
    assert verdict(code) != "passed"


def test_a_thread_started_behind_threadings_back_still_running_is_refused():
    # threading does not list it: the judge's wait for exiting threads gives up after 1 s
    code = "import _thread, time\n_thread.start_new_thread(time.sleep, (30,))\n" + RIGHT
    assert verdict(code) != "passed"


def test_padding_threadings_list_does_not_hide_a_running_thread():
    # the wait compares the kernel's tasks with threading's list, which the submission can
    # pad; the nonce still goes only to a process the kernel shows alone
    code = (
        "import _thread, threading, time\n_thread.start_new_thread(time.sleep, (30,))\n"
        "for i in range(8):\n    threading._active[-1 - i] = threading.current_thread()\n" + RIGHT
    )
    assert verdict(code) != "passed"


def test_control_exceptions_the_tests_expect_still_reach_them():
    test = unit(
        "def test_value(self):\n    with self.assertRaises(ValueError):\n        task_func(-1)\n"
        "def test_json(self):\n    import json\n"
        "    with self.assertRaises(json.JSONDecodeError) as cm:\n        task_func('{')\n"
        "    self.assertEqual(cm.exception.pos, 1)\n"
        "def test_missing(self):\n    with self.assertRaises(FileNotFoundError) as cm:\n"
        "        task_func('/nonexistent/x')\n"
        "    self.assertEqual(cm.exception.filename, '/nonexistent/x')\n"
    )
    code = (
        "import json\nclass BadValue(ValueError):\n    pass\n"
        "def task_func(x):\n    if x == -1:\n        raise BadValue('negative')\n"
        "    if x == '{':\n        return json.loads(x)\n    return open(x).read()\n"
    )
    assert verdict(code, test) == "passed"
    fake = code.replace("class BadValue(ValueError)", "class ValueError(Exception)").replace(
        "BadValue(", "ValueError("
    )
    assert verdict(fake, test) != "passed"  # named like the builtin, it is not the builtin


def test_control_containers_generators_and_returned_functions_pass():
    test = unit(
        "def test_a(self):\n    from collections import Counter, defaultdict\n"
        "    c, d, gen, f = task_func(3)\n"
        "    self.assertIsInstance(c, Counter)\n    self.assertEqual(c, {'a': 3})\n"
        "    self.assertIsInstance(d, defaultdict)\n    self.assertEqual(d['new'], 0)\n"
        "    self.assertEqual(list(gen), [0, 1, 2])\n    self.assertEqual(f(4), 8)\n"
    )
    code = (
        "from collections import Counter, defaultdict\n"
        "def task_func(n):\n    d = defaultdict(lambda: 0)\n"
        "    return Counter('a' * n), d, (i for i in range(n)), lambda y: 2 * y\n"
    )
    assert verdict(code, test) == "passed"


def test_control_the_tests_mocks_and_patches_work_with_the_candidate():
    # BigCodeBench's shape: patch a library call, hand the candidate a mock, check its calls
    test = "from unittest.mock import patch, MagicMock\n" + unit(
        "@patch('os.listdir', return_value=['b', 'a'])\n"
        "def test_listdir(self, mock_listdir):\n"
        "    self.assertEqual(task_func('/d'), ['a', 'b'])\n"
        "    mock_listdir.assert_called_once_with('/d')\n"
        "def test_returns_the_mock(self):\n    m = MagicMock()\n"
        "    self.assertIs(task_func(m), m.result)\n"
    )
    code = (
        "import os\ndef task_func(x):\n    if isinstance(x, str):\n"
        "        return sorted(os.listdir(x))\n    return x.result\n"
    )
    assert verdict(code, test) == "passed"


def test_control_a_function_the_tests_hand_over_can_be_inspected():
    # BigCodeBench/566-571: the candidate reads the signature of a function the test defines
    test = unit(
        "def test_a(self):\n    def f(a, b=1):\n        pass\n"
        "    self.assertEqual(task_func(f), (['a', 'b'], (1,)))\n"
        "    self.assertEqual(task_func(lambda x, y=2: x), (['x', 'y'], (2,)))\n"
    )
    code = (
        "import inspect\ndef task_func(f):\n    spec = inspect.getfullargspec(f)\n"
        "    return spec.args, spec.defaults\n"
    )
    assert verdict(code, test) == "passed"


def test_control_a_pandas_solution_passes():
    pytest.importorskip("pandas")
    test = "import pandas as pd\n" + unit(
        "def test_a(self):\n    df = task_func([1, 2, 3])\n"
        "    pd.testing.assert_frame_equal(df, pd.DataFrame({'x': [1, 2, 3], 'y': [2, 4, 6]}))\n"
        "def test_b(self):\n    self.assertEqual(task_func([])['y'].tolist(), [])\n"
    )
    code = (
        "import pandas as pd\ndef task_func(xs):\n    df = pd.DataFrame({'x': xs})\n"
        "    df['y'] = df['x'] * 2\n    return df.astype('int64') if xs else df\n"
    )
    assert verdict(code, test) == "passed"


def test_control_a_connection_the_tests_made_is_usable_by_the_candidate():
    # BigCodeBench/1131: the test passes its own sqlite3 cursor (the same thread must use it)
    test = "import sqlite3\n" + unit(
        "def test_a(self):\n    conn = sqlite3.connect(':memory:')\n"
        "    cur = conn.cursor()\n    cur.execute('CREATE TABLE t (v INTEGER)')\n"
        "    cur.execute('INSERT INTO t VALUES (21)')\n"
        "    self.assertEqual(task_func(cur), 42)\n"
    )
    code = (
        "def task_func(cur):\n    cur.execute('SELECT v FROM t')\n"
        "    return 2 * cur.fetchone()[0]\n"
    )
    assert verdict(code, test) == "passed"
