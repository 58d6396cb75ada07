"""Warm worker processes (zygote.py) and the judge loop that drives one record through one.

    specs = parse_all(records, config)  # records.parse_record for each, named by index and id
    results = run_specs(specs, config, workers=2, progress=False, early_stop=False,
                        on_result=None)   # what execute_many runs locally (threads over slots;
                                          # one record, no callback: the caller's thread)
    pool = get_pool(config)             # cached per config; workers start once and stay warm
    with pool.worker() as slot:        # slot[0] is the Worker (replaced if it is discarded)
        result = judge(spec, slot, pool, early_stop=False)

`judge` sends the job (inputs only), turns each reported test into a status as it arrives
(verdict.test_status), asks the worker to stop at the first failure when early_stop is set,
and summarises. Every line from a worker is untrusted: protocol.parse_line bounds and validates
it against the current job id before anything uses it. A job that does not end cleanly — the
worker died, a line broke the protocol, or anything at all raised in the judge — discards the
worker: its process group is killed, in root mode every process of its private uid too, and a
fresh worker takes the slot, so no stale output is ever read by the next record. A worker that
sends nothing for the job's time limit + config.stall_grace_s (stopped, wedged: its own per-test
limit should have reported long before) is killed by a watchdog, which the judge sees as a death.
A record whose worker died is retried once; a protocol violation is that record's runtime_error
(reason in "reason"). judge() never raises or hangs because of a submission. Pools are closed at
interpreter exit. Interrupted (Ctrl-C or SIGTERM while run_specs waits), it reports no verdict
reached after the interrupt: the workers are killed on the way out, and a record cut short is not a
failure of the submission; a re-run judges it again.
This module does not define the record format (records.py) nor compare outputs (verdict.py).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from recode_lib.core.errors import RecodeError
from recode_lib.core.linux import require_linux
from recode_lib.sandbox import verdict
from recode_lib.sandbox.checker import prepare_checkers
from recode_lib.sandbox.environment import missing_modules
from recode_lib.sandbox.limits import ALLOCATOR_ENV, kill_uid
from recode_lib.sandbox.protocol import ProtocolError, parse_line
from recode_lib.sandbox.records import parse_record

ZYGOTE = Path(__file__).with_name("zygote.py")


class WorkerDied(RecodeError, RuntimeError):
    """The worker process exited (or was killed) in the middle of a job."""


class Worker:
    """One warm `python -I zygote.py` subprocess in its own session (never this process:
    forking the caller could copy torch and the expected outputs into the sandbox).

    `run(job, on_message)` sends one job and feeds its validated messages to on_message;
    `kill()` ends it with everything it started. `info` is its READY message (mode, pid, uid).
    """

    def __init__(self, config):
        python = config.python or sys.executable
        # ALLOCATOR_ENV from the start: glibc reads it once, and every child is a fork
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", **ALLOCATOR_ENV}
        self.proc = subprocess.Popen(
            [python, "-I", str(ZYGOTE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
            start_new_session=True,
        )
        self.max_line = config.max_output_bytes + (64 << 10)
        self.job_id = 0
        self.stall_grace_s = float(config.stall_grace_s)
        self.stalled: float | None = None  # the silence (s) after which the watchdog killed it
        self.due: tuple[float, float] | None = None  # (monotonic deadline, its length) of a read
        self.watchdog: threading.Thread | None = None
        self.closed = threading.Event()
        self.write(config.worker_config())
        line = self.proc.stdout.readline(1 << 16)
        try:
            self.info = json.loads(line[6:]) if line.startswith(b"READY ") else None
        except ValueError:
            self.info = None
        if not isinstance(self.info, dict) or "mode" not in self.info:
            self.kill()
            raise RuntimeError(
                f"sandbox worker failed to start (got {line[:200]!r}); see its error output above"
            )

    @property
    def mode(self) -> str:
        return self.info["mode"]

    def write(self, obj) -> None:
        try:
            self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise WorkerDied(str(exc)) from None

    def read(self, n_tests: int, deadline_s: float | None = None):
        """The next message of the current job (ProtocolError / WorkerDied otherwise). With
        deadline_s, a watchdog kills the worker when no line arrived within it (WorkerDied)."""
        return parse_line(
            self.readline(self.max_line + 1, deadline_s), self.job_id, n_tests, self.max_line
        )

    def readline(self, limit: int, deadline_s: float | None = None) -> bytes:
        """One raw line of at most `limit` bytes (WorkerDied at EOF or, with deadline_s, when
        the watchdog killed a worker that sent nothing within it)."""
        if deadline_s is not None:
            if self.watchdog is None:
                self.watchdog = threading.Thread(
                    target=self.watch, daemon=True, name="recode-sandbox-watchdog"
                )
                self.watchdog.start()
            self.due = (time.monotonic() + deadline_s, deadline_s)
        try:
            line = self.proc.stdout.readline(limit)
        finally:
            self.due = None
        if self.stalled is not None:
            raise WorkerDied(
                f"worker sent nothing for {self.stalled:.0f} s (stopped or wedged); "
                "the watchdog killed it"
            )
        if not line:
            raise WorkerDied(f"worker exited with status {self.proc.poll()}")
        return line

    def sigkill(self) -> None:
        """SIGKILL the worker's process group and the worker (no wait: safe from any thread)."""
        for target in (lambda: os.killpg(self.proc.pid, signal.SIGKILL), self.proc.kill):
            with contextlib.suppress(OSError):
                target()

    def watch(self) -> None:
        """The watchdog thread (one per worker, started with its first timed read): kills the
        worker when a read's deadline passes with no line. A thread per read would cost more
        than the judging itself (~100 us per message); this one wakes at most every 0.1 s."""
        while not self.closed.is_set():
            due = self.due
            now = time.monotonic()
            if due is not None and now >= due[0]:
                self.stall(due[1])
                return
            wait = 0.1 if due is None else min(0.1, due[0] - now)
            self.closed.wait(max(wait, 0.001))

    def stall(self, silence_s: float) -> None:
        """The watchdog: mark the worker stalled and kill its process group (its stdout then
        ends, so the blocked read returns)."""
        self.stalled = silence_s
        self.sigkill()

    def run(self, job: dict, n_tests: int, on_message) -> dict:
        """Send a job; call on_message(msg) per S/X/T message (a True return asks the worker
        to stop); return the body of the final D message. Every message must come within the
        job's largest time limit (the record's, or a test's own `time_limits`) + stall_grace_s
        (the worker reports each test as its own limit ends)."""
        self.job_id += 1
        deadline = (
            max(
                [float(job.get("time_limit_s") or 0)]
                + [float(x) for x in job.get("time_limits") or ()]
            )
            + self.stall_grace_s
        )
        first = self.send_job(job, n_tests, deadline)
        stopped = False
        while True:
            msg = first or self.read(n_tests, deadline)
            first = None
            if msg.tag == "D":
                return msg.body
            if on_message(msg) and not stopped:
                stopped = True
                self.write({"op": "stop", "job": self.job_id})

    def send_job(self, job: dict, n_tests: int, deadline_s: float):
        """Write the job line. A script test's script does not travel in it: the line
        carries its byte length, the worker answers `B <job>` once it has read exactly that
        line, and only then are the raw bytes written, which the worker copies straight into
        the inputs' memfd (zygote.store_inputs: the script never becomes an object in the
        worker's heap, so no submission process forked from it can find it in its memory).
        Sealed call jobs (job["sealed"]) send their inputs the same way, so that they never
        enter the worker's heap either (a child inherits it: it would find every later test's
        input there); the line then carries their byte lengths (`input_lens`).
        Returns the first message when the worker refused the job instead (X), else None."""
        script = job.get("script")
        sealed = bool(job.get("sealed")) and isinstance(job.get("inputs"), list)
        if not isinstance(script, str) and not sealed:
            self.write(dict(job, job=self.job_id))
            return None
        head = {**{k: v for k, v in job.items() if k != "script"}, "job": self.job_id}
        data = b""
        if sealed:
            parts = [t.encode("utf-8", "surrogatepass") for t in job["inputs"]]
            head.update(inputs=None, input_lens=[len(p) for p in parts])
            data = b"".join(parts)
        if isinstance(script, str):
            text = script.encode("utf-8", "surrogatepass")
            head["script_len"] = len(text)
            data += text
        self.write(head)
        line = self.readline(self.max_line + 1, deadline_s)
        if line != b"B %d\n" % self.job_id:
            return parse_line(line, self.job_id, n_tests, self.max_line)
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise WorkerDied(str(exc)) from None
        return None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """Kill the worker, its process group and (root mode) every process of its uid."""
        self.closed.set()
        self.sigkill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError, ValueError):
                f.close()
        info = getattr(self, "info", None) or {}
        uid, span = info.get("uid"), info.get("uid_span", 1)
        if uid and os.geteuid() == 0:
            kill_uid(uid, span=span if isinstance(span, int) and 0 < span <= 1 << 16 else 1)

    def close(self) -> None:
        """A clean shutdown: EOF on stdin; killed if it does not exit within 5 s."""
        with contextlib.suppress(OSError, ValueError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


class Pool:
    """Warm workers for one SandboxConfig, started on demand and reused across calls.

    `worker()` lends one (a context manager yielding a one-item list, so `replace` can swap in
    a fresh worker); `replace(slot)` kills the lent worker and starts a new one; `workers()`
    lists the live ones (for inspection); `close()` ends them all."""

    def __init__(self, config):
        self.config = config
        self._idle: queue.Queue = queue.Queue()
        self._live: list[Worker] = []
        self._lock = threading.Lock()

    def spawn(self) -> Worker:
        w = Worker(self.config)
        with self._lock:
            self._live.append(w)
        return w

    def workers(self) -> list[Worker]:
        with self._lock:
            return list(self._live)

    @contextlib.contextmanager
    def worker(self):
        try:
            w = self._idle.get_nowait()
        except queue.Empty:
            w = self.spawn()
        slot = [w]
        try:
            yield slot
        finally:
            w = slot[0]
            if w is not None and w.alive():
                self._idle.put(w)
            elif w is not None:
                self.discard(w)

    def discard(self, w: Worker) -> None:
        w.kill()
        with self._lock:
            if w in self._live:
                self._live.remove(w)

    def replace(self, slot: list) -> None:
        """Discard the lent worker (whatever state its job is in) and start a fresh one."""
        old, slot[0] = slot[0], None
        self.discard(old)
        slot[0] = self.spawn()

    def close(self) -> None:
        with self._lock:
            workers, self._live = self._live, []
        for w in workers:
            w.close()


class Cancel:
    """A stop switch for one run_specs call (the reward's batch timeout, SandboxRunner): set()
    starts none of the call's queued records and SIGKILLs the workers judging its running ones,
    so an abandoned slow record does not hold a worker to its own limits (tests x per-test
    limit). The cancelled records get no result and no on_result call; the call returns what
    finished (None for the rest). Safe from any thread; set() does not wait for the kills."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cancelled = False
        self.slots: list[list] = []  # the slots whose worker is judging one of the records

    def is_set(self) -> bool:
        return self.cancelled

    def hold(self, slot: list) -> bool:
        """Register `slot` as judging a record; False (nothing registered) once cancelled."""
        with self.lock:
            if self.cancelled:
                return False
            self.slots.append(slot)
            return True

    def release(self, slot: list) -> None:
        with self.lock:
            self.slots = [s for s in self.slots if s is not slot]

    def set(self) -> None:
        with self.lock:
            self.cancelled = True
            slots = list(self.slots)
        for slot in slots:
            w = slot[0]
            if w is not None:
                w.sigkill()  # the judging thread reads EOF: WorkerDied, not retried


_POOLS: dict = {}
_POOLS_LOCK = threading.Lock()


def get_pool(config, size: int | None = None) -> Pool:
    """The pool for this config (`size` is accepted for compatibility; pools grow on demand).
    LinuxRequired, with the reason, on another OS: nothing could be isolated there."""
    require_linux("the execution sandbox")
    with _POOLS_LOCK:
        pool = _POOLS.get(config)
        if pool is None:
            pool = _POOLS[config] = Pool(config)
        return pool


@atexit.register
def close_all() -> None:
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for p in pools:
        p.close()


def judge(
    spec, slot: list, pool: Pool, early_stop: bool = False, cancel: Cancel | None = None
) -> dict:
    """Execute one parsed record on a worker and return its result dict (never raises because
    of what the submission does; a worker whose job did not end cleanly is replaced). Once
    `cancel` is set, a dead worker is not retried (the result says so; run_specs drops it)."""
    if spec.requires:
        missing = missing_modules(pool.config.python, spec.requires)
        if missing:
            return verdict.env_missing_result(spec, missing)
    if spec.no_code:
        return verdict.no_code_result(spec)
    job = dict(spec.job, early_stop=early_stop)
    for attempt in range(2):
        run = verdict.Run(spec, early_stop)
        if cancel is not None and cancel.is_set():
            return run.result(None, reason="the batch was cancelled")
        clean = False
        try:
            done = slot[0].run(job, len(spec.input_lens), run.on_message)
            clean = True
            return run.result(done)
        except WorkerDied:
            if attempt == 0 and not (cancel is not None and cancel.is_set()):
                continue
            return run.result(None, reason="the sandbox worker died twice")
        except ProtocolError as exc:
            return run.result(None, reason=f"protocol violation: {exc}")
        except Exception as exc:  # a judge-side bug: this record fails, the next is unaffected
            return run.result(None, reason=f"judge error: {type(exc).__name__}: {exc}"[:500])
        except BaseException:
            # interrupted (KeyboardInterrupt, Terminated) while judging in the caller's thread:
            # the worker is killed on the way out, and no fresh one is started
            clean = True
            pool.discard(slot[0])
            slot[0] = None
            raise
        finally:
            if not clean:
                pool.replace(slot)
    raise AssertionError("unreachable")


def parse_all(records: list, config) -> list:
    """records.parse_record for every record (RecordError names its index and id)."""
    return [
        parse_record(
            r,
            config,
            where=f"record {i} (id {r.get('id', '?')!r})" if isinstance(r, dict) else f"record {i}",
        )
        for i, r in enumerate(records)
    ]


def _limit_of(spec) -> float:
    """A record's largest time limit (the record's, or one of its tests' own)."""
    job = spec.job
    return max(
        [float(job.get("time_limit_s") or 0)] + [float(x) for x in job.get("time_limits") or ()]
    )


def run_specs(
    specs: list,
    config,
    workers: int | None = None,
    progress: bool = False,
    early_stop: bool = False,
    on_result=None,
    cancel: Cancel | None = None,
) -> list[dict]:
    """Judge parsed records on this machine's pool, `workers` threads each holding one warm
    worker (one per interpreter: a record with its own "python" runs on the pool of
    config.replace(python=...), whose interpreter also decides its `env_missing`); results in
    input order; on_result(result) from a worker thread as each finishes. `cancel` (Cancel):
    once set, no record starts and the running ones are killed, unreported (None)."""
    if not specs:
        return []
    if any(s.stdio_checker for s in specs):  # refuses without a compiler unless fallback asked
        prepare_checkers((s.stdio_checker for s in specs), config.checker_fallback)
    results: list = [None] * len(specs)
    n = max(1, min(workers or config.workers or os.cpu_count() or 1, len(specs)))
    pools = {
        py: get_pool(config if py is None else config.replace(python=py))
        for py in {s.python for s in specs}
    }  # a record's own interpreter: its own pool
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(specs), desc="sandbox", unit="sub")
    # several threads: the longest time limits first (longest-processing-time order, the limit
    # standing in for the work: EvalPlus's per-test limits are its reference's measured time
    # x 4), so that a slow record does not start last and leave the other workers idle
    # while it runs (HumanEval+/139 is the slowest and comes 140th of 164); results still
    # come back in input order. One thread keeps the input order.
    order = sorted(range(len(specs)), key=lambda i: -_limit_of(specs[i])) if n > 1 else None
    lock, nxt, errors = threading.Lock(), [0], []
    stopping = threading.Event()  # Ctrl-C / SIGTERM in the caller: report nothing more

    def loop():
        try:
            with contextlib.ExitStack() as held:
                slots: dict = {}  # interpreter -> the warm worker this thread holds of it
                while True:
                    with lock:
                        i = nxt[0]
                        nxt[0] += 1
                    if i >= len(specs) or errors or stopping.is_set():
                        return
                    if cancel is not None and cancel.is_set():
                        return
                    if order is not None:
                        i = order[i]
                    pool = pools[specs[i].python]
                    if specs[i].python not in slots:
                        slots[specs[i].python] = held.enter_context(pool.worker())
                    slot = slots[specs[i].python]
                    if cancel is not None and not cancel.hold(slot):
                        return
                    try:
                        res = judge(specs[i], slot, pool, early_stop=early_stop, cancel=cancel)
                    finally:
                        if cancel is not None:
                            cancel.release(slot)
                    if cancel is not None and cancel.is_set():
                        return  # killed or finished after the cancel: not reported
                    if stopping.is_set():
                        # interrupted while it ran: its worker may have been killed on the way
                        # out, so this verdict is not the program's; it is not reported (a
                        # re-run judges the record again)
                        return
                    results[i] = res
                    if on_result is not None:
                        on_result(results[i])
                    if bar is not None:
                        bar.update(1)
        except BaseException as exc:  # surfaced below, never swallowed
            errors.append(exc)

    if len(specs) == 1 and on_result is None and bar is None:
        # one record and no callback (execute()): judged in this thread; a thread's start and
        # join cost ~50-100 us of CPU and two context switches, a tenth of a one-test record
        loop()
        if errors:
            raise errors[0]
        return results
    threads = [threading.Thread(target=loop, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except BaseException:  # KeyboardInterrupt, SIGTERM (recode_lib.core.errors.Terminated)
        stopping.set()
        if bar is not None:
            bar.close()
        raise
    if bar is not None:
        bar.close()
    if errors:
        raise errors[0]
    return results
