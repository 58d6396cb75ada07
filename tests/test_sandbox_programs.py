"""Correct, ordinary programs get the right verdict whatever style they are written in: threads,
exit handlers, a closed stdout, pickling, multiprocessing, dataclasses, namedtuples, many big
inputs. One program style per test."""

import pytest

from recode_lib.sandbox import SandboxConfig, execute

CFG = SandboxConfig(time_limit_s=10.0, memory_mb=512, workers=1)


def stdio(code, cases=(("3\n", "6"), ("5\n", "10")), **rec):
    return execute(
        {
            "id": "p",
            "code": code,
            **rec,
            "tests": {"kind": "stdio", "cases": [{"input": i, "output": o} for i, o in cases]},
        },
        config=CFG,
    )["status"]


def call(code, cases=(([3], 6), ([5], 10)), **rec):
    return execute(
        {
            "id": "p",
            "code": code,
            **rec,
            "tests": {
                "kind": "call",
                "fn_name": "f",
                "cases": [{"args": a, "expected": e} for a, e in cases],
            },
        },
        config=CFG,
    )["status"]


def test_stdio_main_in_a_thread_for_deep_recursion():
    code = (
        "import sys, threading\nsys.setrecursionlimit(100000)\nthreading.stack_size(1 << 26)\n"
        "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\n"
        "def main():\n    import time\n    time.sleep(0.2)\n    n = int(input())\n"
        "    print(2 * n + depth(20000) - 20000)\n"
        "threading.Thread(target=main).start()\n"
    )
    assert stdio(code) == "passed"


def test_stdio_output_flushed_by_an_atexit_handler():
    code = (
        "import atexit, sys\nbuf = []\natexit.register(lambda: sys.stdout.write(''.join(buf)))\n"
        "buf.append(str(2 * int(input())) + '\\n')\n"
    )
    assert stdio(code) == "passed"


def test_stdio_print_then_close_stdout():
    assert stdio("import sys\nprint(2 * int(input()))\nsys.stdout.close()\n") == "passed"


def test_stdio_exit_inside_the_program_after_printing():
    assert stdio("import sys\nprint(2 * int(input()))\nsys.exit(0)\n") == "passed"


def test_pickling_an_own_class():
    code = (
        "import pickle\nclass Box:\n    def __init__(self, v):\n        self.v = v\n"
        "def f(x):\n    return pickle.loads(pickle.dumps(Box(2 * x))).v\n"
    )
    assert call(code) == "passed"
    prog = (
        "import pickle\nclass Box:\n    def __init__(self, v):\n        self.v = v\n"
        "print(pickle.loads(pickle.dumps(Box(2 * int(input())))).v)\n"
    )
    assert stdio(prog) == "passed"


def test_multiprocessing_pool():
    code = (
        "from multiprocessing import Pool\ndef double(x):\n    return 2 * x\n"
        "def f(x):\n    with Pool(2) as p:\n        return p.map(double, [x])[0]\n"
    )
    assert call(code) == "passed"
    prog = (
        "from multiprocessing import Pool\ndef double(x):\n    return 2 * x\n"
        "if __name__ == '__main__':\n    with Pool(2) as p:\n"
        "        print(p.map(double, [int(input())])[0])\n"
    )
    assert stdio(prog) == "passed"


def test_dataclass_under_postponed_annotations():
    code = (
        "from __future__ import annotations\nfrom dataclasses import dataclass\nimport typing\n"
        "@dataclass\nclass P:\n    x: int\n    tag: typing.ClassVar[str] = 'p'\n"
        "def f(x):\n    return P(2 * x).x\n"
    )
    assert call(code) == "passed"
    assert stdio(code + "print(f(int(input())))\n") == "passed"


def test_namedtuple_where_a_tuple_is_expected():
    code = (
        "from collections import namedtuple\nPair = namedtuple('Pair', 'a b')\n"
        "def f(x):\n    return Pair(x, 2 * x)\n"
    )
    assert call(code, [([3], {"__t": "tuple", "v": [3, 6]})]) == "passed"


def test_many_big_inputs_do_not_add_up_in_the_sandboxed_process():
    big = 40 << 20  # six 40 MB inputs: each fits the limit, all together would not
    cases = [(chr(97 + i) * big, str(big)) for i in range(6)]
    code = "import sys\nprint(len(sys.stdin.buffer.read()))\n"
    assert stdio(code, cases, memory_mb=200) == "passed"


@pytest.mark.parametrize("mode", ["plain"])
def test_the_unprivileged_fallback_runs_the_same_programs(mode):
    cfg = CFG.replace(isolation=mode)
    code = (
        "import pickle, sys\nclass Box:\n    def __init__(self, v):\n        self.v = v\n"
        "print(pickle.loads(pickle.dumps(Box(2 * int(input())))).v)\nsys.stdout.close()\n"
    )
    res = execute(
        {
            "id": "p",
            "code": code,
            "tests": {"kind": "stdio", "cases": [{"input": "3\n", "output": "6"}]},
        },
        config=cfg,
    )
    assert res["status"] == "passed"
