"""The warm worker: a small Python process that forks one confined child per submission.
It holds no state between jobs and does not compare outputs (verdict.py does).
More: docs/modules/sandbox.md (recode_lib.sandbox.zygote).
"""

import json
import os
import re
import secrets
import select
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402  (loaded before any fork, so children need no file access)
import limits  # noqa: E402
import memcg  # noqa: E402

# Standard-library modules that test scripts use, loaded here so that harness.py can restore
# them to this state after a submission ran (a module the submission imports first is not
# restorable: it stays as the submission left it).
PRELOAD = (
    "array base64 bisect calendar cmath collections copy csv dataclasses datetime decimal "
    "enum fractions functools hashlib heapq io itertools math numbers operator pathlib "
    "queue random statistics string struct textwrap typing unittest unittest.mock"
).split()
for _name in PRELOAD:
    __import__(_name)
harness.prepare()

_T = re.compile(rb'^T \{"i": (\d{1,9}),')  # bounded: int() of a huge index would raise
_now = time.monotonic
KINDS = ("call", "stdio", "script")


class Lines:
    """A byte stream cut into lines; linear in the data however it arrives."""

    def __init__(self, fd):
        self.fd, self.buf, self.eof, self.scan = fd, bytearray(), False, 0

    def fill(self):
        data = os.read(self.fd, 1 << 20)
        self.eof = not data
        self.buf += data

    def pop(self):
        out, start = [], 0
        while True:
            j = self.buf.find(b"\n", max(start, self.scan))
            if j < 0:
                break
            out.append(bytes(self.buf[start:j]))
            start = j + 1
        if start:
            del self.buf[:start]
        self.scan = len(self.buf)
        return out


def emit(data):
    while data:
        data = data[os.write(1, data) :]


def send(tag, job=None, obj=None):
    head = tag if job is None else "%s %d" % (tag, job)
    emit((head + ("" if obj is None else " " + json.dumps(obj)) + "\n").encode())


def parse(line):
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError, MemoryError):
        return None
    return msg if isinstance(msg, dict) else None


def check_job(job):
    """An error text for a job this worker cannot run, else None."""

    def num(x):
        return not isinstance(x, bool) and isinstance(x, (int, float)) and x > 0

    if job.get("kind") not in KINDS or not isinstance(job.get("code"), str):
        return "bad kind or code"
    if (
        not num(job.get("time_limit_s"))
        or not num(job.get("memory_mb"))
        or not num(job.get("max_output"))
    ):
        return "bad limits"
    inputs, order, lens = job.get("inputs"), job.get("order"), job.get("input_lens")
    if lens is not None:  # the inputs come as raw bytes after B (sealed jobs: store_inputs)
        if (
            inputs is not None
            or not isinstance(lens, list)
            or any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in lens)
            or sum(lens) > MAX_SCRIPT
        ):
            return "bad inputs"
        inputs = lens
    if not isinstance(inputs, list) or not isinstance(order, list) or not order:
        return "bad inputs"
    if lens is None and any(not isinstance(x, str) for x in inputs):
        return "bad inputs"
    lims = job.get("time_limits")  # optional per-test limits, parallel to inputs
    if lims is not None and (
        not isinstance(lims, list)
        or len(lims) != len(inputs)
        or not all(num(x) and x < 1e9 for x in lims)
    ):
        return "bad limits"
    n = max(len(inputs), 1)
    if any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n for i in order):
        return "bad order"
    if job["kind"] == "script" and (
        isinstance(job.get("script_len"), bool)
        or not isinstance(job.get("script_len"), int)
        or not 0 <= job["script_len"] <= MAX_SCRIPT
    ):
        return "bad script"
    if job["kind"] == "call" and not isinstance(job.get("fn_name"), str):
        return "bad fn_name"
    return None


def main():
    stdin = Lines(0)
    while True:
        lines = stdin.pop()
        if lines:
            break
        stdin.fill()
        if stdin.eof:
            return
    cfg = parse(lines[0]) or {}
    iso = limits.setup_worker(cfg)
    # root mode: one memory cgroup bounds all of a child's processes together (memcg.py)
    iso["memcg"] = memcg.open_group() if iso["mode"] == "root" else None
    send(
        "READY",
        None,
        {
            "mode": iso["mode"],
            "why": iso.get("why", ""),
            "pid": os.getpid(),
            "uid": iso["uid"],
            "uid_span": iso.get("uid_span", 1),
            "memcg": iso["memcg"] is not None,
            "host_sockets": "filter" if iso["unix_filter"] else "overlay",
        },
    )
    try:
        serve(iso, cfg, stdin, lines[1:])
    finally:
        if iso["memcg"] is not None:
            iso["memcg"].close()


def serve(iso, cfg, stdin, queue):
    while True:
        while not queue:
            queue += stdin.pop()
            if not queue:
                stdin.fill()
                if stdin.eof:
                    return
        msg = parse(queue.pop(0))
        if msg is None or msg.get("op") != "job":
            continue
        job_id = msg.get("job")
        if isinstance(job_id, bool) or not isinstance(job_id, int) or job_id < 0:
            continue
        err = check_job(msg)
        if err is None and raw_bytes(msg) is not None and (queue or stdin.buf):
            err = "data after a job's line before B"  # the judge waits for B: never happens
        if err:
            send("X", job_id, {"st": "error", "e": "worker: " + err})
            send("D", job_id, {"peak_mb": 0.0, "nonce": None})
            continue
        run_job(iso, cfg, msg, stdin, queue)


MAX_SCRIPT = 1 << 30


def raw_bytes(job):
    """How many raw bytes follow the worker's B line for this (checked) job: the script's
    (script jobs) plus the inputs' (jobs with input_lens: sealed call tests); None when the
    job has none and no B is sent."""
    if job.get("kind") != "script" and job.get("input_lens") is None:
        return None
    return (job.get("script_len") or 0) + sum(job.get("input_lens") or ())


_CHUNK = bytearray(1 << 16)  # the only buffer a test script's bytes ever pass through here
_ZEROS = bytes(len(_CHUNK))


def store_inputs(job, stdin_fd=0):
    """Move the inputs out of this process's heap into a memfd (not counted by RLIMIT_AS): a
    child reads test i's input when it runs test i, so inputs never pile up in its memory.

    A script test's script never enters this process as a Python object: the judge sends it
    as `script_len` raw bytes after this worker's `B <job>` line (pool.py waits for it), read
    here into one fixed buffer that is zeroed afterwards and written straight to the memfd.
    So no child forked from this process — a separate script test's submission process
    above all, forked before the test runner reads the script — inherits a heap that held
    the current job's script or any earlier one (freed bytes are not zeroed by Python).
    Sealed call jobs (SandboxConfig.sealed_inputs) send their inputs the same way (the job
    line carries only `input_lens`): the child would otherwise find every later test's input
    in the memory it inherited (the parsed job line), which sealing is meant to withhold."""
    fd = os.memfd_create("recode-inputs")
    index, pos = [], 0
    if job.get("input_lens") is not None:  # the inputs' bytes follow B (raw_bytes)
        for n in job["input_lens"]:
            index.append((pos, n))
            pos += n
    else:  # one write for all of them (a write per input cost ~1 us each)
        parts = [text.encode("utf-8", "surrogatepass") for text in job["inputs"]]
        for data in parts:
            index.append((pos, len(data)))
            pos += len(data)
        data = memoryview(b"".join(parts))
        parts = None
        while data:
            data = data[os.write(fd, data) :]
    job["inputs"], job["input_fd"], job["input_index"] = None, fd, index
    if job["kind"] == "script":  # read by the test runner only (harness.py)
        job["script_at"] = (pos, job["script_len"])
    raw = raw_bytes(job)
    if raw is not None:
        send("B", job["job"])
        try:  # the inputs (input_lens) first, then the script: the offsets above
            _copy_raw(stdin_fd, fd, raw)
        except BaseException:
            os.close(fd)
            raise
    return fd


def _copy_raw(src, dst, n):
    """Copy exactly n bytes from fd src to fd dst through _CHUNK, then zero it."""
    view = memoryview(_CHUNK)
    try:
        while n > 0:
            got = os.readv(src, [view[: min(n, len(_CHUNK))]])
            if got == 0:
                raise EOFError("the judge closed the pipe inside a script")
            done = 0
            while done < got:
                done += os.write(dst, view[done:got])
            n -= got
    finally:
        view[:] = _ZEROS
        view.release()


def run_job(iso, cfg, job, stdin, queue):
    fd = store_inputs(job)
    try:
        run_tests(iso, cfg, job, stdin, queue)
    finally:
        os.close(fd)


def run_tests(iso, cfg, job, stdin, queue):
    todo = list(job["order"])
    early, tl = bool(job.get("early_stop")), float(job["time_limit_s"])
    lims = job.get("time_limits")  # per-test limits (records.py), else tl for every test
    job["cpu_limit_s"] = (sum(lims[i] for i in todo) if lims else tl * len(todo)) + tl + 1
    peak, nonce = 0.0, None
    held = []  # lines of a child that finished, sent with D (or before the next child)
    while todo:
        if held:  # out before the next child is forked
            emit(b"\n".join(held) + b"\n")
            held = []
        child = Child(iso, cfg, job, todo, tl)
        child.supervise(stdin, queue)
        child.finish()
        held = child.held
        peak = max(peak, child.ru.ru_maxrss / 1024.0 if child.ru else 0.0)
        nonce = child.nonce if child.outcome == "finished" and not child.tampered else None
        todo = [i for i in todo if i not in child.done]
        if child.outcome in ("finished", "stopped", "setup") or (early and child.failed):
            break
    held.append(b"D %d %s" % (job["job"], json.dumps({"peak_mb": peak, "nonce": nonce}).encode()))
    emit(b"\n".join(held) + b"\n")


class Child:
    """One forked, confined child running the remaining tests of a job, and its supervision."""

    def __init__(self, iso, cfg, job, todo, tl):
        self.iso, self.job, self.todo, self.tl = iso, job, todo, tl
        self.pending, self.done, self.failed = set(todo), set(), False
        self.outcome, self.setup, self.tampered, self.asked = None, False, False, False
        self.ru, self.status, self.nonce = None, 0, None
        self.pos = 0  # todo[pos]: the first test still pending (test_limit)
        # lines held back to save the judge a wakeup each: S until the next line goes out (or
        # HOLD_S has passed), and the last tests' lines until D (run_tests)
        self.held, self.held_at = [], 0.0
        r, w = os.pipe()
        nr = nw = fr = fw = None
        if job["kind"] == "script":
            nr, nw = os.pipe()
        if job.get("sealed"):  # call tests: inputs go in one at a time (feed), not the memfd
            fr, fw = os.pipe()
            os.set_blocking(fw, False)
        job["feed_fd"] = fr
        self.feed, self.sent = bytearray(), 0
        self.workdir = tempfile.mkdtemp(prefix="recode-sbx-") if iso["mode"] == "plain" else None
        job["workdir"], job["nonce_fd"] = self.workdir, nr
        job["own_ipc"] = iso["mode"] != "plain"  # a private IPC namespace (limits.confine)
        limits.next_uid(iso)  # root mode: a uid no recent child had (per-uid kernel state)
        self.group, self.oom = iso.get("memcg"), False
        if self.group is not None:  # the record's processes together: its memory + its /tmp
            self.group.limit(int(job["memory_mb"]) + int(cfg["tmp_size_mb"]))
            self.oom_before = self.group.oom_kills()
        self.pid = os.fork()
        if self.pid == 0:
            if fw is not None:
                os.close(fw)
            self._child(cfg, r, w, nr, nw)
        os.close(w)
        if fr is not None:
            os.close(fr)
        self.fw = fw
        if nr is not None:
            os.close(nr)
            self.nonce = secrets.token_hex(16)  # made after the fork: never in the child's memory
        self.r, self.nw, self.out = r, nw, Lines(r)

    def _child(self, cfg, r, w, nr, nw):
        code = 0
        signal.signal(signal.SIGINT, signal.default_int_handler)  # the zygote ignores it
        try:
            os.close(r)
            if nw is not None:
                os.close(nw)
            if self.job["feed_fd"] is not None:  # call tests: the feed pipe only
                keep = [w, self.job["feed_fd"]]
            else:
                keep = [w, self.job["input_fd"]] + ([nr] if nr is not None else [])
            limits.confine(self.iso, cfg, self.job, keep)
            harness.run(self.job, self.todo, w)
        except BaseException as exc:
            try:
                os.write(
                    w,
                    (
                        "X " + json.dumps({"st": "error", "e": "sandbox: %r" % (exc,)}) + "\n"
                    ).encode(),
                )
            except BaseException:
                pass
            code = 1
        os._exit(code)

    def supervise(self, stdin, queue):
        deadline = _now() + self.tl
        limit = int(self.job["max_output"]) + 4096
        while self.outcome is None:
            now = _now()
            wait = deadline - now
            if wait <= 0:
                self.outcome = "timeout"
                break
            if self.held and now - self.held_at >= HOLD_S:
                self.flush_held()
            if self.reaped():  # dead while a process it forked holds the pipe open
                self.drain(limit)
                if self.outcome is None:
                    self.outcome = "finished" if not self.pending else "died"
                break
            if self.held:  # S, held at most HOLD_S
                wait = min(wait, max(self.held_at + HOLD_S - now, 0.0))
            ready, writable, _ = select.select(
                [self.r, 0], [self.fw] if self.feed else [], [], min(wait, WATCH_S)
            )
            if writable:
                self.flush_feed()
            if 0 in ready:
                self.read_judge(stdin, queue)
            if self.r in ready:
                self.out.fill()
                if self.read_child():
                    deadline = _now() + self.test_limit()
                if not self.pending and self.outcome is None:
                    self.outcome = "finished"  # no wait for EOF: a daemon may hold the pipe
                elif len(self.out.buf) > limit:
                    self.outcome = "overflow"
                elif self.out.eof and self.outcome is None:
                    self.outcome = "finished" if not self.pending else "died"

    def reaped(self):
        """Whether the child itself has exited (collected here: status and rusage kept)."""
        if self.ru is None:
            pid, status, ru = os.wait4(self.pid, os.WNOHANG)
            if pid == 0:
                return False
            self.status, self.ru = status, ru
        return True

    def drain(self, limit):
        """Read what the dead child wrote before it died (its forks may write on: bounded)."""
        for _ in range(64):
            ready, _, _ = select.select([self.r], [], [], 0)
            if not ready:
                return
            self.out.fill()
            self.read_child()
            if self.out.eof or len(self.out.buf) > limit:
                return

    def feed_next(self):
        """Call tests: queue the input of the next test (todo order) on the feed pipe. Sent
        once the submission has loaded and then once per reported test, so while any test
        runs, the pipe holds no input of a later one: the submission cannot read the big
        tests' inputs during the small ones and pool their time limits (the inputs' memfd is
        not in the child at all). Frame: test index and byte length (8 bytes each, little
        endian), then the JSON text of the arguments."""
        if self.fw is None or self.sent >= len(self.todo):
            return
        i = self.todo[self.sent]
        self.sent += 1
        off, n = self.job["input_index"][i]
        self.feed += i.to_bytes(8, "little") + n.to_bytes(8, "little")
        while n > 0:
            chunk = os.pread(self.job["input_fd"], min(n, 1 << 20), off)
            if not chunk:
                break
            self.feed += chunk
            off, n = off + len(chunk), n - len(chunk)
        self.flush_feed()

    def flush_feed(self):
        try:
            n = os.write(self.fw, self.feed)
        except BlockingIOError:
            return
        except OSError:  # the child is gone: nothing more to feed
            self.feed.clear()
            return
        del self.feed[:n]

    def test_limit(self):
        """Seconds of wall clock for the step now running: the record's limit until the child
        reported S (loading the submission), then the own limit (job["time_limits"]) of the
        first test still pending in todo order, the one the child runs next."""
        lims = self.job.get("time_limits")
        if not lims or not self.setup:
            return self.tl
        todo, pending = self.todo, self.pending
        while self.pos < len(todo) and todo[self.pos] not in pending:
            self.pos += 1
        return float(lims[todo[self.pos]]) if self.pos < len(todo) else self.tl

    def read_judge(self, stdin, queue):
        stdin.fill()
        for line in stdin.pop():
            msg = parse(line)
            if msg is not None and msg.get("op") == "stop":
                if msg.get("job") == self.job["job"]:
                    self.outcome = "stopped"
            elif msg is not None:
                queue.append(line)
        if stdin.eof:
            self.outcome = "stopped"

    def read_child(self):
        """Forward the child's well-formed lines; True when a step completed (new deadline)."""
        keep, progress, job = [], False, self.job["job"]
        for line in self.out.pop():
            if line == b"S" and not self.setup:
                self.setup = progress = True
                self.held.append(b"S %d" % job)
                self.held_at = _now()
                self.feed_next()
            elif line.startswith(b"X ") and not self.setup:
                keep.append(b"X %d %s" % (job, line[2:]))
                self.outcome = "setup"
                self.done |= self.pending
                break
            elif line == b"R" and self.setup and self.nw is not None:
                self.release_nonce()
            elif self.setup:
                m = _T.match(line)
                if m and int(m.group(1)) in self.pending:
                    i = int(m.group(1))
                    self.pending.discard(i)
                    self.done.add(i)
                    self.failed = self.failed or b'"st": "ok"' not in line[:60]
                    keep.append(b"T %d %s" % (job, line[2:]))
                    progress = True
                    self.feed_next()
        if keep:
            self.held += keep
            if self.pending and self.outcome is None:  # else: with D, once the child is reaped
                self.flush_held()
        return progress

    def flush_held(self):
        if self.held:
            emit(b"\n".join(self.held) + b"\n")
            self.held = []

    def release_nonce(self):
        """Hand out the nonce once, and only to a lone single-threaded child."""
        alone = not self.asked and limits.alone(self.iso, self.pid)
        self.tampered = self.tampered or self.asked or not alone
        self.asked = True
        try:
            os.write(self.nw, (self.nonce if not self.tampered else "denied").encode())
            os.close(self.nw)
        except OSError:
            pass
        self.nw = None

    def finish(self):
        # the child's process group (its forks); the child itself unless already collected
        for kill in (os.killpg,) if self.ru is not None else (os.killpg, os.kill):
            try:
                kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
        if self.ru is None:
            _, self.status, self.ru = os.wait4(self.pid, 0)
        os.close(self.r)
        if self.nw is not None:
            os.close(self.nw)
        if self.fw is not None:
            os.close(self.fw)
        limits.reap(self.iso)
        if self.group is not None:
            self.oom = self.group.oom_kills() > self.oom_before
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        if self.outcome in ("timeout", "died", "overflow") and self.pending:
            self.report_failure()

    def report_failure(self):
        self.flush_held()
        current = next(i for i in self.todo if i not in self.done)
        st, err = classify(self.outcome, self.status, self.oom)
        if not self.setup:
            send("X", self.job["job"], {"st": st, "e": err})
            self.outcome, self.done, self.failed = "setup", set(self.todo), True
            return
        lims = self.job.get("time_limits")
        t = float(lims[current]) if lims else self.tl
        send(
            "T",
            self.job["job"],
            {"i": current, "st": st, "t": t if st == "timeout" else None, "e": err},
        )
        self.done.add(current)
        self.failed = True


WATCH_S = 0.1  # how often the supervisor looks whether the child itself is still alive
HOLD_S = 0.05  # an S line waits at most this long for the first test's line to go out with


def classify(outcome, status, oom=False):
    """(status, reason) of a child that did not finish; `oom`: the kernel killed a process of
    its memory cgroup (memcg.py) while it ran."""
    if outcome == "timeout":
        return "timeout", "wall-clock limit"
    if outcome == "overflow":
        return "output", "output limit"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGKILL and oom:
            return "memory", "memory limit (the record's processes together)"
        if sig == signal.SIGXCPU:
            return "timeout", "CPU-time limit"
        if sig == signal.SIGXFSZ:
            return "output", "file-size limit"
        return "crash", "killed by signal %d" % sig
    return "crash", "exited with status %d before finishing" % os.WEXITSTATUS(status)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # Ctrl-C / a Jupyter kernel interrupt reaches the whole process group: the worker is
    # stopped by its pool (or by EOF when the parent dies), not by SIGINT.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    main()
