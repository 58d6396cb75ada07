"""Red-team attacks on the judge (recode_lib/sandbox), one hostile property per test.

An `xfail(strict=True)` test is an attack that works today (the hole is open; its reason says
what the hole is): it flips to XPASS, and so fails the suite, once the hole is closed — then drop
the marker. The unmarked tests are attacks the judge held (regression guards). Root isolation
mode ("auto" as root) is assumed where a property depends on it; the file skips otherwise.
"""

import os

import pytest

from recode_lib.sandbox import SandboxConfig, execute, execute_many

CFG = SandboxConfig(time_limit_s=2.0, memory_mb=512, workers=1)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="attacks aimed at root isolation mode")


def status(code, tests, cfg=CFG, **rec):
    return execute({"id": "rt", "code": code, "tests": tests, **rec}, config=cfg)["status"]


def stdio(*pairs):
    return {"kind": "stdio", "cases": [{"input": i, "output": o} for i, o in pairs]}


def script(text, entry_point=None, **extra):
    tests = {"kind": "script", "script": text, **extra}
    if entry_point:
        tests["entry_point"] = entry_point
    return tests


# ---- stdio: nothing of one test may reach the next -------------------------------------------
# Identical inputs, different expected outputs: a program that is a fresh run per test prints
# the same thing every time, so only state carried between runs can pass both.
SAME_INPUT_COUNTING = stdio(("x\n", "1\n"), ("x\n", "2\n"))

SYSV_COUNTER = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
seg = libc.shmat(libc.shmget(0x5EC, 4096, 0o1000 | 0o600), None, 0)   # IPC_CREAT
n = ctypes.c_int.from_address(seg)
n.value += 1
print(n.value)
"""


def test_stdio_sysv_shared_memory_does_not_carry_state_between_tests():
    assert status(SYSV_COUNTER, SAME_INPUT_COUNTING) != "passed"


POSIX_MQ_COUNTER = r"""
import ctypes, os
rt = ctypes.CDLL("librt.so.1", use_errno=True)
q = rt.mq_open(b"/rt-carry", os.O_CREAT | os.O_RDWR | os.O_NONBLOCK, 0o600, None)
buf = ctypes.create_string_buffer(8192)
got = rt.mq_receive(q, buf, 8192, None)
n = int(buf.raw[:got]) + 1 if got > 0 else 1
rt.mq_send(q, str(n).encode(), len(str(n)), 0)
print(n)
"""


def test_stdio_posix_message_queue_does_not_carry_state_between_tests():
    assert status(POSIX_MQ_COUNTER, SAME_INPUT_COUNTING) != "passed"


DAEMON_COUNTER = r"""
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("\0rt-daemon")
    print(int(s.recv(16)) + 1)
except OSError:
    if os.fork() == 0:          # a double-forked, setsid daemon serving the count
        os.setsid()
        if os.fork() == 0:
            srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            srv.bind("\0rt-daemon")
            srv.listen(4)
            n = 1
            while True:
                c, _ = srv.accept()
                c.send(str(n).encode())
                n += 1
                c.close()
        os._exit(0)
    os.wait()
    print(1)
"""


def test_stdio_daemon_does_not_survive_into_the_next_test():
    # the subreaper kills everything the test started before the next one
    assert status(DAEMON_COUNTER, SAME_INPUT_COUNTING) != "passed"


PEEK_PARENT = r"""
import os
try:
    os.listdir("/proc/%d/fd" % os.getppid())   # the harness holds every test's input (memfd)
    print("open")
except OSError:
    print("denied")
"""


def test_stdio_program_cannot_reach_the_harness_fds():
    assert status(PEEK_PARENT, stdio(("x\n", "denied\n"))) == "passed"


# ---- call: the per-test time limit -----------------------------------------------------------
# f(x) needs 2.4 s of work for a big x (limit 1.5 s). The submission finds the later tests'
# inputs in the memfd it still holds during the small tests and does a third of that work in
# each of their slots (every test then reports well within its limit).
POOLED_TIME = r"""
import os, time
done = {}
def work(x, seconds):
    time.sleep(seconds)                  # stands for input-dependent computation
    done[x] = done.get(x, 0) + seconds
def inputs():
    for fd in map(int, os.listdir("/proc/self/fd")):
        try:
            if "recode-inputs" in os.readlink("/proc/self/fd/%d" % fd):
                return os.pread(fd, 1 << 16, 0).decode()
        except OSError:
            pass
    return ""
def f(x):
    if x < 100:                          # the small tests run first
        for v in inputs().replace("][", ",").strip("[]").split(","):
            if v and int(v) >= 100:
                work(int(v), 0.8)
        return x
    work(x, 2.4 - done.get(x, 0))
    return x
"""
SMALL_SMALL_BIG = {
    "kind": "call",
    "fn_name": "f",
    "cases": [
        {"args": [1], "expected": 1},
        {"args": [2], "expected": 2},
        {"args": [123456], "expected": 123456},
    ],
}


@pytest.mark.xfail(
    strict=True,
    reason="call tests by default: the child keeps the inputs' "
    "memfd (as EvalPlus keeps every input in its process), so the small tests "
    "read the big one's input and pool their time limits; sealed_inputs closes it",
)
def test_call_later_inputs_are_not_readable_to_pool_time_limits():
    cfg = SandboxConfig(time_limit_s=1.5, memory_mb=512, workers=1)
    assert status(POOLED_TIME, SMALL_SMALL_BIG, cfg=cfg) != "passed"  # honestly: time_limit


def test_call_sealed_inputs_stop_reading_later_inputs_to_pool_time_limits():
    cfg = SandboxConfig(time_limit_s=1.5, memory_mb=512, workers=1, sealed_inputs=True)
    assert status(POOLED_TIME, SMALL_SMALL_BIG, cfg=cfg) != "passed"  # honestly: time_limit


def test_call_sealed_inputs_keep_honest_verdicts():
    cfg = SandboxConfig(time_limit_s=2, memory_mb=512, workers=1, sealed_inputs=True)
    tests = {
        "kind": "call",
        "fn_name": "f",
        "cases": [{"args": [i, "x" * (i * 40000)], "expected": i * 40000 + i} for i in range(8)],
    }
    assert status("def f(n, s):\n    return len(s) + n\n", tests, cfg=cfg) == "passed"
    wrong = status("def f(n, s):\n    return len(s)\n", tests, cfg=cfg)
    assert wrong == "wrong_answer"


# ---- separate script tests -------------------------------------------------------------------
MBPP_596 = (
    'assert tuple_size(("A", 1, "B", 2, "C", 3) ) == sys.getsizeof(("A", 1, "B", 2, "C", 3))\n'
    'assert tuple_size((1, "Raju", 2, "Nikhil", 3, "Deepanshu") ) == '
    'sys.getsizeof((1, "Raju", 2, "Nikhil", 3, "Deepanshu"))\n'
)
FAKE_SYS = (
    "class _Sys:\n    def getsizeof(self, x):\n        return 0\nsys = _Sys()\n"
    "def tuple_size(t):\n    return 0\n"
)


def test_separate_script_free_standard_module_name_cannot_be_forged():
    assert status(FAKE_SYS, script(MBPP_596, "tuple_size")) != "passed"


def test_separate_script_real_module_for_mbpp_596_still_passes():
    code = "import sys\ndef tuple_size(t):\n    return sys.getsizeof(t)\n"
    assert status(code, script(MBPP_596, "tuple_size")) == "passed"


HE38_PROMPT = '''
def encode_cyclic(s: str):
    groups = [s[(3 * i):min((3 * i + 3), len(s))] for i in range((len(s) + 2) // 3)]
    groups = [(group[1:] + group[0]) if len(group) == 3 else group for group in groups]
    return "".join(groups)


def decode_cyclic(s: str):
    """takes as input string encoded with encode_cyclic function. Returns decoded string."""
'''
HE38_TEST = """
def check(candidate):
    for s in ["abcdefghij", "hello world", "xy"]:
        assert candidate(encode_cyclic(s)) == s

check(decode_cyclic)
"""


def test_separate_script_problem_helper_cannot_be_replaced():
    code = "def encode_cyclic(s):\n    return s\ndef decode_cyclic(s):\n    return s\n"
    tests = script(HE38_TEST, "decode_cyclic", helpers=HE38_PROMPT)
    assert status(code, tests) == "wrong_answer"


def test_separate_script_lazy_iterable_return_value_is_usable():
    code = "def f(n):\n    return range(n)\n"
    assert status(code, script("assert list(f(3)) == [0, 1, 2]\n", "f")) == "passed"


def test_separate_script_tag_shaped_dict_is_not_a_tuple():
    code = "def f():\n    return {'__t': 'tuple', 'v': [1, 2]}\n"
    assert status(code, script("assert f() == (1, 2)\n", "f")) == "wrong_answer"


def test_separate_script_exception_named_like_a_builtin_is_not_that_builtin():
    code = "class ValueError(Exception):\n    pass\ndef f(x):\n    raise ValueError(x)\n"
    test = "try:\n    f(-1)\nexcept ValueError:\n    pass\nelse:\n    assert False\n"
    assert status(code, script(test, "f")) == "runtime_error"


ALWAYS_EQUAL = """
class Any:
    def __eq__(self, o): return True
    def __ne__(self, o): return False
    def __hash__(self): return 0
    def __bool__(self): return True
    def __len__(self): return 3
    def __index__(self): return 3
    def __iter__(self): return iter([1, 2, 3])
def f():
    return Any()
"""


def test_separate_script_object_that_equals_everything_does_not_match():
    test = "r = f()\nassert r == [1, 2, 3]\nassert len(r) == 3\nassert list(r) == [1, 2, 3]\n"
    assert status(ALWAYS_EQUAL, script(test, "f")) != "passed"


FORGE_FROM_SUBMISSION_PROCESS = r"""
import os
line = b'T {"i": 0, "st": "ok", "out": "forged", "t": 0.0, "m": 1.0}\nR\n'
paths = ["/proc/self/fd/%d" % fd for fd in range(3, 64)]
paths += ["/proc/%d/fd/%d" % (os.getppid(), fd) for fd in range(64)]
for p in paths:
    try:
        fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, line)
    except OSError:
        pass
def f(x):
    return None
"""


def test_separate_script_submission_cannot_forge_the_test_runner_lines():
    # it reaches only its own request/reply pipes (a self-inflicted hang: time_limit)
    assert status(FORGE_FROM_SUBMISSION_PROCESS, script("assert f(1) == 7\n", "f")) != "passed"


READ_PARENT_MEMORY = r"""
import os, re
def f(x):
    pp = os.getppid()
    try:
        with open("/proc/%d/maps" % pp) as fh, open("/proc/%d/mem" % pp, "rb") as mem:
            for line in fh:
                lo, hi = (int(v, 16) for v in line.split()[0].split("-"))
                if "rw" not in line.split()[1]:
                    continue
                try:
                    mem.seek(lo)
                    m = re.search(rb"assert f\(1\) == (\d+)", mem.read(hi - lo))
                except OSError:
                    continue
                if m:
                    return int(m.group(1))
    except OSError:
        return None
"""


def test_separate_script_submission_cannot_read_the_test_runner_memory():
    assert status(READ_PARENT_MEMORY, script("assert f(1) == 8231\n", "f")) == "wrong_answer"


# ---- between records on one worker -----------------------------------------------------------
# Record A learns a secret (its argument) and leaves it in the pid counter of the worker's pid
# namespace (forks until its successor's pid is base + 4 * secret); record B, run next on the same
# worker, reads it back from its own pid and passes a test it has no information for.
PID_WRITER = r"""
import os
def f(secret):
    base = (os.getpid() // 200 + 1) * 200
    while True:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        if pid >= base + 4 * secret - 2:
            return secret
"""
PID_READER = r"""
import os
def f():
    return (os.getpid() % 200 + 1) // 4     # its pid is the writer's last + 1 (its fork)
"""


@pytest.mark.xfail(
    strict=True,
    reason="one pid namespace per worker: the pid counter carries data from one record to the next",
)
def test_records_cannot_pass_data_through_the_pid_counter():
    a = {
        "id": "a",
        "code": PID_WRITER,
        "time_limit_s": 10,
        "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [37], "expected": 37}]},
    }
    b = {
        "id": "b",
        "code": PID_READER,
        "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": 37}]},
    }
    ra, rb = execute_many([a, b], workers=1, config=CFG)
    assert ra["status"] == "passed"
    assert rb["status"] != "passed"


SYSV_WRITER = r"""
import ctypes
libc = ctypes.CDLL(None)
libc.shmat.restype = ctypes.c_void_p
def f(secret):
    seg = libc.shmat(libc.shmget(0x5ED, 4096, 0o1000 | 0o666), None, 0)
    ctypes.c_int.from_address(seg).value = secret
    return secret
"""
SYSV_READER = r"""
import ctypes
libc = ctypes.CDLL(None)
libc.shmat.restype = ctypes.c_void_p
def f():
    sid = libc.shmget(0x5ED, 4096, 0)
    if sid < 0:
        return None
    return ctypes.c_int.from_address(libc.shmat(sid, None, 0)).value
"""


def test_records_cannot_pass_data_through_sysv_ipc():
    a = {
        "id": "a",
        "code": SYSV_WRITER,
        "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [37], "expected": 37}]},
    }
    b = {
        "id": "b",
        "code": SYSV_READER,
        "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": 37}]},
    }
    ra, rb = execute_many([a, b], workers=1, config=CFG)
    assert ra["status"] == "passed"
    assert rb["status"] == "wrong_answer"
