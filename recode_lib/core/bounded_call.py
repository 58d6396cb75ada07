"""Calls bounded in time from any thread: a function runs in a reusable child process, which is
killed (SIGKILL) when the call overruns its bound.

    ok, why = bounded_call("recode_lib.core.math_answers:check_answer", [text, gold], timeout_s=20)
    # CallTimedOut after timeout_s (the child is killed); ChildDied when the child dies during
    # the call; ChildFailed (their base) when no child starts or the call raises in it

For trusted library code run on untrusted data whose own timeouts work only on the main thread
(math-verify's signal alarms): the bound holds from any thread, whatever the code does (a C
loop included), and the child's memory is its own. The target is named "module:function" and
imported by the child (`python -m recode_lib.core.bounded_call module:function`); arguments and
results travel as JSON lines (ASCII on the wire, lone surrogates included), so they are plain
JSON values (a tuple comes back a list). A child serves one call at a time; idle children are
kept for reuse, one per concurrent caller at most; the time a child takes to start is not part
of the bound. It does not sandbox: the code runs with the caller's rights.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

from recode_lib.core.errors import RecodeError

START_TIMEOUT_S = 120.0
READY = b"ready"
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding recode_lib


class CallTimedOut(RecodeError, TimeoutError):
    """The call overran its bound; its child was killed."""


class ChildFailed(RecodeError, RuntimeError):
    """The child did not start, or the call raised in it."""


class ChildDied(ChildFailed):
    """The child died during the call (killed, out of memory, crashed)."""


class Child:
    """One child process serving calls of one target, one line of JSON each way."""

    def __init__(self, target: str):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (PACKAGE_ROOT, env.get("PYTHONPATH", "")) if p
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", __name__, target],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.buf = b""
        line = self.read_line(START_TIMEOUT_S)
        if line != READY:
            self.kill()
            raise ChildFailed(f"the child for {target} did not start (it said {line!r:.200})")

    def read_line(self, timeout_s: float) -> bytes | None:
        """The next line without its newline; None at end of file; CallTimedOut past timeout_s."""
        deadline = time.monotonic() + timeout_s
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise CallTimedOut(f"no answer within {timeout_s:g} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def call(self, args: list, timeout_s: float):
        try:
            self.proc.stdin.write(json.dumps(args).encode("ascii") + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ChildFailed(f"the child is gone: {exc}") from None
        line = self.read_line(timeout_s)
        if line is None:
            raise ChildDied(f"the child died during the call (exit {self.proc.wait()})")
        reply = json.loads(line)
        if "error" in reply:
            raise ChildFailed(reply["error"])
        return reply["result"]

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            f.close()


IDLE: dict[str, list[Child]] = {}
LOCK = threading.Lock()


def bounded_call(target: str, args: list, *, timeout_s: float):
    """target(*args) in a child process; its result, or CallTimedOut after timeout_s (the child
    is killed), or ChildFailed. An idle child that died since its last call is replaced."""
    with LOCK:
        idle = IDLE.setdefault(target, [])
        child = idle.pop() if idle else None
    if child is not None and child.proc.poll() is not None:
        child.kill()
        child = None
    if child is None:
        child = Child(target)
    try:
        result = child.call(args, timeout_s)
    except CallTimedOut:
        child.kill()
        raise
    except ChildFailed:
        if child.proc.poll() is not None:
            child.kill()
        else:
            with LOCK:
                IDLE.setdefault(target, []).append(child)
        raise
    with LOCK:
        IDLE.setdefault(target, []).append(child)
    return result


@atexit.register
def stop_children() -> None:
    with LOCK:
        children = [c for cs in IDLE.values() for c in cs]
        IDLE.clear()
    for c in children:
        c.kill()


def serve(target: str) -> None:
    """The child's loop: one JSON list of arguments per stdin line, one reply per stdout line
    ({"result": ...} or {"error": "..."}). What the code prints goes to stderr."""
    module, _, name = target.partition(":")
    fn = getattr(importlib.import_module(module), name)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    out.write(READY + b"\n")
    out.flush()
    for line in sys.stdin.buffer:
        try:
            reply = json.dumps({"result": fn(*json.loads(line))})
        except Exception as exc:  # the caller gets it as ChildFailed
            reply = json.dumps({"error": f"{type(exc).__name__}: {exc}"[:500]})
        out.write(reply.encode("ascii") + b"\n")
        out.flush()


if __name__ == "__main__":
    serve(sys.argv[1])
