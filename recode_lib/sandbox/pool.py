"""Warm worker processes (zygote.py) and the judge loop that drives one record through one.

    pool = get_pool(config, n)          # cached per config; workers start once and stay warm
    with pool.worker() as slot:        # slot[0] is the Worker (replaced if it dies)
        result = judge(spec, slot, pool, early_stop=False)

A Worker is a `python -I zygote.py` subprocess (never this process: forking the caller could
copy torch and the expected outputs into the sandbox). `judge` sends the job (inputs only),
turns each reported test into a status as it arrives (verdict.test_status), asks the worker
to stop at the first failure when early_stop is set, and summarises. A worker that dies is
replaced and the record retried once; tests still unresolved after that are runtime errors.
Pools are closed at interpreter exit. This module does not validate records (records.py).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

from recode_lib.sandbox import verdict

ZYGOTE = Path(__file__).with_name("zygote.py")
_T_INDEX = re.compile(r'^\{"i": (\d+),')


class WorkerDied(RuntimeError):
    """The worker process exited (or was killed) in the middle of a job."""


class Worker:
    def __init__(self, config):
        python = config.python or sys.executable
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        self.proc = subprocess.Popen([python, "-I", str(ZYGOTE)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, close_fds=True)
        self.job_id = 0
        self._write(config.worker_config())
        line = self.proc.stdout.readline()
        if not line.startswith(b"READY "):
            self.close()
            raise RuntimeError(f"sandbox worker failed to start (got {line[:200]!r}); "
                               "see its error output above")
        self.info = json.loads(line[6:])

    @property
    def mode(self) -> str:
        return self.info["mode"]

    def _write(self, obj) -> None:
        try:
            self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerDied(str(exc)) from None

    def run(self, job: dict, on_message) -> dict:
        """Send a job; call on_message(tag, text) per S/X/T line (a True return asks the worker
        to stop); return the final D message."""
        self.job_id += 1
        job["job"] = self.job_id
        self._write(job)
        stopped = False
        while True:
            line = self.proc.stdout.readline()
            if not line.endswith(b"\n"):
                raise WorkerDied(f"worker exited with status {self.proc.poll()}")
            tag, text = line[:1], line[2:-1].decode("utf-8", "replace")
            if tag == b"D":
                return json.loads(text)
            if on_message(tag.decode(), text) and not stopped:
                stopped = True
                self._write({"op": "stop", "job": self.job_id})

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Pool:
    def __init__(self, config, size: int):
        self.config, self.size = config, size
        self._idle: queue.Queue = queue.Queue()
        self._all: list[Worker] = []
        self._lock = threading.Lock()

    def _spawn(self) -> Worker:
        w = Worker(self.config)
        with self._lock:
            self._all.append(w)
        return w

    @contextlib.contextmanager
    def worker(self):
        try:
            w = self._idle.get_nowait()
        except queue.Empty:
            w = self._spawn()
        slot = [w]
        try:
            yield slot
        finally:
            w = slot[0]
            if w.alive():
                self._idle.put(w)
            else:
                self.discard(w)

    def discard(self, dead: Worker) -> None:
        dead.close()
        with self._lock:
            if dead in self._all:
                self._all.remove(dead)

    def close(self) -> None:
        with self._lock:
            workers, self._all = self._all, []
        for w in workers:
            w.close()


_POOLS: dict = {}
_POOLS_LOCK = threading.Lock()


def get_pool(config, size: int) -> Pool:
    with _POOLS_LOCK:
        pool = _POOLS.get(config)
        if pool is None:
            pool = _POOLS[config] = Pool(config, size)
        pool.size = max(pool.size, size)
        return pool


@atexit.register
def close_all() -> None:
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for p in pools:
        p.close()


def _num(x):
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 else None


def judge(spec, slot: list, pool: Pool, early_stop: bool = False) -> dict:
    """Execute one parsed record on a worker and return its result dict."""
    tests = [{"status": "skipped", "time_s": None, "memory_mb": None, "input_len": n}
             for n in spec.input_lens]
    if spec.no_code:
        for t in tests:
            t["status"] = "no_code"
        return {"id": spec.id, "status": "no_code", "outcome": "format_error", "passed": 0,
                "total": len(tests), "time_s": 0.0, "memory_mb": None, "tests": tests}
    script_msgs: list[dict] = []

    def on_message(tag: str, text: str) -> bool:
        if tag == "X":
            msg = json.loads(text)
            st = verdict.RAW.get(msg.get("st"), "runtime_error")
            for t in tests:
                if t["status"] == "skipped":
                    t["status"] = st
            return False
        if tag != "T":
            return False
        try:
            msg = json.loads(text)
            i = msg["i"]
        except (ValueError, KeyError, TypeError):
            m = _T_INDEX.match(text)
            if not m:
                return False
            msg, i = {"i": int(m.group(1)), "st": "error"}, int(m.group(1))
        if not isinstance(i, int) or not 0 <= i < len(tests) or tests[i]["status"] != "skipped":
            return False
        if spec.kind == "script":
            script_msgs.append(msg)
            return False
        st = verdict.test_status(spec, msg)
        tests[i].update(status=st, time_s=_num(msg.get("t")), memory_mb=_num(msg.get("m")))
        return early_stop and st != "passed"

    done = None
    for attempt in range(2):
        try:
            done = slot[0].run(dict(spec.job, early_stop=early_stop), on_message)
            break
        except WorkerDied:
            pool.discard(slot[0])
            slot[0] = pool._spawn()
            if attempt == 1:
                break
            for t in tests:
                t.update(status="skipped", time_s=None, memory_mb=None)
            script_msgs.clear()
    if done is None:
        for t in tests:
            if t["status"] == "skipped":
                t["status"] = "runtime_error"
        done = {}
    for msg in script_msgs:
        st = verdict.test_status(spec, msg, done.get("nonce"))
        tests[0].update(status=st, time_s=_num(msg.get("t")), memory_mb=_num(msg.get("m")))
    result = {"id": spec.id, **verdict.summarize(spec, tests), "tests": tests}
    peak = _num(done.get("peak_mb"))
    if peak is not None and (result["memory_mb"] is None or peak > result["memory_mb"]):
        result["memory_mb"] = round(peak, 2)
    return result
