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
"script" compiles the test script (with `==`/`!=` in asserts rewritten to a comparison that
ignores user-defined __eq__) and snapshots the interpreter state *before* the submission runs,
then after it restores builtins, this module, every module loaded before it (module dicts,
classes, function code; zygote.py preloads the standard-library modules tests use, and the
snapshot is taken there once) and runs the tests in their own namespace
(pristine builtins; only the entry point, or else the submission's names that do not shadow a
builtin, are shared) with the submission's functions wrapped so their return values come back
as plain built-in values (a user-defined class's instance becomes an opaque value equal to
nothing, builtin subclasses such as namedtuple become their base type); after every call,
builtins, this module and the test's namespace are restored again (everything else too for
the first FULL_GUARD_CALLS calls), and a trace/profile hook left behind fails the tests.
Without unittest/mock in the script (job["separate"]) the tests instead run in this process,
which never runs submission code; the submission runs in a child process that answers each
candidate call with codec-encoded plain values (that child is killed before the nonce is
asked for; this process is made non-dumpable, so the child cannot ptrace it or open its fds).

Residual risk (unittest-style script tests, in-process): a submission that writes raw protocol
lines to the pipe during its own call, or edits the harness through ctypes, can still forge a
pass; third-party modules (numpy, pandas) it patches stay patched for the tests, and a patch to
a preloaded module's class or function made during a call after the first FULL_GUARD_CALLS
calls is not undone. The judge trusts nothing from this file except
call/stdio outputs *as data*; timings and memory are self-reported. Only the standard library
is imported; this file does not enforce any limit (zygote.py and limits.py do).
"""

import ast
import builtins
import io
import json
import os
import resource
import sys
import time
import types

import codec

_perf = time.perf_counter
_dumps = json.dumps


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
        _send(wfd, "S")
        for i in todo:
            _run_stdio_case(job, code_obj, i, wfd)
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
def _run_stdio_case(job, code_obj, i, wfd):
    with open("in.txt", "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(_input(job, i))
    t0 = _perf()
    pid = os.fork()
    if pid == 0:
        os._exit(_stdio_program(job, code_obj, wfd))
    _, st, ru = os.wait4(pid, 0)
    t = _perf() - t0
    if os.WIFSIGNALED(st):
        sig = os.WTERMSIG(st)
        result = "output" if sig == 25 else ("memory" if sig == 9 else "error")
        err = "signal %d" % sig
    else:
        code = os.WEXITSTATUS(st)
        result = {0: "ok", 101: "memory", 102: "output"}.get(code, "error")
        err = "exit %d" % code
    out = None
    if result == "ok":
        with open("out.txt", "rb") as fh:
            out = fh.read(job["max_output"] + 1).decode("utf-8", "replace")
    _send(wfd, "T", {"i": i, "st": result, "out": out, "t": t, "m": ru.ru_maxrss / 1024.0,
                     "e": None if result == "ok" else err})


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


class _Opaque:
    """What the tests see instead of an instance of a class the submission defined."""

    __slots__ = ("type",)

    def __init__(self, name):
        self.type = name

    def __eq__(self, other):
        return False

    def __ne__(self, other):
        return True

    __hash__ = object.__hash__

    def __repr__(self):
        return "<opaque %s>" % self.type


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
        return _Opaque("too deep")
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
    if issubclass(t, dict):
        return {_plainify(k, g, d): _plainify(v, g, d) for k, v in dict.items(x)}
    if _user_class(t, g):
        return _Opaque(t.__name__)
    return x


class Tampered(BaseException):
    """Raised into the tests when a candidate call left a trace/profile hook behind."""


def _wrap(fn, g, guard):
    """The candidate the tests call: plain return values, interpreter state restored after."""
    def candidate(*args, **kwargs):
        caller = sys._getframe(1).f_globals
        saved = dict(caller)
        try:
            out = fn(*args, **kwargs)
        finally:
            guard(caller, saved)
        return _plainify(out, g)
    candidate.__name__ = getattr(fn, "__name__", "candidate")
    return candidate


FULL_GUARD_CALLS = 16


def _guard(snap, gettrace=sys.gettrace, getprofile=sys.getprofile, settrace=sys.settrace,
           setprofile=sys.setprofile):
    """After each candidate call: restore builtins, this module and the calling test's
    namespace (and, for the first FULL_GUARD_CALLS calls, every preloaded module, class and
    function: that costs milliseconds); a trace or profile function left behind (a way to jump
    over asserts) fails the tests."""
    calls = [0]

    def guard(caller, saved):
        hooked = gettrace() is not None or getprofile() is not None
        settrace(None)
        setprofile(None)
        calls[0] += 1
        _restore(snap, full=calls[0] <= FULL_GUARD_CALLS)
        _restore_dict(caller, saved)
        if hooked:
            raise Tampered("the submission installed a trace or profile function")
    return guard


_SNAPSHOT = []


def prepare():
    """In the worker, once, after it loaded what it preloads: the state script tests restore
    (taken here, not per child, because it costs tens of milliseconds)."""
    _SNAPSHOT[:] = [_snapshot()]


def _snapshot():
    """The interpreter state the tests rely on, taken before the submission runs."""
    funcs, classes, modules = [], [], {}
    for name, m in list(sys.modules.items()):
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
    own = globals()
    mine = [(f, f.__code__, f.__defaults__, f.__kwdefaults__) for f in own.values()
            if type(f) is types.FunctionType]
    return {"builtins": dict(builtins.__dict__), "modules": modules, "classes": classes,
            "funcs": funcs, "own": (own, dict(own), mine)}


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
    if not full:
        return
    modules = snap["modules"]
    for name, (m, saved) in modules.items():
        if name not in _NOT_RESTORED:
            sys.modules[name] = m
            _restore_dict(m.__dict__, saved)
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


def _test_namespace(g, entry_point, guard, wrap=_wrap):
    ns = {"__name__": "__main__", "__builtins__": builtins}
    if entry_point is not None:
        names = [entry_point] if entry_point in g else []
    else:
        names = [k for k in g if not k.startswith("__") and k not in builtins.__dict__]
    for k in names:
        v = g[k]
        ns[k] = wrap(v, g, guard) if type(v) is types.FunctionType else v
    return ns


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
        tree = ast.fix_missing_locations(_SafeCompare().visit(ast.parse(job["script"])))
        tests = compile(tree, "<tests>", "exec")
    except BaseException as exc:
        send(wfd, "X", {"st": "error", "e": "test script: %s" % type(exc).__name__})
        return
    helper = {"__builtins__": builtins}
    exec(_EQ_SRC, helper)
    eq = helper["__judge_eq__"]
    g = _program_module("__main__").__dict__
    snap = dict(_SNAPSHOT[0]) if _SNAPSHOT else _snapshot()
    snap["funcs"] = snap["funcs"] + [(eq, eq.__code__, eq.__defaults__, eq.__kwdefaults__)]
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


def _submission_server(code_obj, entry_point, req, rep, encode=codec.encode,
                       decode=codec.decode, write=_frame_write, read=_frame_read, name_of=type):
    """In the submission's process: load it, report its functions and classes, then answer
    requests until EOF (never returns): ["call", handle|None, name, args, kwargs] calls a
    function (handle None) or a method of an instance made by ["new", class, args, kwargs]."""
    os.setpgid(0, 0)
    g = _program_module("__main__").__dict__
    try:
        exec(code_obj, g)
    except BaseException as exc:
        write(rep, ["fail", _status_of(exc), name_of(exc).__name__])
        os._exit(1)
    funcs = [k for k, v in g.items() if type(v) is types.FunctionType and not k.startswith("__")
             and (entry_point is None or k == entry_point)]
    classes = [k for k, v in g.items() if isinstance(v, type) and not k.startswith("__")
               and getattr(v, "__module__", None) == "__main__" and entry_point is None]
    write(rep, ["ready", funcs, classes])
    objects = []
    while True:
        msg = read(req)
        if msg is None:
            os._exit(0)
        op, target, name, args, kwargs = msg
        try:
            args, kwargs = decode(args), decode(kwargs)
            if op == "new":
                objects.append(g[name](*args, **kwargs))
                reply = ["ok", len(objects) - 1]
            else:
                fn = g[name] if target is None else getattr(objects[target], name)
                reply = ["ok", encode(fn(*args, **kwargs))]
        except BaseException as exc:
            reply = ["raise", name_of(exc).__name__, "%.200s" % (exc,)]
        write(rep, reply)


class _CandidateError(Exception):
    """The submission raised an exception that is not a builtin one, or broke the protocol."""


def _remote(req, rep, op, target, name, args, kwargs):
    """One request to the submission's process; its plain answer or its exception."""
    _frame_write(req, [op, target, name, codec.encode(list(args)), codec.encode(dict(kwargs))])
    try:
        reply = _frame_read(rep)
    except (ValueError, RecursionError, MemoryError) as exc:
        raise _CandidateError("bad reply from the submission: %s" % type(exc).__name__)
    if not isinstance(reply, list) or not reply:
        raise _CandidateError("the submission process ended")
    if reply[0] == "ok" and len(reply) == 2:
        return codec.decode(reply[1])
    if reply[0] == "raise" and len(reply) == 3 and isinstance(reply[1], str):
        exc = getattr(builtins, reply[1], None)
        if isinstance(exc, type) and issubclass(exc, Exception):
            raise exc(reply[2])
        if reply[1] == "MemoryError":
            raise MemoryError()
        raise _CandidateError("%s: %s" % (reply[1], reply[2]))
    raise _CandidateError("bad reply from the submission")


def _proxy(name, req, rep):
    def candidate(*args, **kwargs):
        return _remote(req, rep, "call", None, name, args, kwargs)
    candidate.__name__ = name
    return candidate


def _proxy_class(name, req, rep):
    """A stand-in for a class of the submission: instances live in the submission's process;
    attribute access on them gives methods that are called there."""
    class Remote:
        def __init__(self, *args, **kwargs):
            handle = _remote(req, rep, "new", None, name, args, kwargs)
            if type(handle) is not int:
                raise _CandidateError("bad reply from the submission")
            object.__setattr__(self, "_handle", handle)

        def __getattr__(self, method):
            handle = object.__getattribute__(self, "_handle")

            def call(*args, **kwargs):
                return _remote(req, rep, "call", handle, method, args, kwargs)
            return call
    Remote.__name__ = Remote.__qualname__ = name
    return Remote


def _run_script_separate(job, code_obj, wfd):
    """The test script runs in this process, which never runs submission code; each call of
    the candidate goes to the submission's own process with plain (codec) values both ways."""
    try:
        tree = ast.fix_missing_locations(_SafeCompare().visit(ast.parse(job["script"])))
        tests = compile(tree, "<tests>", "exec")
    except BaseException as exc:
        _send(wfd, "X", {"st": "error", "e": "test script: %s" % type(exc).__name__})
        return
    import ctypes
    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # not ptrace-able, /proc/self closed
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        for fd in (wfd, job.get("nonce_fd"), job.get("input_fd"), req_w, rep_r):
            if fd is not None:
                os.close(fd)
        try:
            _submission_server(code_obj, job.get("entry_point"), req_r, rep_w)
        finally:
            os._exit(1)
    os.close(req_r)
    os.close(rep_w)
    t0 = _perf()
    try:
        first = _frame_read(rep_r)
    except (ValueError, RecursionError, MemoryError):
        first = None
    if not (isinstance(first, list) and len(first) == 3 and first[0] == "ready"
            and isinstance(first[1], list) and isinstance(first[2], list)):
        st, err = "error", "the submission did not load"
        if isinstance(first, list) and len(first) == 3 and first[0] == "fail":
            st, err = ("memory" if first[1] == "memory" else "error"), str(first[2])[:100]
        _send(wfd, "X", {"st": st, "e": err})
        _end_child(pid)
        return
    _send(wfd, "S")
    helper = {"__builtins__": builtins}
    exec(_EQ_SRC, helper)
    ns = {"__name__": "__main__", "__builtins__": builtins, "__judge_eq__": helper["__judge_eq__"]}
    for names, make in ((first[1], _proxy), (first[2], _proxy_class)):
        for name in names:
            if isinstance(name, str) and name.isidentifier() and name not in builtins.__dict__:
                ns[name] = make(name, req_w, rep_r)
    try:
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


def _end_child(pid):
    for target in (-pid, pid):
        try:
            os.kill(target, 9)
        except OSError:
            pass
    os.waitpid(pid, 0)
