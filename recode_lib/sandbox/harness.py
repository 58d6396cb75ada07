"""The in-sandbox harness: runs one submission's tests inside the sandboxed child process.

zygote.py forks a child, confines it (limits.confine), then calls

    run(job, todo, wfd)

which executes the submission and the tests listed in `todo` (indices, in that order) and
writes one line per event to the pipe `wfd`:
    S\\n                                        the submission was loaded
    X {"st": "syntax"|"error"|"memory", "e"}   loading failed (every remaining test fails so)
    T {"i", "st", "out", "t", "m", "e"}        test i finished: st in ok|error|memory|output
                                               (|wrong: a failed assert in a script test)
    R\\n                                        (script) the tests ran to their end: the worker
                                               answers with the nonce on the nonce pipe

The submission runs as a real module: `__main__` (stdio, script) or `solution` (call), listed
in sys.modules, so pickling its classes, multiprocessing and dataclasses work.
Kinds: "call" runs every case in this process (one call per case, arguments read from the
worker's memfd and decoded just before it and dropped after, return values encoded with
codec.py — the judge compares them, the expected values never enter the sandbox); "stdio" forks one grandchild per case with the input
file on fd 0 and a size-capped output file on fd 1, and lets the program end as Python would
(non-daemon threads joined, atexit handlers run, stdout flushed even if the program closed it);
"script" (unittest/mock in the script: in-process) reads the test script from the memfd,
compiles it (with `==`/`!=` in asserts rewritten to a comparison that ignores user-defined
__eq__), runs the submission, then restores builtins, this module, every module loaded before it
(module dicts, classes, function code and closure cells; zygote.py preloads the
standard-library modules tests use, and the snapshot is taken there once) and runs the tests in
their own namespace (pristine builtins; only the entry point, or else the submission's names
that do not shadow a builtin, are shared; functions wrapped, other values only as plain values,
modules or classes) with the submission's functions wrapped so their return values come back as
plain built-in values (a user-defined class's instance becomes an opaque value equal to nothing,
builtin subclasses such as namedtuple become their base type, the standard library's
Counter/OrderedDict/defaultdict/deque keep theirs); after every call, builtins, this module and
the test's namespace are restored to their state at the call (everything else too for the first
FULL_GUARD_CALLS calls: the tests' own mock.patch stays), the running TestCase/TestResult/suite/
runner objects get their attributes back, a SkipTest raised by the submission is an error, and a
trace/profile hook left behind fails the tests.
Without unittest/mock in the script (job["separate"]) the tests instead run in this process,
which never runs submission code; the submission runs in a child process forked *before* the
script is read, which answers call/new/get/set requests with codec-encoded plain values (objects
of its classes stay there behind handles). What the tests take from it is derived here from the
script's free names (not builtins) plus the record's entry point, never from what it announces.
That child is killed before the nonce is asked for; this process is made non-dumpable, so the
child cannot ptrace it or open its fds.

Residual risk (unittest-style script tests, in-process): a submission that writes raw protocol
lines to the pipe during its own call, edits the harness or the snapshot it restores from
(reachable through frames), or uses ctypes, can still forge a pass; third-party modules (numpy, pandas) it patches stay patched for the tests, and a patch to
a preloaded module's class or function made during a call after the first FULL_GUARD_CALLS
calls is not undone. The judge trusts nothing from this file except
call/stdio outputs *as data*; timings and memory are self-reported. Only the standard library
is imported; this file does not enforce any limit (zygote.py and limits.py do).
"""

import ast
import builtins
import ctypes
import io
import json
import os
import resource
import signal
import sys
import time
import types
from itertools import islice

import codec

_perf = time.perf_counter
_dumps = json.dumps
_libc = ctypes.CDLL(None, use_errno=True)


def _send(wfd, tag, obj=None):
    data = (tag + (" " + _dumps(obj) if obj is not None else "") + "\n").encode()
    while data:
        data = data[os.write(wfd, data):]


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _status_of(exc):
    return "memory" if isinstance(exc, MemoryError) else "error"


def _program_module(name):
    """A fresh module for the submission, registered in sys.modules under `name`."""
    mod = types.ModuleType(name)
    mod.__dict__.update(__builtins__=builtins, __file__="<submission>")
    sys.modules[name] = mod
    if name != "__main__":
        sys.modules["__main__"] = mod
    return mod


def run(job, todo, wfd):
    kind = job["kind"]
    for name in ("codec", "harness", "limits", "zygote"):  # not importable by the submission
        sys.modules.pop(name, None)
    try:
        code_obj = compile(job["code"], "<submission>", "exec")
    except (SyntaxError, ValueError) as exc:
        _send(wfd, "X", {"st": "syntax", "e": "%s: %s" % (type(exc).__name__, exc)})
        return
    except MemoryError:
        _send(wfd, "X", {"st": "memory", "e": "MemoryError"})
        return
    if kind == "stdio":
        _run_stdio(job, code_obj, todo, wfd)
        return
    if kind == "script":
        _run_script(job, code_obj, wfd)
        return
    g = _program_module("solution").__dict__
    try:
        exec(code_obj, g)
    except BaseException as exc:  # SystemExit included: not running to the end is a failure
        _send(wfd, "X", {"st": _status_of(exc), "e": type(exc).__name__})
        return
    fn = _resolve(g, job["fn_name"])
    if fn is None:
        _send(wfd, "X", {"st": "error", "e": "NameError: %s not defined" % job["fn_name"]})
        return
    _send(wfd, "S")
    _run_calls(job, fn, todo, wfd)


def _resolve(g, name):
    fn = g.get(name)
    if callable(fn) and not isinstance(fn, type):
        return fn
    cls = g.get("Solution")
    if isinstance(cls, type) and callable(getattr(cls, name, None)):
        return lambda *a: getattr(cls(), name)(*a)
    return None


def _input(job, i):
    """Test i's input text, read from the worker's memfd only now (see zygote.store_inputs)."""
    off, n = job["input_index"][i]
    parts = []
    while n > 0:
        chunk = os.pread(job["input_fd"], n, off)
        if not chunk:
            break
        parts.append(chunk)
        off, n = off + len(chunk), n - len(chunk)
    return b"".join(parts).decode("utf-8", "surrogatepass")


def _run_calls(job, fn, todo, wfd):
    decode, encode, limit, loads = codec.decode, codec.encode, job["max_output"], json.loads
    for i in todo:
        args = decode(loads(_input(job, i)))  # this test's input only, dropped after the call
        t0 = _perf()
        try:
            out = fn(*args)
            t = _perf() - t0
            args = None
            msg = {"i": i, "st": "ok", "out": encode(out), "t": t, "m": _peak_mb()}
            out = None
            data = _dumps(msg)
            if len(data) > limit:
                msg = {"i": i, "st": "output", "t": t, "m": _peak_mb(), "e": "output too large"}
                data = _dumps(msg)
        except BaseException as exc:
            msg = {"i": i, "st": _status_of(exc), "t": _perf() - t0, "m": _peak_mb(),
                   "e": type(exc).__name__}
            data = _dumps(msg)
        args = out = msg = None
        data = ("T " + data + "\n").encode()
        while data:
            data = data[os.write(wfd, data):]


# ---- stdio ----------------------------------------------------------------------------------
PR_SET_CHILD_SUBREAPER = 36
MAX_CLEANUP_ROUNDS = 500


class CleanupError(Exception):
    """What a test left behind (processes, scratch files) could not be removed."""


def _run_stdio(job, code_obj, todo, wfd):
    """Every test as a fresh program run (a grandchild of this trusted process, which never
    runs submission code): nothing of one test survives into the next. After each test every
    process the program started is killed (this process is their subreaper, so none escapes
    by double-forking or setsid) and the scratch directory (/tmp in root/userns mode, where
    /dev/shm and /var/tmp point too) is emptied; the CPU time of all of them counts against
    the test (more than the time limit is a time_limit, as a judge with per-test CPU
    accounting would say). A test whose leftovers cannot be removed fails with the reason,
    and so does every test after it."""
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    _send(wfd, "S")
    broken = None
    for i in todo:
        if broken is not None:
            _send(wfd, "T", {"i": i, "st": "error", "t": None, "m": None,
                             "e": "not run: " + broken})
            continue
        try:
            _run_stdio_case(job, code_obj, i, wfd)
        except CleanupError as exc:
            broken = "the leftovers of an earlier test could not be removed (%s)" % exc


def _cpu_of_children():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _child_pids():
    out = []
    task = "/proc/self/task"
    for tid in os.listdir(task):
        with open("%s/%s/children" % (task, tid)) as fh:
            out += [int(c) for c in fh.read().split()]
    return out


def end_descendants():
    """SIGKILL and reap every process below this one (orphans are re-parented here: this
    process is their subreaper). Raises CleanupError if some survive MAX_CLEANUP_ROUNDS."""
    for _ in range(MAX_CLEANUP_ROUNDS):
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                pass  # a live child: kill below
        except ChildProcessError:
            return  # no child at all (the common case: one syscall)
        kids = _child_pids()
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
            except OSError:
                pass
        for k in kids:
            try:
                os.waitpid(k, 0)
            except ChildProcessError:
                pass
    raise CleanupError("processes kept appearing")


IPC_RMID = 0
_IPC_TABLES = (("/proc/sysvipc/shm", "shmctl"), ("/proc/sysvipc/msg", "msgctl"),
               ("/proc/sysvipc/sem", "semctl"))


def remove_ipc_objects():
    """Remove every SysV shared-memory segment, message queue and semaphore set of this
    process's IPC namespace (limits.confine gives each child its own, so all of them are the
    submission's): a counter in shared memory must not carry from one stdio test to the next.
    Only in a private IPC namespace (never in plain mode, where they would be the user's).
    POSIX message queues cannot be created at all (RLIMIT_MSGQUEUE is 0)."""
    for table, call in _IPC_TABLES:
        try:
            with open(table) as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue   # no SysV IPC in this kernel: nothing to remove
        for row in rows:
            cols = row.split()
            if len(cols) < 2 or not cols[1].isdigit():
                continue
            ident = int(cols[1])
            fn = getattr(_libc, call)
            ret = fn(ident, 0, IPC_RMID, None) if call == "semctl" else fn(ident, IPC_RMID, None)
            if ret != 0 and ctypes.get_errno() not in (22, 43):   # EINVAL/EIDRM: gone already
                raise CleanupError("IPC object %d: %s" % (ident, os.strerror(ctypes.get_errno())))


def empty_scratch(path="."):
    """Remove everything under the working directory (the test's scratch space); raises
    CleanupError when something cannot be removed. Iterative (no recursion limit), and
    directories the program made unreadable are opened up first (same uid). Mount points
    are left alone: the read-only binds of an interpreter under /tmp (limits.confine's
    rebinds) are not scratch, and nothing the submission can write lies below them."""
    root = os.path.abspath(path)
    stack, dirs, dev = [root], [], os.lstat(root).st_dev
    try:
        while stack:
            d = stack.pop()
            for entry in os.scandir(d):
                if entry.stat(follow_symlinks=False).st_dev != dev:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    os.chmod(entry.path, 0o700)
                    stack.append(entry.path)
                    dirs.append(entry.path)
                else:
                    os.unlink(entry.path)
        for d in reversed(dirs):
            os.rmdir(d)
    except OSError as exc:
        raise CleanupError("scratch: %s" % exc.strerror) from None


def _run_stdio_case(job, code_obj, i, wfd):
    with open("in.txt", "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(_input(job, i))
    cpu0 = _cpu_of_children()
    t0 = _perf()
    pid = os.fork()
    if pid == 0:
        os._exit(_stdio_program(job, code_obj, wfd))
    _, st, ru = os.wait4(pid, 0)
    t = _perf() - t0
    try:
        end_descendants()
        if job.get("own_ipc"):
            remove_ipc_objects()
        failed = None
    except CleanupError as exc:
        failed = exc
    cpu = _cpu_of_children() - cpu0
    if os.WIFSIGNALED(st):
        sig = os.WTERMSIG(st)
        # SIGXFSZ is the output limit; any other signal (SIGKILL included: the program, or
        # something it started, can send it) is a crash, never a memory verdict — the memory
        # limit (RLIMIT_AS) shows as MemoryError (exit 101), which the judge knows fired
        result = "output" if sig == signal.SIGXFSZ else "error"
        err = "killed by signal %d (%s)" % (sig, _signal_name(sig))
    else:
        code = os.WEXITSTATUS(st)
        result = {0: "ok", 101: "memory", 102: "output"}.get(code, "error")
        err = "exit %d" % code
    out = None
    if result == "ok":
        with open("out.txt", "rb") as fh:
            out = fh.read(job["max_output"] + 1).decode("utf-8", "replace")
        lims = job.get("time_limits")   # this test's own limit (records.py), else the record's
        if cpu > (lims[i] if lims else job["time_limit_s"]):
            result, out, t = "timeout", None, cpu
            err = "CPU time of the test's processes (%.2f s) over the limit" % cpu
    try:
        empty_scratch()
    except CleanupError as exc:
        failed = failed or exc
    if failed is not None:
        result, out, err = "error", None, "after the test: %s" % failed
    _send(wfd, "T", {"i": i, "st": result, "out": out, "t": t, "m": ru.ru_maxrss / 1024.0,
                     "e": None if result == "ok" else err})
    if failed is not None:
        raise failed


def _signal_name(sig):
    try:
        return signal.Signals(sig).name
    except ValueError:
        return "unknown"


def _stdio_program(job, code_obj, wfd):
    """In the grandchild: run the program on in.txt -> out.txt; returns the exit status."""
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (job["max_output"], job["max_output"]))
        fd_in = os.open("in.txt", os.O_RDONLY)
        fd_out = os.open("out.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd_in, 0)
        os.dup2(fd_out, 1)
        os.close(fd_in)
        os.close(fd_out)
        for fd in (wfd, job.get("nonce_fd"), job.get("input_fd")):
            if fd is not None:
                os.close(fd)
        stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)))
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
        sys.stdout = stdout
        status = _exec_program(code_obj)
        status = _end_like_python(status)
        for f in (sys.stdout, stdout):
            if f is not None and not getattr(f, "closed", True):
                f.flush()
        return status
    except MemoryError:
        return 101
    except OSError:
        return 102  # flush failed: the output limit (EFBIG)
    except BaseException:
        return 1


def _exec_program(code_obj):
    try:
        exec(code_obj, _program_module("__main__").__dict__)
        return 0
    except SystemExit as exc:
        return 0 if exc.code in (None, 0) else 1
    except MemoryError:
        return 101
    except BaseException:
        return 1


def _end_like_python(status):
    """What the interpreter does at exit: join non-daemon threads, run atexit handlers."""
    threading = sys.modules.get("threading")
    if threading is not None:
        me = threading.current_thread()
        for t in threading.enumerate():
            if t is not me and not t.daemon:
                t.join()
    try:
        import atexit
        atexit._run_exitfuncs()
    except SystemExit as exc:
        status = status or (0 if exc.code in (None, 0) else 1)
    return status


# ---- script ---------------------------------------------------------------------------------
class _SafeCompare(ast.NodeTransformer):
    """assert a == b  ->  assert __judge_eq__(a, b)   (and != to `not`)."""

    def visit_Assert(self, node):
        node.test = _EqRewriter().visit(node.test)
        return node


class _EqRewriter(ast.NodeTransformer):
    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            return node
        call = ast.Call(func=ast.Name("__judge_eq__", ast.Load()),
                        args=[node.left, node.comparators[0]], keywords=[])
        new = call if isinstance(node.ops[0], ast.Eq) else ast.UnaryOp(ast.Not(), call)
        return ast.copy_location(new, node)


# Compiled before the submission runs, into a namespace of its own.
_EQ_SRC = """
def __judge_eq__(a, b):
    def plain(x, depth=0):
        t = type(x)
        if depth > 100:
            return False
        if t in (list, tuple, set, frozenset):
            return all(plain(v, depth + 1) for v in x)
        if t is dict:
            return all(plain(k, depth + 1) and plain(v, depth + 1) for k, v in x.items())
        return t in (int, float, complex, str, bytes, bool, type(None))

    def norm(x):
        t = type(x)
        if t.__module__.startswith("numpy") and getattr(x, "shape", None) == ():
            return x.item()
        if t.__module__ == "collections" and isinstance(x, dict):
            return dict(x)  # Counter/OrderedDict/defaultdict compare as the dict they are
        return x

    a, b = norm(a), norm(b)
    pa, pb = plain(a), plain(b)
    if pa != pb:
        return False  # an object with its own __eq__ never equals a plain value
    return a == b
"""

_PLAIN = (int, float, complex, str, bytes, bool, type(None))


def _user_class(cls, g):
    """Whether cls (or a base) was defined by the submission (its module or its functions)."""
    for c in type.__getattribute__(cls, "__mro__"):
        if c.__module__ in ("__main__", "solution"):
            return True
        for v in type.__getattribute__(c, "__dict__").values():
            if type(v) is types.FunctionType and (v.__globals__ is g
                                                  or v.__code__.co_filename == "<submission>"):
                return True
    return False


def _plainify(x, g, depth=0):
    """A candidate's return value as the tests should see it (see the module docstring)."""
    t = type(x)
    if t in _PLAIN:
        return x
    if depth > 100:
        return codec.Opaque("too deep", "")
    d = depth + 1
    if t in (list, tuple, set, frozenset):
        return t(_plainify(v, g, d) for v in x)
    if t is dict:
        return {_plainify(k, g, d): _plainify(v, g, d) for k, v in x.items()}
    if issubclass(t, int):   # via the base type's own methods: overrides are not called
        return int.__index__(x)
    if issubclass(t, float):
        return float.__float__(x)
    if issubclass(t, complex):
        return complex.__complex__(x)
    if issubclass(t, str):
        return str.__str__(x)
    if issubclass(t, bytes):
        return bytes(memoryview(x))
    for base in (tuple, list, set, frozenset):
        if issubclass(t, base):
            return base(_plainify(v, g, d) for v in base.__iter__(x))
    rebuild = _COLLECTIONS.get(t)
    if rebuild is not None:  # the standard library's own container types keep their type
        return rebuild(x, lambda v: _plainify(v, g, d))
    if issubclass(t, dict):
        return {_plainify(k, g, d): _plainify(v, g, d) for k, v in dict.items(x)}
    if _user_class(t, g):
        return codec.Opaque(t.__name__, "")
    return x


import unittest  # noqa: E402  (preloaded by zygote.py anyway)

_SKIP = unittest.SkipTest
_UNITTEST_TYPES = (unittest.TestCase, unittest.TestResult, unittest.TestSuite,
                   unittest.TextTestRunner)


def _collections():
    import collections as c
    pairs = lambda x, p: [(p(k), p(v)) for k, v in dict.items(x)]  # noqa: E731
    return {c.Counter: lambda x, p: c.Counter(dict(pairs(x, p))),
            c.OrderedDict: lambda x, p: c.OrderedDict(pairs(x, p)),
            c.defaultdict: lambda x, p: c.defaultdict(x.default_factory, pairs(x, p)),
            c.deque: lambda x, p: c.deque([p(v) for v in c.deque.__iter__(x)], x.maxlen)}


_COLLECTIONS = _collections()


class Tampered(BaseException):
    """Raised into the tests when a candidate call left a trace/profile hook behind."""


def _wrap(fn, g, guard):
    """The candidate the tests call: plain return values, interpreter state restored after
    (to the state at the call: the tests' own patches, mock.patch included, stay)."""
    def candidate(*args, **kwargs):
        frame = sys._getframe(1)
        caller = frame.f_globals
        saved = dict(caller)
        running = _unittest_objects(frame)
        before = guard.before()
        try:
            out = fn(*args, **kwargs)
        except _SKIP as exc:  # a skip raised by the submission is not the test's skip
            raise RuntimeError("the submission raised %s" % type(exc).__name__) from None
        finally:
            guard(caller, saved, before)
            for d, copy in running:
                _restore_dict(d, copy)
        return _plainify(out, g)
    candidate.__name__ = getattr(fn, "__name__", "candidate")
    return candidate


def _unittest_objects(frame):
    """The running unittest objects on the stack (the TestCase, its result, suite, runner)
    and a copy of their attributes: a candidate call must not change them."""
    out, seen = [], set()
    while frame is not None:
        for v in frame.f_locals.values():
            if isinstance(v, _UNITTEST_TYPES) and id(v) not in seen:
                d = getattr(v, "__dict__", None)
                if type(d) is dict:
                    seen.add(id(v))
                    out.append((d, dict(d)))
        frame = frame.f_back
    return out


FULL_GUARD_CALLS = 16


def _guard(snap, gettrace=sys.gettrace, getprofile=sys.getprofile, settrace=sys.settrace,
           setprofile=sys.setprofile):
    """After each candidate call: restore builtins, this module and the calling test's
    namespace (and, for the first FULL_GUARD_CALLS calls, every preloaded module, class and
    function: that costs milliseconds); a trace or profile function left behind (a way to jump
    over asserts) fails the tests."""
    calls = [0]
    only = list(snap["modules"])

    def before():
        """The state to restore after this call: the tests may have patched things."""
        if calls[0] < FULL_GUARD_CALLS:
            pre = _snapshot(only, own=snap["own"])
        else:
            pre = {"builtins": dict(builtins.__dict__), "own": snap["own"]}
        pre["extra"] = snap.get("extra", ())
        return pre

    def guard(caller, saved, pre=None):
        hooked = gettrace() is not None or getprofile() is not None
        settrace(None)
        setprofile(None)
        calls[0] += 1
        _restore(pre or snap, full=calls[0] <= FULL_GUARD_CALLS and (pre is None or
                                                                     "modules" in pre))
        _restore_dict(caller, saved)
        if hooked:
            raise Tampered("the submission installed a trace or profile function")
    guard.before = before
    return guard


_SNAPSHOT = []


def prepare():
    """In the worker, once, after it loaded what it preloads: the state script tests restore
    (taken here, not per child, because it costs tens of milliseconds)."""
    _SNAPSHOT[:] = [_snapshot()]


def _snapshot(only=None, own=None):
    """The interpreter state the tests rely on, taken before the submission runs (or before a
    candidate call, for the modules `only`)."""
    funcs, classes, modules = [], [], {}
    items = list(sys.modules.items()) if only is None else \
        [(n, sys.modules[n]) for n in only if n in sys.modules]
    for name, m in items:
        d = getattr(m, "__dict__", None)
        if type(d) is not dict:
            continue
        modules[name] = (m, dict(d))
        for v in list(d.values()):
            if type(v) is types.FunctionType:
                funcs.append((v, v.__code__, v.__defaults__, v.__kwdefaults__))
            elif isinstance(v, type) and getattr(v, "__module__", None) == name:
                cd = dict(v.__dict__)
                classes.append((v, cd))
                funcs += [(f, f.__code__, f.__defaults__, f.__kwdefaults__)
                          for f in cd.values() if type(f) is types.FunctionType]
    cells = []
    for f, _, _, _ in funcs:   # closure cells (a decorator's wrapped method, say)
        for c in f.__closure__ or ():
            try:
                cells.append((c, c.cell_contents))
            except ValueError:   # an empty cell
                pass
    if own is None:
        g = globals()
        own = (g, dict(g), [(f, f.__code__, f.__defaults__, f.__kwdefaults__)
                            for f in g.values() if type(f) is types.FunctionType])
    return {"builtins": dict(builtins.__dict__), "modules": modules, "classes": classes,
            "funcs": funcs, "cells": cells, "own": own}


def _restore_dict(d, saved):
    for k in [k for k in d if k not in saved]:
        del d[k]
    for k, v in saved.items():
        if d.get(k, d) is not v:
            d[k] = v


_NOT_RESTORED = ("__main__", "builtins", "harness", "codec", "limits", "zygote")


def _restore(snap, full=True):
    """Undo what the submission did to this module and builtins, and (full) to the modules
    loaded before it, their classes and functions. (Modules it imported itself are left alone:
    re-importing them would give the tests classes other than those of the submission's values.)"""
    own, saved_own, mine = snap["own"]   # first, with no call: this module's own functions
    for f, code, defaults, kwdefaults in mine:
        f.__code__, f.__defaults__, f.__kwdefaults__ = code, defaults, kwdefaults
    for k in [k for k in own if k not in saved_own]:
        del own[k]
    own.update(saved_own)
    _restore_dict(builtins.__dict__, snap["builtins"])
    for f, code, defaults, kwdefaults in snap.get("extra", ()):
        f.__code__, f.__defaults__, f.__kwdefaults__ = code, defaults, kwdefaults
    if not full:
        return
    modules = snap["modules"]
    for name, (m, saved) in modules.items():
        if name not in _NOT_RESTORED:
            sys.modules[name] = m
            d = m.__dict__
            for k in [k for k in d if k not in saved]:
                # a submodule imported since (import urllib.request sets urllib.request) stays
                if not (isinstance(d[k], types.ModuleType)
                        and sys.modules.get(name + "." + k) is d[k]):
                    del d[k]
            for k, v in saved.items():
                if d.get(k, d) is not v:
                    d[k] = v
    for cls, saved in snap["classes"]:
        for k in [k for k in cls.__dict__ if k not in saved]:
            try:
                delattr(cls, k)
            except (AttributeError, TypeError):
                pass
        for k, v in saved.items():
            if cls.__dict__.get(k, saved) is not v:
                try:
                    setattr(cls, k, v)
                except (AttributeError, TypeError):
                    pass
    for f, code, defaults, kwdefaults in snap["funcs"]:
        if f.__code__ is not code:
            f.__code__ = code
        f.__defaults__, f.__kwdefaults__ = defaults, kwdefaults
    for cell, value in snap.get("cells", ()):
        if cell.cell_contents is not value:
            cell.cell_contents = value


def _test_namespace(g, entry_point, guard, wrap=_wrap):
    ns = {"__name__": "__main__", "__builtins__": builtins}
    if entry_point is not None:
        names = [entry_point] if entry_point in g else []
    else:
        names = [k for k in g if not k.startswith("__") and k not in builtins.__dict__]
    for k in names:
        v = g[k]
        if type(v) is types.FunctionType:
            ns[k] = wrap(v, g, guard)
        elif isinstance(v, (type, types.ModuleType)) or _library_callable(v, g):
            ns[k] = v   # a module is the real one (restored if preloaded); classes as they are
        else:
            # any other object is shared only as the plain value it is: a namespace of the
            # submission's own making (json = SimpleNamespace(loads=...)) would answer for it
            p = _plainify(v, g)
            ns[k] = p if _is_plain(p) else codec.Opaque(type(v).__name__, "")
    return ns


def _library_callable(v, g):
    """A builtin function or a library's bound method (`from random import randint`)."""
    t = type(v)
    if t in (types.BuiltinFunctionType, types.BuiltinMethodType):
        owner = getattr(v, "__self__", None)
        return owner is None or isinstance(owner, types.ModuleType) \
            or not _user_class(type(owner), g)
    if t is types.MethodType:
        f = v.__func__
        return type(f) is types.FunctionType and f.__code__.co_filename != "<submission>" \
            and f.__globals__ is not g and not _user_class(type(v.__self__), g)
    return False


def _is_plain(x, depth=0):
    t = type(x)
    if t in _PLAIN or t in _COLLECTIONS:
        return True
    if depth > 100:
        return False
    if t in (list, tuple, set, frozenset):
        return all(_is_plain(v, depth + 1) for v in x)
    if t is dict:
        return all(_is_plain(k, depth + 1) and _is_plain(v, depth + 1) for k, v in x.items())
    return False


def _run_script(job, code_obj, wfd):
    if job.get("separate"):
        _run_script_separate(job, code_obj, wfd)
    else:
        _run_script_inline(job, code_obj, wfd)


def _run_script_inline(job, code_obj, wfd):
    # every name used after the submission ran is bound here, before it runs (frames and
    # module globals are reachable from the submission; these locals are not writable)
    t0, read, write, peak, send, perf, status_of = (_perf(), os.read, os.write, _peak_mb, _send,
                                                    _perf, _status_of)
    assertion, nonce_fd, restore, namespace = AssertionError, job["nonce_fd"], _restore, \
        _test_namespace
    try:
        tree = ast.fix_missing_locations(_SafeCompare().visit(ast.parse(_script_text(job))))
        tests = compile(tree, "<tests>", "exec")
    except BaseException as exc:
        send(wfd, "X", {"st": "error", "e": "test script: %s" % type(exc).__name__})
        return
    helper = {"__builtins__": builtins}
    exec(_EQ_SRC, helper)
    eq = helper["__judge_eq__"]
    g = _program_module("__main__").__dict__
    snap = dict(_SNAPSHOT[0]) if _SNAPSHOT else _snapshot()
    snap["extra"] = [(eq, eq.__code__, eq.__defaults__, eq.__kwdefaults__)]
    guard = _guard(snap)
    try:
        exec(code_obj, g)
    except BaseException as exc:  # SystemExit included: not running to the end is a failure
        send(wfd, "X", {"st": status_of(exc), "e": type(exc).__name__})
        return
    try:
        restore(snap)
        guard({}, {})
    except BaseException as exc:
        send(wfd, "X", {"st": "error", "e": type(exc).__name__})
        return
    send(wfd, "S")
    try:
        ns = namespace(g, job.get("entry_point"), guard)
        ns["__judge_eq__"] = eq
        exec(tests, ns)
    except BaseException as exc:
        st = "wrong" if isinstance(exc, assertion) else status_of(exc)
        send(wfd, "T", {"i": 0, "st": st, "t": perf() - t0, "m": peak(), "e": type(exc).__name__})
        return
    t = perf() - t0
    write(wfd, b"R\n")
    nonce = read(nonce_fd, 64).decode()
    send(wfd, "T", {"i": 0, "st": "ok", "out": nonce, "t": t, "m": peak()})


# ---- script tests in a process of their own ---------------------------------------------------
PR_SET_DUMPABLE = 4


def _frame_write(fd, obj, dumps=_dumps, write=os.write, length=len, as_bytes=int.to_bytes):
    data = dumps(obj).encode()   # names bound at import: a submission's patches do not reach
    data = as_bytes(length(data), 8, "little") + data
    while data:
        data = data[write(fd, data):]


def _frame_read(fd, read=os.read, loads=json.loads, from_bytes=int.from_bytes, length=len):
    """One length-prefixed JSON message (None at EOF); raises ValueError on garbage."""
    def exact(n):
        parts = []
        while n > 0:
            chunk = read(fd, n if n < (1 << 20) else (1 << 20))
            if not chunk:
                return None
            parts.append(chunk)
            n -= length(chunk)
        return b"".join(parts)
    head = exact(8)
    if head is None:
        return None
    body = exact(from_bytes(head, "little"))
    if body is None:
        return None
    return loads(body)


def _submission_server(code_obj, req, rep, encode=codec.encode, decode=codec.decode,
                       write=_frame_write, read=_frame_read, name_of=type, handle=codec.Handle):
    """In the submission's process (forked before the test script was read): load it, then
    answer requests until EOF (never returns). The first request names what the test script
    uses (["names", [name...]]) and is answered with each one's kind; then
    ["call", target, name, args, kwargs]   a function (target None) or a method of object target
    ["new", None, class, args, kwargs]     an instance of the submission's class -> a handle
    ["get", target, name, None, None]      a global's / an attribute's value (a handle for an
                                           object of the submission, "callable" for a method)
    ["set", target, name, [value], None]   sets an attribute of an object the test holds.
    Objects of the submission's classes never cross: they stay here, the test holds handles."""
    os.setpgid(0, 0)
    g = _program_module("__main__").__dict__
    try:
        exec(code_obj, g)
    except BaseException as exc:
        write(rep, ["fail", _status_of(exc), name_of(exc).__name__])
        os._exit(1)
    objects = []

    def export(x, depth=0):
        t = name_of(x)
        if t in _PLAIN or depth > 100:
            return x
        if t in (list, tuple, set, frozenset):
            return t(export(v, depth + 1) for v in x)
        if t is dict:
            return {export(k, depth + 1): export(v, depth + 1) for k, v in x.items()}
        if not isinstance(x, _VALUES) and (getattr(t, "__module__", None) == "__main__"
                                           or _lazy_iterable(t)):
            objects.append(x)   # a range, generator, map, dict view...: iterable by the tests
            return handle(len(objects) - 1)
        return x

    def imp(x, depth=0):
        t = name_of(x)
        if t is handle:
            return objects[x.n]
        if t in (list, tuple, set, frozenset) and depth < 100:
            return t(imp(v, depth + 1) for v in x)
        if t is dict and depth < 100:
            return {imp(k, depth + 1): imp(v, depth + 1) for k, v in x.items()}
        return x

    def kind(v):
        if isinstance(v, types.ModuleType):
            return "module:" + str(getattr(v, "__name__", ""))
        if isinstance(v, type):
            return "class" if getattr(v, "__module__", None) == "__main__" else "value"
        return "function" if callable(v) else "value"

    while True:
        msg = read(req)
        if msg is None:
            os._exit(0)
        op, target, name, args, kwargs = msg
        try:
            if op == "names":
                reply = ["ready", {k: kind(g[k]) for k in args if k in g}]
                write(rep, reply)
                continue
            owner = g if target is None else objects[target]
            if op == "get":
                v = owner[name] if target is None else getattr(owner, name)
                if target is not None and callable(v) and not isinstance(v, type) \
                        and getattr(name_of(v), "__module__", None) != "__main__":
                    reply = ["callable"]
                else:
                    reply = ["ok", encode(export(v))]
            elif op == "set":
                setattr(owner, name, imp(decode(args))[0])
                reply = ["ok", None]
            elif op == "iter":   # the items of an object the tests iterate over, bounded
                items = list(islice(iter(owner), MAX_ITEMS + 1))
                if len(items) > MAX_ITEMS:
                    raise MemoryError("more than %d items" % MAX_ITEMS)
                reply = ["ok", encode(export(items))]
            elif op == "len":
                reply = ["ok", len(owner)]
            elif op == "bool":
                reply = ["ok", bool(owner)]
            elif op == "getitem":
                reply = ["ok", encode(export(owner[imp(decode(args))[0]]))]
            else:
                args, kwargs = imp(decode(args)), imp(decode(kwargs))
                fn = g[name] if target is None else getattr(owner, name)
                reply = ["ok", encode(export(fn(*args, **kwargs)))]
        except BaseException as exc:
            reply = ["raise", _builtin_exception_name(name_of(exc)), "%.200s" % (exc,)]
        write(rep, reply)


_VALUES = (int, float, complex, str, bytes, tuple, list, dict, set, frozenset)
MAX_ITEMS = 1_000_000   # items of one iterated object that cross to the tests


def _lazy_iterable(t, mro=type.__dict__["__mro__"].__get__):
    """A non-plain type whose objects can be iterated (range, generators, map/filter/zip,
    dict views, iterators, numpy arrays...): such a return value stays in the submission's
    process behind a handle the tests can iterate, take the length of and index (a correct
    `return range(n)` for `assert list(f(3)) == [0, 1, 2]`), and still equals no plain value."""
    return any("__iter__" in c.__dict__ for c in mro(t) if c is not object)


def _builtin_exception_name(t, mro=type.__dict__["__mro__"].__get__,
                            name=type.__dict__["__name__"].__get__, table=builtins.__dict__):
    """The name of the nearest builtin class in exception type t's MRO: what crosses to the
    tests. A user class merely *named* like a builtin (class ValueError(Exception)) arrives as
    its real builtin base (Exception), a user subclass of KeyError as KeyError."""
    for c in mro(t):
        if table.get(name(c)) is c:
            return name(c)
    return "BaseException"


class _CandidateError(Exception):
    """The submission raised an exception that is not a builtin one, or broke the protocol."""


class _Channel:
    """The test runner's end of the pipes to the submission's process."""

    def __init__(self, req, rep):
        self.req, self.rep = req, rep

    def ask(self, op, target, name, args=None, kwargs=None):
        """One request; the raw reply (a list), or _CandidateError."""
        _frame_write(self.req, [op, target, name, codec.encode(_export_remote(args)),
                                codec.encode(_export_remote(kwargs))])
        try:
            reply = _frame_read(self.rep)
        except (ValueError, RecursionError, MemoryError) as exc:
            raise _CandidateError("bad reply from the submission: %s" % type(exc).__name__)
        if not isinstance(reply, list) or not reply:
            raise _CandidateError("the submission process ended")
        return reply

    def value(self, reply):
        """The plain value of an ["ok", v] reply (handles become Remote objects), or raise."""
        if reply[0] == "ok" and len(reply) == 2:
            return _import_remote(codec.decode(reply[1]), self)
        if reply[0] == "raise" and len(reply) == 3 and isinstance(reply[1], str):
            exc = getattr(builtins, reply[1], None)
            if isinstance(exc, type) and issubclass(exc, Exception):
                raise exc(reply[2])
            if reply[1] == "MemoryError":
                raise MemoryError()
            raise _CandidateError("%s: %s" % (reply[1], reply[2]))
        raise _CandidateError("bad reply from the submission")


class Remote:
    """An object of the submission's that lives in its process; the test holds this handle.
    Attribute reads, writes and method calls go to the submission's process as plain values."""

    def __init__(self, channel, handle):
        object.__setattr__(self, "_rc", (channel, handle))

    def __getattr__(self, name):
        channel, handle = object.__getattribute__(self, "_rc")
        reply = channel.ask("get", handle, name)
        if reply == ["callable"]:
            def call(*args, **kwargs):
                return channel.value(channel.ask("call", handle, name, list(args), kwargs))
            return call
        return channel.value(reply)

    def __setattr__(self, name, value):
        channel, handle = object.__getattribute__(self, "_rc")
        channel.value(channel.ask("set", handle, name, [value]))

    def __repr__(self):
        return "<submission object %d>" % object.__getattribute__(self, "_rc")[1]

    def _remote(self, op, args=None):
        channel, handle = object.__getattribute__(self, "_rc")
        return channel.value(channel.ask(op, handle, None, args))

    def __iter__(self):
        items = object.__getattribute__(self, "_remote")("iter")
        if type(items) is not list:
            raise _CandidateError("bad reply from the submission")
        return iter(items)

    def __len__(self):
        n = object.__getattribute__(self, "_remote")("len")
        if type(n) is not int:
            raise TypeError("len() of a submission object: not an int")
        return n

    def __getitem__(self, key):
        return object.__getattribute__(self, "_remote")("getitem", [key])

    def __bool__(self):
        return object.__getattribute__(self, "_remote")("bool") is True


def _export_remote(x, depth=0):
    """Test-side values to send: Remote objects become their handles."""
    t = type(x)
    if t is Remote:
        return codec.Handle(object.__getattribute__(x, "_rc")[1])
    if depth > 100:
        return x
    if t in (list, tuple, set, frozenset):
        return t(_export_remote(v, depth + 1) for v in x)
    if t is dict:
        return {_export_remote(k, depth + 1): _export_remote(v, depth + 1) for k, v in x.items()}
    return x


def _import_remote(x, channel, depth=0):
    """Received values: handles become Remote objects."""
    t = type(x)
    if t is codec.Handle:
        return Remote(channel, x.n)
    if depth > 100:
        return x
    if t in (list, tuple, set, frozenset):
        return t(_import_remote(v, channel, depth + 1) for v in x)
    if t is dict:
        return {_import_remote(k, channel, depth + 1): _import_remote(v, channel, depth + 1)
                for k, v in x.items()}
    return x


def _proxy(name, channel):
    def candidate(*args, **kwargs):
        return channel.value(channel.ask("call", None, name, list(args), kwargs))
    candidate.__name__ = name
    return candidate


def _proxy_class(name, channel):
    """A stand-in for a class of the submission: calling it makes an instance there."""
    def make(*args, **kwargs):
        return channel.value(channel.ask("new", None, name, list(args), kwargs))
    make.__name__ = name
    return make


def _free_names(tree):
    """Names the test script reads but never binds (anywhere): what it takes from the
    submission. Derived from the script itself, never from what the submission announces."""
    loaded, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    return sorted(n for n in loaded - bound if not n.startswith("__"))


def _script_text(job):
    off, n = job["script_at"]
    parts = []
    while n > 0:
        chunk = os.pread(job["input_fd"], n, off)
        if not chunk:
            break
        parts.append(chunk)
        off, n = off + len(chunk), n - len(chunk)
    return b"".join(parts).decode("utf-8", "surrogatepass")


def _run_script_separate(job, code_obj, wfd):
    """The test script runs in this process, which never runs submission code; each call of
    the candidate goes to the submission's own process with plain (codec) values both ways.
    That process is forked before the script is read (it never holds it), and what is shared
    with it is decided here: the script's free names that are not builtins, plus the record's
    entry point (which alone may shadow a builtin)."""
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # not ptrace-able, /proc/self closed
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # what the submission starts stays below
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        for fd in (wfd, job.get("nonce_fd"), job.get("input_fd"), req_w, rep_r):
            if fd is not None:
                os.close(fd)
        job.clear()
        try:
            _submission_server(code_obj, req_r, rep_w)
        finally:
            os._exit(1)
    os.close(req_r)
    os.close(rep_w)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a dead submission process: EPIPE, not death
    t0 = _perf()
    ep = job.get("entry_point")
    helper = {"__builtins__": builtins}
    exec(_EQ_SRC, helper)
    ns = {"__name__": "__main__", "__builtins__": builtins, "__judge_eq__": helper["__judge_eq__"]}
    try:
        _problem_definitions(job.get("helpers"), ep, ns)
    except BaseException as exc:
        _end_child(pid)
        _send(wfd, "X", {"st": "error", "e": "problem helpers: %s" % type(exc).__name__})
        return
    try:
        tree = ast.parse(_script_text(job))
        free = _free_names(tree)
        _standard_modules(free, ep, ns)
        wanted = [n for n in free if n not in builtins.__dict__ and n not in ns]
        if ep and ep not in wanted:
            wanted.append(ep)
        tests = compile(ast.fix_missing_locations(_SafeCompare().visit(tree)), "<tests>", "exec")
    except BaseException as exc:
        _end_child(pid)
        _send(wfd, "X", {"st": "error", "e": "test script: %s" % type(exc).__name__})
        return
    channel = _Channel(req_w, rep_r)
    try:
        first = channel.ask("names", None, None, wanted)
    except (_CandidateError, OSError):
        first = None
    if not (isinstance(first, list) and len(first) == 2 and first[0] == "ready"
            and isinstance(first[1], dict)):
        st, err = "error", "the submission did not load"
        try:
            if first is None:
                first = _frame_read(rep_r)
        except (ValueError, RecursionError, MemoryError, OSError):
            first = None
        if isinstance(first, list) and len(first) == 3 and first[0] == "fail":
            st, err = ("memory" if first[1] == "memory" else "error"), str(first[2])[:100]
        _send(wfd, "X", {"st": st, "e": err})
        _end_child(pid)
        return
    _send(wfd, "S")
    try:
        for name in wanted:
            _share(ns, name, first[1].get(name), channel)
        exec(tests, ns)
        ok = True
    except BaseException as exc:
        ok, st, err = False, "wrong" if isinstance(exc, AssertionError) else _status_of(exc), \
            type(exc).__name__
    t = _perf() - t0
    os.close(req_w)
    _end_child(pid)
    if not ok:
        _send(wfd, "T", {"i": 0, "st": st, "t": t, "m": _peak_mb(), "e": err})
        return
    os.write(wfd, b"R\n")
    nonce = os.read(job["nonce_fd"], 64).decode()
    _send(wfd, "T", {"i": 0, "st": "ok", "out": nonce, "t": t, "m": _peak_mb()})


def _problem_definitions(source, entry_point, ns):
    """Run the problem's own code (record field tests.helpers, e.g. HumanEval's prompt) in the
    tests' namespace, its entry point's definition left out: the names it defines (HumanEval/38's
    encode_cyclic, /50's encode_shift, /32's poly) are then the problem's, and the tests never
    take them from the submission, which supplies only its entry point (and, in its own process,
    whatever the entry point calls). Trusted code: the record's, run in this process."""
    if not source:
        return
    tree = ast.parse(source)
    tree.body = [node for node in tree.body
                 if not (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                         and node.name == entry_point)]
    exec(compile(tree, "<problem>", "exec"), ns)


def _share(ns, name, kind, channel):
    """Bind a name the tests take from the submission, by the kind its process reports (a
    wrong report only breaks the submission's own tests)."""
    if kind == "function":
        ns[name] = _proxy(name, channel)
    elif kind == "class":
        ns[name] = _proxy_class(name, channel)
    elif kind == "value":
        ns[name] = channel.value(channel.ask("get", None, name))
    elif isinstance(kind, str) and kind == "module:" + name and name in sys.stdlib_module_names:
        ns[name] = __import__(name)   # (standard_modules already bound these: kept for safety)


def _standard_modules(free, entry_point, ns):
    """A free name of the tests that names a standard-library module (MBPP/596 calls
    `sys.getsizeof` without importing sys) is that module, imported here by the test process:
    never taken from the submission, whose `sys = FakeSys()` would otherwise answer the
    test's own questions. A module that cannot be imported stays unbound (a NameError, as in
    a plain run without the import)."""
    for name in free:
        if name in sys.stdlib_module_names and name != entry_point and name not in ns:
            try:
                ns[name] = __import__(name)
            except BaseException:
                pass


def _end_child(pid):
    """Kill the submission's process and everything it started, and wait until all of them
    are gone (a pool worker still dying must not be seen by the nonce's lone-process check)."""
    for target in (-pid, pid):
        try:
            os.kill(target, 9)
        except OSError:
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    end_descendants()
