"""The warm worker: a small Python process that forks one confined child per submission.

Started by pool.py as `python -I zygote.py` (never imports torch, so a fork costs ~1 ms).
It speaks newline-delimited JSON on stdin/stdout:

    judge -> worker   {config}                    first line: isolation, max_processes, ...
                      {"op": "job", "job": n, "kind", "code", "inputs", "order", ...}
                      {"op": "stop", "job": n}    early stop: kill the child, skip the rest
    worker -> judge   READY {"mode": ...}
                      S | X {...} | T {...}       as harness.py writes them (checked, see below)
                      D {"peak_mb", "nonce"}      the job is over

Per job it forks a child (limits.confine, then harness.run) and supervises it: each test gets
`time_limit_s` of wall clock from the moment the previous one reported; on overrun the child's
process group is SIGKILLed, the test is reported as "timeout", and a fresh child continues
with the remaining tests (unless early stop). A child that dies mid-test gives that test
"crash" (or "timeout"/"output" for SIGXCPU/SIGXFSZ) and likewise continues. After each child
limits.reap kills anything it left behind. Lines from the child are forwarded only if well
formed and about a test still pending, so a submission cannot smuggle other messages; it can
still forge its own outputs (which the judge compares) and its own timings. The expected
values are never sent here, and the script-test nonce is created only after the fork.
This worker holds no state between jobs; it does not compare outputs (verdict.py does).
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

_T = re.compile(rb'^T \{"i": (\d+),')
_now = time.monotonic


class _Lines:
    def __init__(self, fd):
        self.fd, self.buf, self.eof = fd, b"", False

    def fill(self):
        data = os.read(self.fd, 1 << 20)
        self.eof = not data
        self.buf += data

    def pop(self):
        out = []
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            out.append(line)
        return out


def _emit(data):
    while data:
        data = data[os.write(1, data):]


def _send(tag, obj=None):
    _emit((tag + ("" if obj is None else " " + json.dumps(obj)) + "\n").encode())


def main():
    stdin = _Lines(0)
    while b"\n" not in stdin.buf:
        stdin.fill()
        if stdin.eof:
            return
    cfg = json.loads(stdin.pop()[0])
    iso = limits.setup_worker(cfg)
    _send("READY", {"mode": iso["mode"], "why": iso.get("why", ""), "pid": os.getpid(),
                    "uid": iso["uid"]})
    queue = []
    while True:
        while not queue:
            queue += stdin.pop()
            if not queue:
                stdin.fill()
                if stdin.eof:
                    return
        msg = json.loads(queue.pop(0))
        if msg.get("op") == "job":
            run_job(iso, cfg, msg, stdin, queue)


def run_job(iso, cfg, job, stdin, queue):
    todo = list(job["order"])
    early, tl = job.get("early_stop", False), float(job["time_limit_s"])
    job["cpu_limit_s"] = tl * (len(todo) + 1) + 1
    peak, nonce = 0.0, None
    while todo:
        outcome, done, failed, ru, nonce = _run_child(iso, cfg, job, todo, tl, stdin, queue)
        peak = max(peak, ru.ru_maxrss / 1024.0 if ru else 0.0)
        todo = [i for i in todo if i not in done]
        if outcome in ("finished", "stopped", "setup") or (early and failed):
            break
    _send("D", {"peak_mb": peak, "nonce": nonce})


def _run_child(iso, cfg, job, todo, tl, stdin, queue):
    r, w = os.pipe()
    nr = nw = None
    if job["kind"] == "script":
        nr, nw = os.pipe()
    workdir = tempfile.mkdtemp(prefix="recode-sbx-") if iso["mode"] == "plain" else None
    job["workdir"], job["nonce_fd"] = workdir, nr
    pid = os.fork()
    if pid == 0:
        code = 0
        signal.signal(signal.SIGINT, signal.default_int_handler)  # the zygote ignores it
        try:
            os.close(r)
            if nw is not None:
                os.close(nw)
            limits.confine(iso, cfg, job, [w] + ([nr] if nr is not None else []))
            harness.run(job, todo, w)
        except BaseException as exc:
            try:
                os.write(w, ("X " + json.dumps({"st": "error", "e": "sandbox: %r" % (exc,)})
                             + "\n").encode())
            except BaseException:
                pass
            code = 1
        os._exit(code)
    os.close(w)
    nonce = None
    if nr is not None:
        os.close(nr)
        nonce = secrets.token_hex(16)  # made after the fork: never in the child's memory
        os.write(nw, nonce.encode())
        os.close(nw)
    pending, done, failed = set(todo), set(), False
    out = _Lines(r)
    deadline, setup, outcome = _now() + tl, False, None
    limit = int(job["max_output"]) + 4096
    while outcome is None:
        wait = deadline - _now()
        if wait <= 0:
            outcome = "timeout"
            break
        ready, _, _ = select.select([r, 0], [], [], wait)
        if 0 in ready:
            stdin.fill()
            for line in stdin.pop():
                msg = json.loads(line)
                if msg.get("op") == "stop" and msg.get("job") == job["job"]:
                    outcome = "stopped"
                elif msg.get("op") != "stop":
                    queue.append(line)
            if stdin.eof:
                outcome = "stopped"
        if r in ready:
            out.fill()
            keep = []
            for line in out.pop():
                if line == b"S" and not setup:
                    setup, deadline = True, _now() + tl
                    keep.append(line)
                elif line.startswith(b"X ") and not setup:
                    keep.append(line)
                    outcome = "setup"
                    done |= pending
                    break
                elif setup:
                    m = _T.match(line)
                    if m and int(m.group(1)) in pending:
                        i = int(m.group(1))
                        pending.discard(i)
                        done.add(i)
                        failed = failed or b'"st": "ok"' not in line[:60]
                        keep.append(line)
                        deadline = _now() + tl
            if keep:
                _emit(b"\n".join(keep) + b"\n")
            if not pending and outcome is None:
                outcome = "finished"  # do not wait for EOF: a daemon may hold the pipe open
            elif len(out.buf) > limit:
                outcome = "overflow"
            elif out.eof:
                outcome = "finished" if not pending else "died"
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    _, status, ru = os.wait4(pid, 0)
    os.close(r)
    limits.reap(iso)
    if workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    if outcome in ("timeout", "died", "overflow") and pending:
        current = next(i for i in todo if i not in done)
        st, err = _classify(outcome, status)
        if not setup:
            _send("X", {"st": st, "e": err})
            return "setup", set(todo), True, ru, nonce
        _send("T", {"i": current, "st": st, "t": tl if st == "timeout" else None, "e": err})
        done.add(current)
        failed = True
    return outcome, done, failed, ru, nonce


def _classify(outcome, status):
    if outcome == "timeout":
        return "timeout", "wall-clock limit"
    if outcome == "overflow":
        return "output", "output limit"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
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
