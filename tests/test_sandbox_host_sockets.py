"""No unix-domain socket of the host is reachable from a submission (limits.py: the root's
host directories are overlays, whose inodes are not the sockets bound under them; else the
unix filter), one hostile property per test.

A host listener (a thread of this test process) is planted where the sandbox sees the host's
file system: the interpreter's prefix (sys.prefix: a whole venv or conda tree when it is not
under /tmp; its site-packages otherwise), an interpreter under /tmp (a venv made here, whose
site-packages each child re-binds), /usr and /etc (skipped, saying so, where not writable). A
call test, a stdio test, a script test and the terminal tool (tools.run_command) each try to
connect and send; the listener must get nothing and the submission must see the connection
refused. Datagrams (sendto from a socket, a datagram or SOCK_RAW socketpair), a listener on a
file system mounted below a shown directory or bind-mounted over a file there (as root, in a
private mount namespace of a judge subprocess) and a host abstract socket (the network
namespace; this one held before the overlays too) likewise. What the submission runs inside
keeps working: socketpair, multiprocessing's Pipe, and (where the worker shows overlays) a
listener of its own in its /tmp. The unix filter (the fallback where overlays cannot be made) is
tested directly in a forked process. As root the sandbox runs in root mode; the userns tests at the
end plant the same listeners (owned by the judge's user, mode 600: the user's own sockets) and run
the same attacks as conftest's normal user, in userns mode.
"""

import ctypes
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import uuid

import pytest

from recode_lib.sandbox import SandboxConfig, execute, isolation_mode, limits
from recode_lib.sandbox.pool import get_pool
from recode_lib.sandbox.tools import ToolLimits, run_command

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = uuid.uuid4().hex[:10]
CFG = SandboxConfig(time_limit_s=5.0, memory_mb=512, workers=1)
LOCATIONS = ("prefix", "tmp", "usr", "etc")
KINDS = ("call", "stdio", "script", "tool")

LIBC = ctypes.CDLL(None, use_errno=True)

pytestmark = pytest.mark.skipif(
    isolation_mode(CFG) == "plain", reason="plain mode isolates no file system (docs/sandbox.md)"
)

# the attack: connect to `path` and send; "refused" when the sandbox held. Through the
# directory (chdir, then the name): a socket address holds at most 107 bytes of path
ATTACK = """
import os, socket
def attempt(path):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        return "refused"
    here = os.getcwd()
    try:
        s.settimeout(2)
        if path.startswith("/"):
            os.chdir(os.path.dirname(path))
            path = os.path.basename(path)
        s.connect(path)
        s.sendall(b"pwn")
        return "connected"
    except OSError:
        return "refused"
    finally:
        s.close()
        os.chdir(here)
"""


class HostListener:
    """A host process's unix-domain listener: socket `s` (mode 777, or 600 owned by `owner`)
    in a fresh directory (mode 755) under `where`, served by a thread that records what every
    connection (stream) or datagram (dgram) brought. Removed on exit."""

    def __init__(self, where, kind=socket.SOCK_STREAM, owner=None):
        self.where, self.kind, self.owner = where, kind, owner
        self.got, self.stop = [], threading.Event()

    def __enter__(self):
        self.dir = tempfile.mkdtemp(dir=self.where, prefix=f"rs-{TOKEN[:6]}-")
        os.chmod(self.dir, 0o755)
        self.path = os.path.join(self.dir, "s")
        self.srv = socket.socket(socket.AF_UNIX, self.kind)
        fd = os.open(self.dir, os.O_PATH)  # a short address whatever the directory's path
        try:
            self.srv.bind(f"/proc/self/fd/{fd}/s")
        finally:
            os.close(fd)
        if self.owner:
            os.chown(self.path, *self.owner)
        os.chmod(self.path, 0o600 if self.owner else 0o777)
        if self.kind == socket.SOCK_STREAM:
            self.srv.listen(8)
        self.srv.settimeout(0.05)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        return self

    def _serve(self):
        while not self.stop.is_set():
            try:
                if self.kind == socket.SOCK_STREAM:
                    conn, _ = self.srv.accept()
                    conn.settimeout(1)
                    try:
                        self.got.append(conn.recv(64) or b"<connected>")
                    except OSError:
                        self.got.append(b"<connected>")
                    conn.close()
                else:
                    self.got.append(self.srv.recv(64))
            except TimeoutError:
                continue
            except OSError:
                return

    def received(self):
        time.sleep(0.1)  # a connection the submission made is served by now
        return list(self.got)

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(2)
        self.srv.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _under_tmp(path):
    return os.path.realpath(path).startswith("/tmp/")


def _writable_dir(candidates):
    for d in candidates:
        if os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK):
            return d
    return None


@pytest.fixture(scope="module")
def tmp_python():
    """A venv under /tmp (as in a CI clone): its python, and its site-packages, which every
    child re-binds from the host /tmp (limits.tmp_paths)."""
    root = tempfile.mkdtemp(prefix="rsv-", dir="/tmp")
    os.chmod(root, 0o755)
    try:
        venv = os.path.join(root, "venv")
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", venv], check=True, capture_output=True
        )
        python = os.path.join(venv, "bin", "python")
        site = subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        for d, _, _ in os.walk(root):
            os.chmod(d, 0o755)
        yield {"python": python, "site": site}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _location(loc, tmp_python):
    """(directory to plant the listener in, the interpreter the workers must run or None),
    skipped where that directory is not writable here."""
    if loc == "tmp":
        return tmp_python["site"], tmp_python["python"]
    if loc == "prefix":
        where = [sys.prefix] if not _under_tmp(sys.prefix) else [sysconfig.get_paths()["purelib"]]
    else:
        where = {"usr": ["/usr/local", "/usr/share", "/usr"], "etc": ["/etc"]}[loc]
    d = _writable_dir(where)
    if d is None:
        pytest.skip(f"no writable directory among {where} to plant a host socket in")
    return d, None


def _run(kind, path, python=None):
    """Run the attack on `path` as a `kind` test (or tool call); True when it was refused."""
    cfg = CFG.replace(python=python) if python else CFG
    if kind == "tool":
        lim = ToolLimits(time_limit_s=10)
        if python:  # the tool's pool runs that interpreter too
            orig = ToolLimits.sandbox_config
            try:
                ToolLimits.sandbox_config = lambda self: orig(self).replace(python=python)
                res = run_command(
                    ["python", "-c", ATTACK + f"print(attempt({path!r}))"], limits=lim
                )
            finally:
                ToolLimits.sandbox_config = orig
        else:
            res = run_command(["python", "-c", ATTACK + f"print(attempt({path!r}))"], limits=lim)
        assert res.status == "ok", (res.status, res.reason, res.stderr)
        return res.stdout.strip() == "refused"
    if kind == "call":
        rec = {
            "code": ATTACK + "def f(p):\n    return attempt(p)\n",
            "tests": {
                "kind": "call",
                "fn_name": "f",
                "cases": [{"args": [path], "expected": "refused"}],
            },
        }
    elif kind == "stdio":
        rec = {
            "code": ATTACK + "print(attempt(input()))\n",
            "tests": {"kind": "stdio", "cases": [{"input": path + "\n", "output": "refused"}]},
        }
    else:
        rec = {
            "code": ATTACK + "def f(p):\n    return attempt(p)\n",
            "tests": {
                "kind": "script",
                "entry_point": "f",
                "script": f"assert f({path!r}) == 'refused'\n",
            },
        }
    res = execute({"id": "sock", **rec}, config=cfg)
    assert res["status"] in ("passed", "wrong_answer", "runtime_error"), res
    return res["status"] == "passed"


@pytest.mark.parametrize("loc", LOCATIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_host_socket_gets_no_connection(kind, loc, tmp_python):
    where, python = _location(loc, tmp_python)
    with HostListener(where) as host:
        refused = _run(kind, host.path, python)
        got = host.received()
    assert got == [], f"the host listener in {where} received {got!r} from a {kind}"
    assert refused


DGRAM = """
import os, socket
def f(path):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        os.chdir(os.path.dirname(path))
        s.sendto(b"pwn", os.path.basename(path))
        return "sent"
    except OSError:
        return "refused"
"""

DGRAM_PAIR = """
import os, socket
def f(path):
    try:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        os.chdir(os.path.dirname(path))
        a.sendto(b"pwn", os.path.basename(path))   # a datagram pair sends to any address
        return "sent"
    except OSError:
        return "refused"
"""


def _call(code, args, expected, python=None):
    rec = {
        "id": "c",
        "code": code,
        "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": args, "expected": expected}]},
    }
    return execute(rec, config=CFG.replace(python=python) if python else CFG)["status"]


DGRAM_RAW_PAIR = DGRAM_PAIR.replace("socket.SOCK_DGRAM", "socket.SOCK_RAW")


@pytest.mark.parametrize(
    "code", [DGRAM, DGRAM_PAIR, DGRAM_RAW_PAIR], ids=["socket", "socketpair", "raw_socketpair"]
)
def test_host_datagram_socket_gets_no_datagram(code, tmp_python):
    where, _ = _location("prefix", tmp_python)
    with HostListener(where, kind=socket.SOCK_DGRAM) as host:
        status = _call(code, [host.path], "refused")
        got = host.received()
    assert got == [] and status == "passed", (got, status)


def test_host_abstract_socket_gets_no_connection():
    # abstract names live in the network namespace: the worker's own one holds none of the host's
    name = f"\0recode-host-{TOKEN}"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(name)
    srv.listen(4)
    srv.settimeout(0.3)
    try:
        status = _call(ATTACK + "def f(p):\n    return attempt(p)\n", [name], "refused")
        try:
            conn, _ = srv.accept()
            conn.close()
            reached = True
        except TimeoutError:
            reached = False
    finally:
        srv.close()
    assert not reached and status == "passed"


# a host listener on a file system mounted below a shown directory: run by a root judge in a
# private mount namespace of its own (the host's mount table stays as it is)
SUBMOUNT = r"""
import json, os, socket, subprocess, sys
sys.path.insert(0, sys.argv[1])
import test_sandbox_host_sockets as t
from recode_lib.sandbox.pool import close_all
how, where, python = sys.argv[2], sys.argv[3], sys.argv[4] or None
spot = os.path.join(where, "m")
if how == "dir":      # a tmpfs mounted on a directory, the listener inside it
    os.mkdir(spot)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=755", "tmpfs", spot], check=True)
    plant, target = spot, None
else:                 # the listener's socket bind-mounted over a regular file
    open(spot, "w").close()
    plant, target = where, spot
with t.HostListener(plant) as host:
    if target:
        subprocess.run(["mount", "--bind", host.path, target], check=True)
    close_all()   # the next worker starts from this mount table (a worker copies it at start)
    refused = t._run("call", target or host.path, python)
    print(json.dumps({"refused": refused, "got": [g.decode() for g in host.received()]}))
"""


@pytest.mark.parametrize("loc", ["prefix", "tmp"])
@pytest.mark.parametrize("how", ["dir", "file"], ids=["tmpfs_below", "socket_over_a_file"])
def test_host_socket_on_a_mount_below_a_shown_directory_gets_no_connection(how, loc, tmp_python):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare(1) to mount in a private mount namespace")
    where, python = _location(loc, tmp_python)
    top = tempfile.mkdtemp(dir=where, prefix=f"rsm-{TOKEN[:6]}-")
    try:
        os.chmod(top, 0o755)
        proc = subprocess.run(
            [
                "unshare",
                "-m",
                "--propagation",
                "private",
                sys.executable,
                "-c",
                SUBMOUNT,
                os.path.join(ROOT, "tests"),
                how,
                top,
                python or "",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONPATH": ROOT},
        )
    finally:
        shutil.rmtree(top, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["got"] == [] and out["refused"], out


OWN_LISTENER = """
import socket
def f():
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind("/tmp/own.sock")
    srv.listen(1)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect("/tmp/own.sock")
    c.sendall(b"ping")
    conn, _ = srv.accept()
    return conn.recv(4).decode()
"""


def test_submissions_own_listener_in_its_tmp_works():
    get_pool(CFG).workers() or _call("def f():\n    return 1\n", [], 1)
    if any(w.info.get("host_sockets") == "filter" for w in get_pool(CFG).workers()):
        pytest.skip(
            "this kernel's workers use the unix filter (no overlays): a submission "
            "makes no listener of its own there (limits.restrict_syscalls)"
        )
    assert _call(OWN_LISTENER, [], "ping") == "passed"


def test_socketpair_and_multiprocessing_pipe_work():
    code = (
        "import multiprocessing, os, socket\n"
        "def f():\n"
        "    a, b = socket.socketpair()\n"
        "    a.sendall(b'x')\n"
        "    r, w = multiprocessing.Pipe()\n"
        "    if os.fork() == 0:\n"
        "        w.send(b.recv(1).decode() + 'y')\n"
        "        os._exit(0)\n"
        "    os.wait()\n"
        "    return r.recv()\n"
    )
    assert _call(code, [], "xy") == "passed"


# --- the unix filter (restrict_syscalls(unix=True)), in a forked process of this test


def _filtered(body):
    """Run `body()` in a forked process under no_new_privs + the unix filter; its result
    (a JSON value) or the exception text."""
    if limits.seccomp_program(unix=True) is None:
        pytest.skip(f"no seccomp table for {os.uname().machine}")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            if LIBC.prctl(limits.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError("no_new_privs")
            limits.restrict_syscalls(unix=True)
            out = body()
        except BaseException as exc:
            out = f"error: {exc!r}"
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return json.loads(data)


def test_unix_filter_leaves_a_host_listener_unreached(tmp_path):
    os.chmod(tmp_path, 0o755)
    with HostListener(str(tmp_path)) as host:
        got_back = _filtered(lambda: _attempt_here(host.path))
        got = host.received()
    assert got == [] and got_back == "refused", (got, got_back)


def _attempt_here(path):
    scope = {}
    exec(ATTACK, scope)
    return scope["attempt"](path)


@pytest.mark.parametrize(
    "kind", [socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, socket.SOCK_RAW], ids=["dgram", "raw"]
)  # af_unix makes a SOCK_RAW pair a datagram pair
def test_unix_filter_refuses_a_datagram_socketpair(kind):
    def body():
        try:
            socket.socketpair(socket.AF_UNIX, kind)
            return "made"
        except PermissionError:
            return "refused"

    assert _filtered(body) == "refused"


def test_unix_filter_keeps_socketpair_and_multiprocessing_pipe():
    def body():
        import multiprocessing

        a, b = socket.socketpair()
        a.sendall(b"x")
        r, w = multiprocessing.Pipe()
        w.send(b.recv(1).decode() + "y")
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # other families: untouched
        s.close()
        return r.recv()

    assert _filtered(body) == "xy"


# --- userns mode: the judge run by a normal user (conftest.normal_user), the user's own
# sockets planted by this process

USERNS_RUNNER = r"""
import json, sys
from recode_lib.sandbox import SandboxConfig, isolation_mode
from recode_lib.sandbox.pool import get_pool
sys.path.insert(0, sys.argv[1])
import test_sandbox_host_sockets as t
plan = json.loads(sys.stdin.read())
mode = isolation_mode(t.CFG)
out = {"mode": mode, "results": {}, "host_sockets": []}
if mode == "userns":
    for kind, loc, path, python in plan:
        out["results"]["%s/%s" % (kind, loc)] = t._run(kind, path, python)
    out["host_sockets"] = [w.info.get("host_sockets") for w in get_pool(t.CFG).workers()]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def userns_attacks(normal_user, tmp_python):
    """Every kind x location attack run by the normal user's judge, each against a listener
    of its own that this process planted (owned by that user, mode 600). {"mode", "results":
    {"kind/loc": refused}, "got": {"kind/loc": what its listener received}, "skipped":
    [loc]}."""
    owner = (normal_user["uid"], normal_user["gid"]) if normal_user["prefix"] else None
    work = tempfile.mkdtemp(
        prefix="recode-sock-userns-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None
    )
    listeners, plan, skipped = {}, [], []
    try:
        if owner:
            os.chown(work, *owner)
        for loc in LOCATIONS:
            try:
                where, python = _location(loc, tmp_python)
            except pytest.skip.Exception:
                skipped.append(loc)
                continue
            for kind in KINDS:
                host = listeners[kind + "/" + loc] = HostListener(where, owner=owner)
                host.__enter__()
                plan.append((kind, loc, host.path, python))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": ROOT,
            "HOME": work,
            "LANG": "C.UTF-8",
            "RECODE_RUNS_DIR": os.path.join(work, "runs"),
        }
        proc = subprocess.run(
            normal_user["prefix"]
            + [sys.executable, "-c", USERNS_RUNNER, os.path.join(ROOT, "tests")],
            input=json.dumps(plan),
            capture_output=True,
            text=True,
            cwd=work,
            env=env,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        out["got"] = {key: host.received() for key, host in listeners.items()}
    finally:
        for host in listeners.values():
            host.__exit__(None, None, None)
        shutil.rmtree(work, ignore_errors=True)
    assert out["mode"] == "userns", (
        "the judge of user {!r} fell back to {} mode".format(normal_user["name"], out["mode"]),
        proc.stderr[-2000:],
    )
    out["skipped"] = skipped
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_userns_host_socket_gets_no_connection(kind, userns_attacks):
    got = {k: v for k, v in userns_attacks["got"].items() if k.startswith(kind + "/")}
    ran = {k: v for k, v in userns_attacks["results"].items() if k.startswith(kind + "/")}
    assert ran and set(ran) == set(got), userns_attacks
    assert all(v == [] for v in got.values()), got
    assert all(ran.values()), ran
