"""The in-sandbox harness: runs one submission's tests inside the sandboxed child process.

zygote.py forks a child, confines it (limits.confine), then calls

    run(job, todo, wfd)

which executes the submission and the tests listed in `todo` (indices, in that order) and
writes one line per event to the pipe `wfd`:
    S\\n                                        the submission was loaded
    X {"st": "syntax"|"error"|"memory", "e"}   loading failed (every remaining test fails so)
    T {"i", "st", "out", "t", "m", "e"}        test i finished: st in ok|error|memory|output
                                               (|wrong: a failed assert in a script test)

Kinds: "call" runs every case in this process (one call per case, fresh arguments, return
values encoded with codec.py — the judge compares them, the expected values never enter the
sandbox); "stdio" forks one grandchild per case with the input file on fd 0 and a size-capped
output file on fd 1 (so `open(0)`, `sys.stdin.buffer` and `os.write(1, ..)` all work);
"script" runs the submission, restores the builtins it may have patched, then runs the test
script with `==`/`!=` in its assert statements rewritten to a comparison that ignores
user-defined __eq__ on one side, and finally reports a nonce it reads from a pipe only then.

Everything here runs with the submission's privileges and can be tampered with by it: the
judge trusts nothing from this file except call/stdio outputs *as data*. Timing and memory
figures are self-reported (a hostile submission could falsify its own). Only the standard
library is imported; this file does not enforce any limit (zygote.py and limits.py do).
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


def run(job, todo, wfd):
    kind = job["kind"]
    for name in ("codec", "harness", "limits"):  # not importable by the submission
        sys.modules.pop(name, None)
    main = types.ModuleType("__main__")  # the worker's own __main__ is not reachable either
    sys.modules["__main__"] = main
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
    saved = dict(builtins.__dict__)
    g = main.__dict__
    g.update(__name__="__main__" if kind == "script" else "solution", __builtins__=builtins)
    try:
        exec(code_obj, g)
    except BaseException as exc:  # SystemExit included: not running to the end is a failure
        _send(wfd, "X", {"st": _status_of(exc), "e": type(exc).__name__})
        return
    if kind == "script":
        builtins.__dict__.clear()
        builtins.__dict__.update(saved)
        _send(wfd, "S")
        _run_script(job, g, wfd)
    else:
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


def _run_calls(job, fn, todo, wfd):
    inputs, decode, encode, limit = job["inputs"], codec.decode, codec.encode, job["max_output"]
    for i in todo:
        args = decode(inputs[i])
        t0 = _perf()
        try:
            out = fn(*args)
            t = _perf() - t0
            msg = {"i": i, "st": "ok", "out": encode(out), "t": t, "m": _peak_mb()}
            data = _dumps(msg)
            if len(data) > limit:
                msg = {"i": i, "st": "output", "t": t, "m": _peak_mb(), "e": "output too large"}
                data = _dumps(msg)
        except BaseException as exc:
            msg = {"i": i, "st": _status_of(exc), "t": _perf() - t0, "m": _peak_mb(),
                   "e": type(exc).__name__}
            data = _dumps(msg)
        data = ("T " + data + "\n").encode()
        while data:
            data = data[os.write(wfd, data):]


def _run_stdio_case(job, code_obj, i, wfd):
    with open("in.txt", "w", encoding="utf-8") as fh:
        fh.write(job["inputs"][i])
    t0 = _perf()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            resource.setrlimit(resource.RLIMIT_FSIZE, (job["max_output"], job["max_output"]))
            fd_in = os.open("in.txt", os.O_RDONLY)
            fd_out = os.open("out.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd_in, 0)
            os.dup2(fd_out, 1)
            os.close(fd_in)
            os.close(fd_out)
            os.close(wfd)
            sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
            sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)))
            try:
                exec(code_obj, {"__name__": "__main__", "__builtins__": builtins})
                status = 0
            except SystemExit as exc:
                status = 0 if exc.code in (None, 0) else 1
            except MemoryError:
                status = 101
            except BaseException:
                status = 1
            sys.stdout.flush()
        except MemoryError:
            status = 101
        except OSError:
            status = 102  # flush failed: the output limit (EFBIG)
        except BaseException:
            status = 1
        os._exit(status)
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


# Compiled only after the submission ran (and builtins were restored), into a fresh namespace,
# so patching this module or its functions beforehand does not change what the script uses.
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


def _run_script(job, g, wfd):
    t0 = _perf()
    try:
        tree = ast.fix_missing_locations(_SafeCompare().visit(ast.parse(job["script"])))
        code = compile(tree, "<tests>", "exec")
        helper = {"__builtins__": builtins}
        exec(_EQ_SRC, helper)
        g["__judge_eq__"] = helper["__judge_eq__"]
        exec(code, g)
        nonce = os.read(job["nonce_fd"], 64).decode()
        _send(wfd, "T", {"i": 0, "st": "ok", "out": nonce, "t": _perf() - t0, "m": _peak_mb()})
    except BaseException as exc:
        st = "wrong" if isinstance(exc, AssertionError) else _status_of(exc)
        _send(wfd, "T", {"i": 0, "st": st, "t": _perf() - t0, "m": _peak_mb(),
                         "e": type(exc).__name__})
