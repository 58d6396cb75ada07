"""One writer per output: an OS lock on a run folder or an output file, held while a command
writes it and released by the kernel when its process dies.

    with OutputLock("runs/smoke/05_codegen_eval"):        # a folder: its `.lock` file
        ...                                                # a second writer is refused at once
    with OutputLock("out.jsonl"):                          # a file: `.out.jsonl.lock` beside it
        ...
    with OutputLock(cache_file, wait=True):                # a shared cache: wait for the writer
        ...                                                # (then re-read what it wrote)

The lock is `flock(LOCK_EX | LOCK_NB)` on a small lock file that also records the holder (PID,
command line, host, start time). A second writer — another `recode sandbox --out` on the same
file, a second `recode eval --out` on the same folder — gets OutputLocked at once, naming the
holder's PID and command. flock locks belong to the open file, so a holder killed with -9 leaves
no lock behind: the next writer takes it over and says whose it was (the lock file's record of a
PID that no longer runs). Readers (reports, notebooks reading results) never lock. A cache
that any process may fill (`wait=True`: the HumanEval+/MBPP+ reference outputs) is waited for
instead of refused: the second process blocks until the first is done, then finds its work done.

What it does not do: lock across machines on filesystems whose flock is local only (some NFS
setups: two nodes writing one folder are not refused), or protect a file from a process that
does not take the lock (an editor, `cat >>`).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path

from recode_lib.core.errors import RecodeError


class OutputLocked(RecodeError, RuntimeError):
    """Another live process is writing this output; the message names its PID and command."""


def lock_path(target: str | os.PathLike, folder: bool | None = None) -> Path:
    """The lock file for a folder (`DIR/.lock`) or a file (`.NAME.lock` beside it); `folder`
    None: whatever `target` is now (a path that does not exist yet is a file)."""
    target = Path(target)
    if folder if folder is not None else target.is_dir():
        return target / ".lock"
    return target.parent / f".{target.name}.lock"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def read_holder(path: Path) -> dict:
    """The holder record a lock file carries ({} when unreadable or empty)."""
    try:
        rec = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return rec if isinstance(rec, dict) else {}


def describe(holder: dict) -> str:
    cmd = holder.get("command") or "an unknown command"
    host = holder.get("host")
    where = f" on {host}" if host and host != socket.gethostname() else ""
    return f"PID {holder.get('pid', '?')}{where} ({cmd})"


HELD: dict[str, int] = {}  # lock files this process holds -> nesting depth (re-entrant)


class OutputLock:
    """Exclusive writer lock on `target` (a folder or a file); a context manager.
    `folder=True` locks a folder that may not exist yet (it is created). `say(msg)` reports a
    takeover from a dead holder, or the wait (default: one line on stderr). `wait=True`: a
    held lock is waited for (one line says whose), not refused."""

    def __init__(
        self,
        target: str | os.PathLike,
        say=None,
        folder: bool | None = None,
        wait: bool = False,
    ):
        self.target = Path(target)
        self.path = lock_path(self.target, folder)
        self.say = say or (lambda msg: print(msg, file=sys.stderr))
        self.fd: int | None = None
        self.nested = False
        self.wait = wait

    def acquire(self) -> OutputLock:
        key = str(self.path.resolve())
        if key in HELD:  # this process writes it already (an evaluation inside a step)
            HELD[key] += 1
            self.nested = True
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = read_holder(self.path)
            if self.wait:
                self.say(f"{self.target}: waiting for {describe(holder)} to finish writing it")
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                except BaseException:
                    os.close(fd)
                    raise
                return self._held(fd, key)
            os.close(fd)
            raise OutputLocked(
                f"{self.target} is being written by {describe(holder)}: wait for it "
                f"to finish or stop it; two writers would duplicate records"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        return self._held(fd, key)

    def _held(self, fd: int, key: str) -> OutputLock:
        previous = read_holder(self.path)
        pid = previous.get("pid")
        if (
            isinstance(pid, int)
            and pid != os.getpid()
            and previous.get("host") == socket.gethostname()
            and not previous.get("released")
            and not pid_alive(pid)
        ):
            self.say(
                f"{self.target}: taking over from {describe(previous)}, which stopped "
                f"without finishing (killed?); finished records are kept, the rest is redone"
            )
        record = {
            "pid": os.getpid(),
            "command": " ".join(sys.argv) or sys.executable,
            "host": socket.gethostname(),
            "since": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode(), 0)
        self.fd = fd
        HELD[key] = 1
        return self

    def release(self) -> None:
        key = str(self.path.resolve())
        if self.nested:
            self.nested = False
            HELD[key] -= 1
            return
        if self.fd is None:
            return
        HELD.pop(key, None)
        fd, self.fd = self.fd, None
        try:  # a clean exit marks the record released (no takeover note)
            holder = read_holder(self.path)
            holder["released"] = True
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(holder).encode(), 0)
        except OSError:
            pass
        finally:
            os.close(fd)  # closing the descriptor drops the flock

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


__all__ = ["OutputLock", "OutputLocked", "describe", "lock_path", "pid_alive", "read_holder"]
