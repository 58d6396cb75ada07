"""The execution sandbox: run untrusted Python submissions against tests, with exact verdicts.

    from recode_lib.sandbox import execute, execute_many, strictness, SandboxConfig
    res = execute({"id": "a", "code": src, "tests": {"kind": "call", "fn_name": "f",
                   "cases": [{"args": [1], "expected": 2}]}})
    res["status"], res["outcome"], res["passed"], res["total"], res["tests"]
    results = execute_many(records, workers=2, early_stop=True, progress=True)  # input order
    results = execute_many(records, ray="auto")    # chunks as Ray tasks over a cluster (fanout.py)
    strictness(res, ks=(1, 2, 3, "inf"))                                       # {"1": 1, ...}

How it works: warm worker processes (zygote.py, one per pool slot, started with `python -I`,
never importing torch) fork one confined child per submission (limits.py); the child runs
the submission and its tests (harness.py) and streams outputs back; the judge (this process)
validates every message (protocol.py) and compares outputs with the expected values, which never
enter the sandbox (verdict.py). Tests run in ascending input length, each with its own
wall-clock limit; a timed-out or crashed child is killed with its process group and a fresh one
continues with the remaining tests. Results are `result.Result` dicts (statuses and outcomes
defined there once).

Every failed result says why in "reason" (verdict.failure_reason: the first failing test and the
exception's type and last line as the sandbox reported it, untrusted text; or the judge's
refusal). A record's optional "requires" (the modules its problem needs) that the workers'
interpreter lacks makes the result "env_missing" / "not_counted" without running anything
(environment.py). A record's optional "python" (an interpreter path: BigCodeBench's own
environment, recode_lib.bench_env) runs it on a pool of workers started with that interpreter,
whose modules then decide env_missing. Testlib checkers need a working C++ compiler: without one the judge refuses
(checker.CheckerUnavailable, naming the package) unless SandboxConfig.checker_fallback.

Robustness (what one submission can cost): exactly its own record. Every worker line is bounded
and schema-checked against the job id before use; a violation is the record's runtime_error
(with "reason"), comparisons never raise, the worker of any job that did not end cleanly is
killed (process group, and in root mode every process of its private uid) and replaced.

What is isolated depends on what the machine allows (limits.py has the details):
- as root (this project's CI): no network (network namespace), a read-only file system view
  with only system and Python directories (not the project, its data, or home directories),
  shown through overlays so that no unix-domain socket a host process keeps there can be
  connected to (a seccomp filter refusing unix sockets where overlays cannot be made),
  a fresh size-capped /tmp as the only writable place, a fresh private uid per child from the
  worker's range (fork bombs stopped by RLIMIT_NPROC, no signals/ptrace to the judge, every
  leftover process killed, no per-uid kernel state such as keyrings shared with the next
  child; keyrings also cleared at reap), the worker's own pid namespace (/proc shows neither
  the judge nor the worker), memory (RLIMIT_AS), CPU, file-size and open-file limits,
  no_new_privs, scrubbed environment, and (every mode) a seccomp filter refusing kernel
  memory outside RLIMIT_AS (memfds, raised socket buffers, SysV IPC beyond small per-child
  caps), kernel keyrings and io_uring (limits.restrict_syscalls).
- unprivileged with user namespaces: the same except the private uid; instead every child is
  born in its worker's pid namespace (a fresh /proc showing only that namespace: no signals,
  ptrace or /proc/<pid>/root to the judge or other processes) with every capability dropped;
  when no user namespace can be made, "auto" falls back to plain with a warning on stderr.
- otherwise ("plain"): limits, process-group/subreaper cleanup and a temporary working
  directory only; the network is merely guarded in-process and the file system is NOT isolated.
Script tests (harness.py): without unittest/mock they run in a process that never runs
submission code, calling it with plain values; the submission's process is forked before the
test script is read, and what is shared is derived from the script's free names and the
record's entry point, never from the submission. unittest-style ones (BigCodeBench) run in the
submission's process with builtins, harness and preloaded standard-library modules restored
after every candidate call (to their state at the call), and the running unittest objects
protected from the call.
Between tests: a stdio test is a fresh program run (every process it started killed, the
scratch /tmp emptied, the CPU time of all its processes counted against it); call tests share
one process (EvalPlus does the same). Between records: a fresh child, /tmp, IPC namespace and
(root) uid; a test script, and the inputs of sealed call tests, never pass through the
worker's heap (pool.Worker.send_job, zygote.store_inputs). Every result carries a trust level (result.TRUST_LEVELS): "isolated" for
stdio, call and separate script tests, "in_process" for unittest-style ones.
Not isolated / residual risks: CPU/memory-bandwidth side effects on other processes; in userns
mode the user's process count (same uid); outside root mode with a writable memory cgroup
(memcg.py: then memory_mb + tmp_size_mb bounds a record's processes together) memory_mb is per
process (RLIMIT_AS: forked processes may hold up to max_processes x memory_mb); kernel socket
buffers of the default size are not counted; in call tests a program may use several cores within a test's
wall-clock limit (stdio tests count the CPU of all its processes); the pid counter of a worker's pid
namespace, shared by its children: a low-bandwidth covert channel (a record or stdio test can
signal a number to the next one on the same worker by forking; none of them holds an expected
value to pass on); in call tests every test's input is readable during any call, so a program
can spend early tests' slots on later tests (as in EvalPlus; SandboxConfig.sealed_inputs closes
it at ~1.3-1.45x the cost); a unittest-style script test
(trust "in_process") can be forged by a submission that
writes protocol lines itself (it can reach every fd of its process), rewrites the harness or
its restore snapshot through frames or ctypes, and third-party modules it patches stay patched
for those tests; three EvalPlus tasks with outputs beyond the judge's element bound keep such an
in-process script embedding the reference (data/evalplus.py, SCRIPT_ONLY). In call/stdio
tests a submission can only forge its own outputs (still compared by the judge) and its own
timings. Per-test time and memory are measured inside the sandbox (for call tests memory is
the process peak so far); the record's memory_mb is the peak measured by the kernel (wait4),
interpreter included. In "userns" mode a process left behind dies with its worker's pid
namespace; in "plain" mode one that escaped its process group and outlives a dead worker is
killed only if it is that worker's descendant (no private uid).
"""

from __future__ import annotations

from recode_lib.sandbox.config import SandboxConfig
from recode_lib.sandbox.fanout import RayFanoutError, execute_on_ray
from recode_lib.sandbox.pool import get_pool, parse_all, run_specs
from recode_lib.sandbox.records import RecordError
from recode_lib.sandbox.result import OUTCOMES, STATUSES, Result
from recode_lib.sandbox.strictness import first_failure, strictness

__all__ = [
    "SandboxConfig",
    "RecordError",
    "execute",
    "execute_many",
    "strictness",
    "first_failure",
    "isolation_mode",
    "record_memory_bounded",
    "Result",
    "RayFanoutError",
    "STATUSES",
    "OUTCOMES",
]


def execute(record: dict, config: SandboxConfig | None = None, early_stop: bool = False) -> Result:
    """Run one record (see records.py for the format) and return its result."""
    return execute_many([record], workers=1, config=config, early_stop=early_stop)[0]


def execute_many(
    records,
    workers: int | None = None,
    config: SandboxConfig | None = None,
    progress: bool = False,
    early_stop: bool = False,
    on_result=None,
    ray: str | None = None,
    chunk_size: int | None = None,
) -> list[Result]:
    """Run records on a pool of warm workers; results come back in input order.

    Every record is validated first (RecordError names the record and field). `on_result`
    (optional) is called with each result as soon as it is ready, from a worker thread.
    `ray` (optional: "local", "auto" or "ray://host:port") spreads the records over Ray tasks
    of `chunk_size` records, each running this local pool with `workers` workers (default 1)
    on its node; same verdicts and order, on_result called per finished chunk in this thread
    (fanout.py; needs the `scale` extra)."""
    config = config or SandboxConfig()
    records = list(records)
    specs = parse_all(records, config)
    if not specs:
        return []
    if ray is not None:
        return execute_on_ray(
            records,
            ray,
            workers=workers,
            config=config,
            progress=progress,
            early_stop=early_stop,
            on_result=on_result,
            chunk_size=chunk_size,
        )
    if chunk_size is not None:
        raise ValueError("execute_many: chunk_size applies to the Ray fan-out only (ray=...)")
    return run_specs(
        specs,
        config,
        workers=workers,
        progress=progress,
        early_stop=early_stop,
        on_result=on_result,
    )


def record_memory_bounded(config: SandboxConfig | None = None) -> bool:
    """Whether the workers bound all of a record's processes together (a memory cgroup per
    worker, memcg.py: root mode with a writable cgroup hierarchy), not only each process."""
    with get_pool(config or SandboxConfig()).worker() as slot:
        return bool(slot[0].info.get("memcg"))


def isolation_mode(config: SandboxConfig | None = None) -> str:
    """The isolation mode the workers achieve on this machine (root | userns | plain)."""
    with get_pool(config or SandboxConfig()).worker() as slot:
        return slot[0].mode
