"""Hostile submissions, one property per test. After each: the verdict is a failure (or the
attack had no effect), no process is left, no file is left, and the judge still answers."""

import os
import socket
import time
import uuid

import pytest

from recode_lib.sandbox import SandboxConfig, execute
from recode_lib.sandbox.pool import get_pool

CFG = SandboxConfig(time_limit_s=0.5, memory_mb=256, max_output_bytes=1 << 20, workers=1)
TOKEN = uuid.uuid4().hex[:12]
MARKERS = [
    f"/tmp/pwn-{TOKEN}",
    f"/var/tmp/pwn-{TOKEN}",
    f"/dev/shm/pwn-{TOKEN}",
    os.path.join(os.path.dirname(__file__), f"pwn-{TOKEN}"),
]


def _workers():
    return get_pool(CFG).workers()


def _children(pid):
    """The worker's children but the init of its pid namespace (userns mode: lives as long
    as the worker, pid 1 in its namespace)."""
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as fh:
            out += fh.read().split()
    return [c for c in out if not _pid_namespace_init(c)]


def _pid_namespace_init(pid):
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("NSpid:"):
                    return len(line.split()) > 2 and line.split()[-1] == "1"
    except OSError:
        pass
    return False


def _uid_processes(uid, span=1, grace_s=2.0):
    """Live processes of the sandbox uid range. A killed process may take a moment to be torn
    down on a loaded machine (and a zombie runs nothing): it must be gone within grace_s."""
    deadline = time.monotonic() + grace_s
    while True:
        found = []
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    if uid <= os.stat(f"/proc/{p}").st_uid < uid + span:
                        state = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[0]
                        if state not in ("Z", "X"):
                            found.append(p)
                except (OSError, IndexError):
                    pass
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def contained(code, tests, **rec):
    """Execute, then check the three invariants; returns the result."""
    res = execute({"id": "h", "code": code, "tests": tests, **rec}, config=CFG)
    for w in _workers():
        assert w.alive(), "the worker died"
        assert _children(w.info["pid"]) == [], "a process outlived the submission"
        if w.info.get("uid"):
            assert _uid_processes(w.info["uid"], w.info.get("uid_span", 1)) == [], (
                "a sandbox-uid process is left"
            )
    for m in MARKERS:
        assert not os.path.exists(m), f"the submission wrote {m}"
    sanity = execute({"id": "ok", "code": "def f(x):\n    return x\n", "tests": CALL1}, config=CFG)
    assert sanity["status"] == "passed", "the judge no longer answers"
    return res


CALL1 = {"kind": "call", "fn_name": "f", "cases": [{"args": [3], "expected": 3}]}
SECRET = {"kind": "call", "fn_name": "f", "cases": [{"args": [1], "expected": f"secret-{TOKEN}"}]}
SCRIPT = {"kind": "script", "script": "assert f(3) == 4\n"}


def test_infinite_loop_times_out():
    assert contained("def f(x):\n    while True:\n        pass\n", CALL1)["status"] == "time_limit"


def test_sleep_ignoring_sigterm_and_sigalrm_times_out():
    code = (
        "import signal, time\nfor s in (signal.SIGTERM, signal.SIGALRM, signal.SIGINT):\n"
        "    signal.signal(s, signal.SIG_IGN)\n"
        "def f(x):\n    time.sleep(60)\n    return x\n"
    )
    assert contained(code, CALL1)["status"] == "time_limit"


def test_fork_bomb_is_contained():
    code = (
        "import os\ndef f(x):\n    while True:\n        try:\n            os.fork()\n"
        "        except OSError:\n            pass\n"
    )
    assert contained(code, CALL1)["status"] in ("time_limit", "runtime_error")


def test_memory_bomb_is_memory_limit():
    code = "def f(x):\n    a = []\n    while True:\n        a.append(' ' * 10 ** 6)\n"
    assert contained(code, CALL1, time_limit_s=10)["status"] == "memory_limit"


def test_gigabytes_of_output_are_cut():
    code = "import sys\nwhile True:\n    sys.stdout.write('x' * 10 ** 6)\n"
    tests = {"kind": "stdio", "cases": [{"input": "", "output": "x"}]}
    assert contained(code, tests)["status"] == "runtime_error"
    loud = "def f(x):\n    while True:\n        print('y' * 10 ** 6)\n"
    assert contained(loud, CALL1)["status"] == "time_limit"


@pytest.mark.parametrize("exit_call", ["import sys; sys.exit(0)", "import os; os._exit(0)"])
def test_exit_before_tests_fails(exit_call):
    code = f"def f(x):\n    return x\n{exit_call}\n"
    assert contained(code, SCRIPT)["status"] == "runtime_error"
    assert contained(code, CALL1)["status"] == "runtime_error"
    inside = f"def f(x):\n    {exit_call}\n"
    assert contained(inside, SCRIPT)["status"] == "runtime_error"


def test_always_equal_object_is_wrong_answer():
    code = (
        "class Eq:\n    def __eq__(self, o):\n        return True\n"
        "    __ne__ = lambda s, o: False\n"
        "def f(x):\n    return Eq()\n"
    )
    assert contained(code, SECRET)["status"] == "wrong_answer"
    assert contained(code, SCRIPT)["status"] == "wrong_answer"
    sub = (
        "class S(str):\n    def __eq__(self, o):\n        return True\n"
        "def f(x):\n    return S('no')\n"
    )
    assert contained(sub, SECRET)["status"] == "wrong_answer"


def test_monkeypatching_builtins_and_helpers_does_not_help():
    code = (
        "import builtins, sys\nbuiltins.all = lambda *a: True\nbuiltins.len = lambda *a: 3\n"
        "for name in ('codec', 'harness'):\n    m = sys.modules.get(name)\n"
        "    if m:\n        m.encode = lambda *a: 'secret'\n        m._judge_eq = lambda *a: True\n"
        "def f(x):\n    return [0]\n"
    )
    script = {
        "kind": "script",
        "script": "assert all(v == 1 for v in f(3))\nassert len(f(3)) == 3\n",
    }
    # (in its own process the patched len also breaks the submission's side of the calls)
    assert contained(code, script)["status"] in ("wrong_answer", "runtime_error")
    inline = dict(script, separate=False)
    assert contained(code, inline)["status"] == "wrong_answer"
    assert contained(code, SECRET)["status"] == "wrong_answer"


def test_fake_success_messages_do_not_pass():
    code = (
        "import os\ndef f(x):\n    print('passed: all tests OK')\n"
        "    for fd in range(0, 64):\n        try:\n"
        '            os.write(fd, b\'S\\nT {"i": 0, "st": "ok", "out": "ok"}\\nD {}\\n\')\n'
        "        except OSError:\n            pass\n    return None\n"
    )
    assert contained(code, SECRET)["status"] == "wrong_answer"
    assert contained(code, SCRIPT)["status"] != "passed"


def test_test_cases_cannot_be_read_from_memory():
    code = (
        "import gc\ndef f(x):\n    for o in gc.get_objects():\n"
        "        for v in (o.values() if isinstance(o, dict)\n"
        "                  else o if isinstance(o, list) else []):\n"
        "            if isinstance(v, str) and v.startswith('secret-'):\n                return v\n"
        "    return 'not found'\n"
    )
    assert contained(code, SECRET)["status"] == "wrong_answer"


def test_test_cases_cannot_be_read_from_disk(tmp_path):
    paths = [
        os.path.join(os.path.dirname(__file__), f"secret-{TOKEN}.txt"),
        str(tmp_path / "cases.jsonl"),
        "/work/shared/data/HumanEvalPlus.jsonl.gz",
    ]
    for p in paths[:2]:
        with open(p, "w") as fh:
            fh.write(f"secret-{TOKEN}")
    code = (
        f"def f(x):\n    for p in {paths!r}:\n        try:\n"
        "            return open(p).read()[:19]\n        except OSError:\n"
        "            pass\n    return 'not found'\n"
    )
    try:
        res = contained(code, SECRET)
    finally:
        os.unlink(paths[0])
    if _workers()[0].mode != "plain":
        assert res["status"] == "wrong_answer"


def test_killing_the_parent_and_others_fails_safely():
    code = (
        "import os, signal\ndef f(x):\n"
        "    for p in [os.getppid()] + [int(p) for p in os.listdir('/proc') if p.isdigit()]:\n"
        "        if p not in (0, os.getpid()):  # getppid() is 0 in a pid namespace (userns)\n"
        "            try:\n                os.kill(p, signal.SIGKILL)\n"
        "            except OSError:\n                pass\n    return x\n"
    )
    res = contained(code, CALL1)
    if _workers()[0].mode in ("root", "userns"):
        assert res["status"] == "passed"  # it could not kill anything; its answer is right


def test_writing_outside_the_working_directory_leaves_nothing():
    code = (
        f"def f(x):\n    for p in {MARKERS!r}:\n        try:\n            open(p, 'w').write('x')\n"
        "        except OSError:\n            pass\n    open('here.txt', 'w').write('ok')\n"
        "    return x\n"
    )
    assert contained(code, CALL1)["status"] == "passed"


def test_network_connections_fail():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    code = (
        "import socket\ndef f(x):\n    for host in ('127.0.0.1', '1.1.1.1'):\n        try:\n"
        f"            socket.create_connection((host, {port}), timeout=0.2)\n"
        "            return 'connected'\n        except OSError:\n            pass\n    return x\n"
    )
    try:
        assert contained(code, CALL1)["status"] == "passed"
    finally:
        srv.close()


def test_daemon_does_not_outlive_the_submission():
    code = (
        "import os, time\ndef f(x):\n    if os.fork() == 0:\n        os.setsid()\n"
        "        if os.fork() == 0:\n            time.sleep(30)\n        os._exit(0)\n"
        "    return x\n"
    )
    assert contained(code, CALL1)["status"] == "passed"


def test_stdlib_dict_subclasses_compare_as_dicts_but_a_fake_one_does_not_pass():
    counter = "from collections import Counter\ndef f(x):\n    return Counter('aab')\n"
    script = {"kind": "script", "script": "assert f(0) == {'a': 2, 'b': 1}\n"}
    assert contained(counter, script)["status"] == "passed"  # MBPP /40, /88 do this
    fake = (
        "class D(dict):\n    __module__ = 'collections'\n"
        "    def __eq__(self, o):\n        return True\n"
        "def f(x):\n    return D(z=1)\n"
    )
    assert contained(fake, script)["status"] == "wrong_answer"
