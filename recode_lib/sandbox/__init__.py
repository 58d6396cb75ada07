"""The execution sandbox: run untrusted Python submissions against tests, with exact verdicts.

    from recode_lib.sandbox import execute, execute_many, strictness, SandboxConfig
    res = execute({"id": "a", "code": src, "tests": {"kind": "call", "fn_name": "f",
                   "cases": [{"args": [1], "expected": 2}]}})
    res["status"], res["outcome"], res["passed"], res["total"], res["tests"]
    results = execute_many(records, workers=2, early_stop=True, progress=True)  # input order
    results = execute_many(records, ray="auto")    # chunks as Ray tasks over a cluster (fanout.py)
    strictness(res, ks=(1, 2, 3, "inf"))                                       # {"1": 1, ...}
    rec = sandbox_record("humaneval/0#0", code, problem)   # the one record builder (a Problem's
                                                            # tests, limits, record_extras)

What is and is not isolated (the residual risks), the modes and the limits: docs/sandbox.md.
More: docs/modules/sandbox.md (recode_lib.sandbox).
"""

from __future__ import annotations

from recode_lib.sandbox.config import SandboxConfig
from recode_lib.sandbox.fanout import RayFanoutError, execute_on_ray
from recode_lib.sandbox.pool import Cancel, get_pool, parse_all, run_specs
from recode_lib.sandbox.record_builder import sandbox_record, submission_record
from recode_lib.sandbox.records import RecordError
from recode_lib.sandbox.result import OUTCOMES, STATUSES, Result
from recode_lib.sandbox.rk import first_failure, strictness

__all__ = [
    "SandboxConfig",
    "Cancel",
    "RecordError",
    "execute",
    "execute_many",
    "sandbox_record",
    "submission_record",
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
    cancel: Cancel | None = None,
) -> list[Result]:
    """Run records on a pool of warm workers; results come back in input order.

    Every record is validated first (RecordError names the record and field). `on_result`
    (optional) is called with each result as soon as it is ready, from a worker thread.
    `ray` (optional: "local", "auto" or "ray://host:port") spreads the records over Ray tasks
    of `chunk_size` records, each running this local pool with `workers` workers (default 1)
    on its node; same verdicts and order, on_result called per finished chunk in this thread
    (fanout.py; needs the `scale` extra). `cancel` (sandbox.Cancel, local pool only): once set,
    no record starts and the running ones are killed; they come back as None."""
    config = config or SandboxConfig()
    records = list(records)
    specs = parse_all(records, config)
    if not specs:
        return []
    if ray is not None:
        if cancel is not None:
            raise ValueError("execute_many: cancel applies to the local pool, not the Ray fan-out")
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
        cancel=cancel,
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
