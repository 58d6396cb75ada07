"""Red-team attacks on the judge (recode_lib/sandbox), second round: one hostile property per
test, each through the real entry points (execute, execute_many, the GRPO reward's
SandboxRunner), except the judge-memory test, which measures verdict.stdio_equal itself.

An `xfail(strict=True)` test is an attack that works today (its reason says what the hole is;
a run-time xfail: one that works where the machine lacks what closes it);
the unmarked tests are attacks the judge holds (each failed before its fix). They hold in every
isolation mode; the userns test runs its judge as a normal user (conftest's normal_user).
"""

import os

import pytest

from recode_lib.core.prompts import format_response
from recode_lib.data.schema import Problem
from recode_lib.rewards import get_reward
from recode_lib.rewards.execution import SandboxRunner
from recode_lib.sandbox import SandboxConfig, execute, record_memory_bounded

CFG = SandboxConfig(time_limit_s=3.0, memory_mb=512, workers=1)


def run(code, tests, cfg=CFG, **rec):
    return execute({"id": "rt2", "code": code, "tests": tests, **rec}, config=cfg)


def call(fn, *pairs):
    return {
        "kind": "call",
        "fn_name": fn,
        "cases": [{"args": list(a), "expected": e} for a, e in pairs],
    }


# ---- forging a pass with the harness's own lines ---------------------------------------------
# While the submission's module code runs (before the harness reports S) the child's pipe to
# the worker is open in its process; an X line there ends the job with one status for every
# test. "ok" must never be such a status.
X_OK_AT_LOAD = r"""
import os
for fd in range(3, 256):
    try:
        os.write(fd, b'X {"st": "ok", "e": null}\n')
    except OSError:
        pass
def add(a, b):
    return 0
"""
ADD = call("add", ((1, 2), 3), ((5, 5), 10))


def test_call_load_time_x_line_with_status_ok_does_not_pass_every_test():
    res = run(X_OK_AT_LOAD, ADD)
    assert res["status"] != "passed" and res["passed"] == 0
    assert res["strictness"]["1"] == 0


FORGE_IN_AN_ASSIGNMENT = r"""import os
def _w(fd):
    try:
        os.write(fd, b'X {"st": "ok"}\n')
    except OSError:
        pass
_ = [_w(fd) for fd in range(3, 256)]
def add(a, b):
    return 0"""


def test_reward_of_a_load_time_x_ok_forgery_is_zero():
    # the GRPO path: assembly keeps the module-level assignment that writes the line
    forged = format_response("Add them.", FORGE_IN_AN_ASSIGNMENT)
    fn = get_reward("outcome", runner=SandboxRunner(workers=1, sandbox_config=CFG))
    p = Problem(id="t/add", source="t", prompt="Add them.", tests=ADD)
    assert fn(["p"], [forged], problem=[p]) == [0.0]


def test_script_load_time_x_ok_forgery_does_not_pass_in_process_tests():
    # unittest-style tests are forgeable in principle (trust in_process), but not this simply
    script = {
        "kind": "script",
        "separate": False,
        "entry_point": "add",
        "script": "assert add(1, 2) == 3\n",
    }
    assert run(X_OK_AT_LOAD, script)["status"] != "passed"


# ---- memory the address-space limit does not count -------------------------------------------
# memory_mb is RLIMIT_AS. Kernel objects a process fills without mapping them are outside it:
# each attack stores 400 MB under a 256 MB limit and returns True if it could. (Such memory
# belongs to no process, so the OOM killer would pick an innocent one, the judge included.)
MEM = SandboxConfig(time_limit_s=20.0, memory_mb=256, workers=1)
STORE_400MB = call("stored", ((400,), True))

MEMFD_STORE = r"""
import os
def stored(mb):
    fds, chunk, total = [], b"x" * (1 << 20), 0
    while total < mb:
        fd = os.memfd_create("m")          # each up to RLIMIT_FSIZE, 256 of them
        for _ in range(48):
            os.write(fd, chunk)
        fds.append(fd)
        total += 48
    return True
"""


def test_call_memfds_cannot_hold_memory_beyond_the_limit():
    assert run(MEMFD_STORE, STORE_400MB, cfg=MEM)["status"] != "passed"


SYSV_SHM_STORE = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
def stored(mb):
    total = 0
    while total < mb:                      # attach, fill, detach: the segment stays
        sid = libc.shmget(0, 48 << 20, 0o1000 | 0o600)
        if sid < 0:
            return False
        addr = libc.shmat(sid, None, 0)
        ctypes.memset(addr, 1, 48 << 20)
        libc.shmdt(ctypes.c_void_p(addr))
        total += 48
    return True
"""


def test_call_sysv_shared_memory_cannot_hold_memory_beyond_the_limit():
    assert run(SYSV_SHM_STORE, STORE_400MB, cfg=MEM)["status"] != "passed"


SYSV_MSG_STORE = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def stored(mb):
    buf = ctypes.create_string_buffer(8 + 8000)
    ctypes.c_long.from_buffer(buf).value = 1
    total = 0
    while total < mb << 20:                # 16 KB per queue, 32000 queues
        q = libc.msgget(0, 0o1000 | 0o600)
        if q < 0:
            return False
        while libc.msgsnd(q, buf, 8000, 0o4000) == 0:
            total += 8000
    return True
"""


def test_call_sysv_message_queues_cannot_hold_memory_beyond_the_limit():
    assert run(SYSV_MSG_STORE, STORE_400MB, cfg=MEM)["status"] != "passed"


SYSV_SEM_STORE = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def stored(mb):
    sets = [libc.semget(0, 32000, 0o1000 | 0o600) for _ in range(mb // 2)]   # 2 MB of slab each
    return all(s >= 0 for s in sets)
"""


def test_call_sysv_semaphore_sets_cannot_hold_memory_beyond_the_limit():
    assert run(SYSV_SEM_STORE, STORE_400MB, cfg=MEM)["status"] != "passed"


SOCKET_BUFFER_RAISED = r"""
import socket
def holds(mb):
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)   # wmem_max: 8 MB a socket
    b.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    a.setblocking(False)
    n = 0
    try:
        while n < mb << 20:
            n += a.send(b"x" * 65536)
    except BlockingIOError:
        pass
    return n >= mb << 20
"""


def test_call_socket_buffers_cannot_be_raised_to_hold_memory():
    assert run(SOCKET_BUFFER_RAISED, call("holds", ((4,), True)), cfg=MEM)["status"] != "passed"


IO_URING = r"""
import ctypes
def ring():
    libc = ctypes.CDLL(None, use_errno=True)
    params = ctypes.create_string_buffer(120)
    return libc.syscall(425, 4, params) >= 0   # io_uring_setup: its ops bypass the filter
"""


def test_call_io_uring_cannot_be_set_up():
    assert run(IO_URING, call("ring", ((), True)))["status"] != "passed"


FORKED_MEMORY = r"""
import os, time
def stored(mb):
    r, w = os.pipe()
    kids = []
    for _ in range(3):                      # RLIMIT_AS is per process
        pid = os.fork()
        if pid == 0:
            block = b"x" * (150 << 20)
            os.write(w, b"1")
            time.sleep(30)                  # killed with the record
        kids.append(pid)
    got = b""
    while len(got) < 3:
        got += os.read(r, 3)
    time.sleep(0.5)
    held = all(os.waitpid(k, os.WNOHANG) == (0, 0) for k in kids)   # all three at once
    return held and 3 * 150 >= mb
"""


def per_process_memory_only():
    if not record_memory_bounded(MEM):
        pytest.xfail(
            "no writable memory cgroup here (not root mode, or /sys/fs/cgroup read-only): "
            "memory_mb is RLIMIT_AS, per process, so a record can hold up to "
            "max_processes x memory_mb in forked processes"
        )


def test_call_forked_processes_cannot_together_hold_memory_beyond_the_limit():
    per_process_memory_only()  # a killed fork never writes: the parent waits out the limit
    cfg = SandboxConfig(time_limit_s=5.0, memory_mb=256, workers=1)
    assert run(FORKED_MEMORY, STORE_400MB, cfg=cfg)["status"] != "passed"


# the submission itself is the largest process when the record's total reaches the limit: the
# kernel kills it, and the verdict names memory (not a crash)
FORK_THEN_GROW = r"""
import os, time
def grow(mb):
    r, w = os.pipe()
    if os.fork() == 0:
        block = b"x" * (120 << 20)
        os.write(w, b"1")
        time.sleep(30)
    os.read(r, 1)
    blocks = [b"y" * (40 << 20) for _ in range(5)]   # 200 MB here, under RLIMIT_AS (256 MB)
    return len(blocks) * 40 >= mb
"""


def test_call_a_record_killed_for_its_total_memory_is_a_memory_failure():
    per_process_memory_only()
    res = run(FORK_THEN_GROW, call("grow", ((200,), True)), cfg=MEM)
    assert res["status"] == "memory_limit", res


def test_call_forked_processes_within_the_limit_together_still_pass():
    per_process_memory_only()
    res = run(
        FORKED_MEMORY,
        call("stored", ((450,), True)),
        cfg=SandboxConfig(time_limit_s=20.0, memory_mb=1024, workers=1),
    )
    assert res["status"] == "passed", res


# what the filter leaves alone: the standard library's process and shared-memory tools
STDLIB_PARALLEL = r"""
import asyncio
from multiprocessing import Pool, shared_memory
def sq(x):
    return x * x
def total(n):
    shm = shared_memory.SharedMemory(create=True, size=1 << 20)
    shm.buf[0] = 7
    seven = shm.buf[0]
    shm.close()
    shm.unlink()
    with Pool(2) as pool:
        squares = sum(pool.map(sq, range(n)))
    async def one():
        await asyncio.sleep(0)
        return 1
    return squares + seven + asyncio.run(one())
"""


def test_call_multiprocessing_shared_memory_and_asyncio_still_work():
    res = run(STDLIB_PARALLEL, call("total", ((4,), 0 + 1 + 4 + 9 + 7 + 1)))
    assert res["status"] == "passed", res


# ---- stdio in userns mode: the harness is out of the program's reach -------------------------
# In userns mode the harness and the program share the user's uid (no private uid whose setuid
# would have made the harness non-dumpable): /proc/<ppid>/fd, /mem and ptrace reach the
# harness. Here the program reopens the harness's inputs memfd and keeps a counter in it, so
# identical inputs with expected outputs 1 then 2 pass only if state carries between tests.
MEMFD_COUNTER = r"""
import os
ppid, n = os.getppid(), 1
try:
    for fd in os.listdir("/proc/%d/fd" % ppid):
        if "recode-inputs" in os.readlink("/proc/%d/fd/%s" % (ppid, fd)):
            with open("/proc/%d/fd/%s" % (ppid, fd), "r+b") as fh:
                fh.seek(1 << 20)
                n = int(fh.read(8) or b"0") + 1
                fh.seek(1 << 20)
                fh.write(b"%08d" % n)
except OSError:
    pass
print(n)
"""
USERNS_RUNNER = r"""
import json, sys
from recode_lib.sandbox import SandboxConfig, execute_many, isolation_mode
cfg = SandboxConfig(workers=1, time_limit_s=5.0, memory_mb=512)
recs = json.loads(sys.stdin.read())
mode = isolation_mode(cfg)
print(json.dumps({"mode": mode, "results": execute_many(recs, config=cfg)}))
"""


def run_as_normal_user(normal_user, records):
    """Judge `records` in a judge process of a normal user (userns mode); its results."""
    import json
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": root, "LANG": "C.UTF-8"}
    proc = subprocess.run(
        normal_user["prefix"] + [sys.executable, "-c", USERNS_RUNNER],
        input=json.dumps(records),
        capture_output=True,
        text=True,
        cwd="/",
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["mode"] == "userns", proc.stderr[-2000:]
    return out["results"]


def test_userns_stdio_program_cannot_keep_state_in_the_harness_memfd(normal_user):
    tests = {
        "kind": "stdio",
        "cases": [{"input": "x\n", "output": "1\n"}, {"input": "x\n", "output": "2\n"}],
    }
    res = run_as_normal_user(normal_user, [{"id": "c", "code": MEMFD_COUNTER, "tests": tests}])
    assert res[0]["status"] != "passed", res[0]


# ---- the judge's own memory -------------------------------------------------------------------
def test_stdio_output_of_a_million_short_lines_costs_the_judge_little_memory():
    # a stdio output within max_output_bytes made of many lines: a list of them would cost the
    # judge ~8x the output (a str per line), per record judged at once
    import tracemalloc

    from recode_lib.sandbox import verdict

    out = "".join(f"{i:07d}\n" for i in range(1_000_000))
    last_differs = out[:-9] + "x\n"  # same line count: compared line by line
    tracemalloc.start()
    try:
        assert not verdict.stdio_equal(out, "1\n2\n")
        assert not verdict.stdio_equal(out, last_differs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # (the stripped copies of the two texts, no more)
    assert peak < 3 * len(out), f"peak {peak} bytes for a {len(out)}-byte output"


# ---- sealed inputs: no later input anywhere in the submission's memory -----------------------
# SandboxConfig.sealed_inputs hands each call test's input over only after the previous test
# reported. The child is forked from the warm worker: whatever the worker's heap ever held
# (freed, never zeroed) is in the child's memory too. f returns every input marker found in its
# own readable memory, and passes only if it sees the later tests' inputs during the first.
SEALED = SandboxConfig(time_limit_s=5.0, memory_mb=512, workers=1, sealed_inputs=True)
MEMORY_SCAN = r"""
import ctypes, re
def f(x):
    found = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            span, perms = line.split()[:2]
            a, b = (int(v, 16) for v in span.split("-"))
            if "r" in perms and b - a < 1 << 28 and "[v" not in line:
                found.update(re.findall(rb"zq([0-9]{6})zq", ctypes.string_at(a, b - a)))
    return sorted(int(v) for v in found)
"""


def marked(*ks):
    return [{"args": [f"zq{k:06d}zq"], "expected": sorted(ks)} for k in ks]


def test_call_sealed_inputs_are_not_in_the_inherited_worker_memory():
    tests = {"kind": "call", "fn_name": "f", "cases": marked(100001, 100002, 100003)}
    res = run(MEMORY_SCAN, tests, cfg=SEALED)
    assert res["tests"][0]["status"] != "passed", res  # test 0 saw tests 1 and 2


# ---- stdio: kernel state between the tests of one record ---------------------------------------
# Every stdio test of a record runs under the record's uid; a key added to the uid's user
# keyring outlives the program and would reach the next test (and in userns mode, the user's
# own uid, the next record).
KEYRING_COUNTER = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
ADD_KEY, KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
USER_RING, KEYCTL_SEARCH, KEYCTL_READ = -4, 10, 11
key = libc.syscall(KEYCTL, KEYCTL_SEARCH, ctypes.c_long(USER_RING), b"user", b"rt-count", 0)
buf = ctypes.create_string_buffer(64)
got = libc.syscall(KEYCTL, KEYCTL_READ, key, buf, 64) if key > 0 else 0
n = (int(buf.raw[:got]) if got > 0 else 0) + 1
data = str(n).encode()
libc.syscall(ADD_KEY, b"user", b"rt-count", data, len(data), ctypes.c_long(USER_RING))
print(n)
"""


@pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"), reason="syscall numbers")
def test_stdio_user_keyring_does_not_carry_state_between_tests():
    tests = {
        "kind": "stdio",
        "cases": [{"input": "x\n", "output": "1\n"}, {"input": "x\n", "output": "2\n"}],
    }
    assert run(KEYRING_COUNTER, tests)["status"] != "passed"


# the submission dies while a process it forked keeps the worker's pipe open: the death is
# noticed at once (it was only seen at the time limit), and the test fails as a crash
DIE_BEHIND_A_SLEEPER = r"""
import os, time
def f():
    if os.fork() == 0:
        time.sleep(30)
    os._exit(3)
"""


def test_call_a_submission_dying_behind_a_forked_sleeper_is_a_crash_not_a_wait():
    cfg = SandboxConfig(time_limit_s=20.0, memory_mb=512, workers=1)
    res = run(DIE_BEHIND_A_SLEEPER, call("f", ((), 1)), cfg=cfg)
    assert res["status"] not in ("passed", "time_limit"), res
