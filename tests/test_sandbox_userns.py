"""The sandbox's user-namespace mode (the judge run by a normal user), one property per test.

A normal user's judge process runs a batch of probe submissions once (module fixture): as
root the batch runs through `runuser` as the user `recode-ci` that `.ci/run` creates and lets
reach the interpreter and the checkout (conftest.py's `normal_user`: skipped, saying what is
missing and how to add it, when no such user can run this interpreter and checkout, or when the
kernel refuses it a user namespace); as a normal user it runs directly. Where a user namespace
can be made, the judge must reach userns mode (a fallback to plain fails). Each probe's function
returns True exactly when the property holds, so the record passes iff the sandbox held. The
judge's working directory holds a file only that user may read, and its environment a secret:
both must stay out of reach. test_sandbox_hostile_userns.py runs the hostile test modules as
that user too.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import uuid

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRET = uuid.uuid4().hex
TOKEN = "rtuserns" + uuid.uuid4().hex[:10]

PRELUDE = textwrap.dedent("""
import os, ctypes, signal
libc = ctypes.CDLL(None, use_errno=True)
JUDGE, SECRET, SECRET_DIR = @JUDGE@, %r, %r
def pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]
def readable(path):
    try:
        with open(path, "rb") as fh:
            return SECRET.encode() in fh.read()
    except OSError:
        return False
""")

PROBES = {
    # no capability in any set: no mount/umount/chroot/setns/unshare/ptrace of the userns
    "no_capabilities": """
def f():
    caps = {k: int(v, 16) for k, v in (ln.split(":") for ln in open("/proc/self/status")
            if ln.startswith(("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh")))}
    return len(caps) == 5 and not any(caps.values())
""",
    # the classic escape with CAP_SYS_CHROOT: chroot into a subdirectory, climb out
    "no_chroot_escape": """
def f():
    try:
        os.makedirs("esc", exist_ok=True)
        os.chroot("esc")
    except OSError:
        return not readable(SECRET_DIR + "/secret")
    for _ in range(64):
        os.chdir("..")
    os.chroot(".")
    return not readable(SECRET_DIR + "/secret")
""",
    # mount(2), a new pid/user namespace, setns(2) into the parent's mount namespace
    "no_mount_or_namespaces": """
def f():
    os.makedirs("/tmp/p", exist_ok=True)
    ok = libc.mount(b"proc", b"/tmp/p", b"proc", 0, None) != 0
    ok = ok and libc.unshare(0x20000000) != 0 and libc.unshare(0x10000000) != 0
    for pid in pids() + [os.getppid()]:
        try:
            fd = os.open("/proc/%d/ns/mnt" % pid, os.O_RDONLY)
        except OSError:
            continue
        ok = ok and libc.setns(fd, 0x20000) != 0
    return ok
""",
    # /proc lists only the submission's own pid namespace: its init (1) and itself
    "proc_is_own_namespace": """
def f():
    ps = pids()
    return JUDGE not in ps and sorted(ps) == sorted({1, os.getpid()})
""",
    # the namespace's init ignores the submission's signals (its death would kill this probe)
    "init_survives_signals": """
import time
def f():
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGKILL):
        os.kill(1, sig)
    time.sleep(0.3)
    return os.path.exists("/proc/1")
""",
    # no same-uid process reachable through /proc/<pid>/root, cwd, fd, environ or mem
    "no_proc_reach": """
def f():
    for pid in pids():
        if pid == os.getpid():
            continue
        for p in ("/proc/%d/root%s/secret" % (pid, SECRET_DIR), "/proc/%d/cwd/secret" % pid,
                  "/proc/%d/environ" % pid):
            if readable(p):
                return False
        try:
            os.open("/proc/%d/mem" % pid, os.O_RDONLY)
            return False
        except OSError:
            pass
    return True
""",
    # kill(2) and ptrace(2) cannot reach the judge (nor anything outside the namespace)
    "no_signal_or_ptrace": """
def f():
    try:
        os.kill(JUDGE, 0)
        return False
    except ProcessLookupError:
        pass
    for pid in [JUDGE, 1] + pids():
        if pid != os.getpid() and libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
            return False
    return True
""",
    # a detached daemon left behind: must be gone after the record (namespace torn down)
    "daemon_left": f"""
def f():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sleep", ["{TOKEN}", "60"])
        os._exit(0)
    os.wait()
    return True
""",
    # the submission's end still reaches the worker from inside the pid namespace: its
    # signal (SIGXCPU is the CPU-time limit: time_limit, not a crash) and peak memory (wait4)
    "killed_by_signal": """
def f():
    os.kill(os.getpid(), signal.SIGXCPU)
""",
    "peak_memory": """
def f():
    global BLOCK
    BLOCK = bytearray(300 << 20)
    BLOCK[::4096] = b"x" * len(BLOCK[::4096])
    os._exit(0)
""",
    "control_good": """
def f():
    return True
""",
}

RUNNER = """
import json, os, sys
from recode_lib.sandbox import SandboxConfig, execute_many, isolation_mode
cfg = SandboxConfig(workers=1, time_limit_s=5.0, memory_mb=512)
recs = json.loads(sys.stdin.read())
mode = isolation_mode(cfg)
for r in recs:
    r["code"] = r["code"].replace("@JUDGE@", str(os.getpid()))
res = execute_many(recs, config=cfg) if mode == "userns" else []
print(json.dumps({"mode": mode, "uid": os.getuid(), "results": res}))
"""


@pytest.fixture(scope="module")
def userns_results(normal_user):
    prefix = normal_user["prefix"]
    # outside /tmp (the worker's mount namespace hides the host /tmp even from an escapee)
    secret_dir = tempfile.mkdtemp(
        prefix="recode-userns-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None
    )
    try:
        with open(os.path.join(secret_dir, "secret"), "w") as fh:
            fh.write(SECRET)
        os.chmod(os.path.join(secret_dir, "secret"), 0o600)
        os.chmod(secret_dir, 0o700)
        if prefix:  # readable by the judge's user alone
            for p in (secret_dir, os.path.join(secret_dir, "secret")):
                os.chown(p, normal_user["uid"], normal_user["gid"])
        recs = []
        for name, body in PROBES.items():
            code = PRELUDE % (SECRET, secret_dir)
            recs.append(
                {
                    "id": name,
                    "code": code + textwrap.dedent(body),
                    "tests": {
                        "kind": "call",
                        "fn_name": "f",
                        "cases": [{"args": [], "expected": True}],
                    },
                }
            )
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": ROOT,
            "HOME": secret_dir,
            "RT_SECRET": SECRET,
            "LANG": "C.UTF-8",
        }
        proc = subprocess.run(
            prefix + [sys.executable, "-c", RUNNER],
            input=json.dumps(recs),
            capture_output=True,
            text=True,
            cwd=secret_dir,
            env=env,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        survivors = _token_processes()
    finally:
        shutil.rmtree(secret_dir, ignore_errors=True)
    # the kernel gives this user a user namespace (normal_user checked): plain is a failure
    assert out["mode"] == "userns", (
        "the judge of user {!r} fell back to {} mode".format(normal_user["name"], out["mode"]),
        proc.stderr[-2000:],
    )
    assert out["uid"] == normal_user["uid"] != 0
    return {r["id"]: r for r in out["results"]} | {"_survivors": survivors}


def _token_processes():
    found = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/cmdline", "rb") as fh:
                    if TOKEN.encode() in fh.read():
                        found.append(int(p))
            except OSError:
                pass
    for p in found:
        try:
            os.kill(p, 9)
        except OSError:
            pass
    return found


def _passed(res, name):
    r = res[name]
    assert r["status"] == "passed", (name, r["status"], r.get("tests"))


def test_userns_control_passes(userns_results):
    _passed(userns_results, "control_good")


def test_userns_child_has_no_capabilities(userns_results):
    _passed(userns_results, "no_capabilities")


def test_userns_nested_chroot_does_not_escape(userns_results):
    _passed(userns_results, "no_chroot_escape")


def test_userns_no_mount_no_new_namespace_no_setns(userns_results):
    _passed(userns_results, "no_mount_or_namespaces")


def test_userns_proc_lists_only_the_submissions_namespace(userns_results):
    _passed(userns_results, "proc_is_own_namespace")


def test_userns_pid_namespace_init_ignores_the_submissions_signals(userns_results):
    _passed(userns_results, "init_survives_signals")


def test_userns_no_host_files_env_or_memory_through_proc(userns_results):
    _passed(userns_results, "no_proc_reach")


def test_userns_cannot_signal_or_ptrace_the_judge(userns_results):
    _passed(userns_results, "no_signal_or_ptrace")


def test_userns_detached_daemon_is_killed(userns_results):
    assert userns_results["daemon_left"]["status"] == "passed"
    assert userns_results["_survivors"] == []


def test_userns_signal_death_is_relayed(userns_results):
    r = userns_results["killed_by_signal"]
    assert r["status"] == "time_limit", r  # SIGXCPU seen by the worker, not a plain crash


def test_userns_peak_memory_is_relayed(userns_results):
    r = userns_results["peak_memory"]
    assert r["status"] == "runtime_error"  # exited before answering
    assert r["memory_mb"] is not None and r["memory_mb"] >= 300, r


def test_userns_unavailable_is_said_not_silent(normal_user):
    """auto isolation that cannot create a user namespace (here: a multithreaded caller, which
    unshare(CLONE_NEWUSER) refuses) falls back to plain mode, and says so on stderr."""
    prefix = normal_user["prefix"]
    code = (
        "import threading, time, json\n"
        "threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
        "from recode_lib.sandbox import limits\n"
        "iso = limits.setup_worker({'isolation': 'auto', 'max_processes': 8})\n"
        "print(json.dumps(iso))\n"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": ROOT}
    proc = subprocess.run(
        prefix + [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd="/",
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    iso = json.loads(proc.stdout.strip().splitlines()[-1])
    assert iso["mode"] == "plain" and "userns" in iso["why"], iso
    assert "WARNING: no isolation" in proc.stderr and "userns" in proc.stderr, proc.stderr
