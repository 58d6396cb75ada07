"""The execution sandbox: run untrusted Python submissions against tests, with exact verdicts.

    from recode_lib.sandbox import execute, execute_many, strictness, SandboxConfig
    res = execute({"id": "a", "code": src, "tests": {"kind": "call", "fn_name": "f",
                   "cases": [{"args": [1], "expected": 2}]}})
    res["status"], res["outcome"], res["passed"], res["total"], res["tests"]
    results = execute_many(records, workers=2, early_stop=True, progress=True)  # input order
    strictness(res, ks=(1, 2, 3, "inf"))                                       # {"1": 1, ...}

How it works: warm worker processes (zygote.py, one per pool slot, started with `python -I`,
never importing torch) fork one confined child per submission (limits.py); the child runs
the submission and its tests (harness.py) and streams outputs back; the judge (this process)
validates every message (protocol.py) and compares outputs with the expected values, which never
enter the sandbox (verdict.py). Tests run in ascending input length, each with its own
wall-clock limit; a timed-out or crashed child is killed with its process group and a fresh one
continues with the remaining tests. Results are `result.Result` dicts (statuses and outcomes
defined there once).

Robustness (what one submission can cost): exactly its own record. Every worker line is bounded
and schema-checked against the job id before use; a violation is the record's runtime_error
(with "reason"), comparisons never raise, the worker of any job that did not end cleanly is
killed (process group, and in root mode every process of its private uid) and replaced.

What is isolated depends on what the machine allows (limits.py has the details):
- as root (this project's CI): no network (network namespace), a read-only file system view
  with only system and Python directories (not the project, its data, or home directories),
  a fresh size-capped /tmp as the only writable place, a private uid (fork bombs stopped by
  RLIMIT_NPROC, no signals/ptrace to the judge, every leftover process killed), memory
  (RLIMIT_AS), CPU, file-size and open-file limits, no_new_privs, scrubbed environment.
- unprivileged with user namespaces: the same except the private uid.
- otherwise ("plain"): limits, process-group/subreaper cleanup and a temporary working
  directory only; the network is merely guarded in-process and the file system is NOT isolated.
Script tests (harness.py): without unittest/mock they run in a process that never runs
submission code, calling it with plain values; unittest-style ones (BigCodeBench) run in the
submission's process with builtins, harness and preloaded standard-library modules restored
after every candidate call.
Not isolated / residual risks: CPU/memory-bandwidth side effects on other processes, reading
the process list (/proc); a unittest-style script test can be forged by a submission that
writes protocol lines itself (it can reach every fd of its process) or rewrites the harness
with ctypes, and third-party modules it patches stay patched for those tests; in call/stdio
tests a submission can only forge its own outputs (still compared by the judge) and its own
timings. Per-test time and memory are measured inside the sandbox (for call tests memory is
the process peak so far); the record's memory_mb is the peak measured by the kernel (wait4),
interpreter included. In "plain" and "userns" modes, a process that escaped its process group
and outlives a dead worker is killed only if it is that worker's descendant (no private uid).
"""

from __future__ import annotations

import os
import threading

from recode_lib.sandbox.config import SandboxConfig
from recode_lib.sandbox.records import RecordError, parse_record
from recode_lib.sandbox.result import OUTCOMES, STATUSES, Result
from recode_lib.sandbox.strictness import first_failure, strictness

__all__ = ["SandboxConfig", "RecordError", "execute", "execute_many", "strictness", "first_failure",
           "isolation_mode", "Result", "STATUSES", "OUTCOMES"]


def execute(record: dict, config: SandboxConfig | None = None, early_stop: bool = False) -> Result:
    """Run one record (see records.py for the format) and return its result."""
    return execute_many([record], workers=1, config=config, early_stop=early_stop)[0]


def execute_many(records, workers: int | None = None, config: SandboxConfig | None = None,
                 progress: bool = False, early_stop: bool = False, on_result=None) -> list[Result]:
    """Run records on a pool of warm workers; results come back in input order.

    Every record is validated first (RecordError names the record and field). `on_result`
    (optional) is called with each result as soon as it is ready, from a worker thread."""
    from recode_lib.sandbox.pool import get_pool, judge

    config = config or SandboxConfig()
    records = list(records)
    specs = [parse_record(r, config, where=f"record {i} (id {r.get('id', '?')!r})"
                          if isinstance(r, dict) else f"record {i}")
             for i, r in enumerate(records)]
    results: list = [None] * len(specs)
    if not specs:
        return []
    n = max(1, min(workers or config.workers or os.cpu_count() or 1, len(specs)))
    pool = get_pool(config)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(specs), desc="sandbox", unit="sub")
    lock, nxt, errors = threading.Lock(), [0], []

    def loop():
        try:
            with pool.worker() as slot:
                while True:
                    with lock:
                        i = nxt[0]
                        nxt[0] += 1
                    if i >= len(specs) or errors:
                        return
                    results[i] = judge(specs[i], slot, pool, early_stop=early_stop)
                    if on_result is not None:
                        on_result(results[i])
                    if bar is not None:
                        bar.update(1)
        except BaseException as exc:  # surfaced below, never swallowed
            errors.append(exc)

    threads = [threading.Thread(target=loop, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if bar is not None:
        bar.close()
    if errors:
        raise errors[0]
    return results


def isolation_mode(config: SandboxConfig | None = None) -> str:
    """The isolation mode the workers achieve on this machine (root | userns | plain)."""
    from recode_lib.sandbox.pool import get_pool

    with get_pool(config or SandboxConfig()).worker() as slot:
        return slot[0].mode
