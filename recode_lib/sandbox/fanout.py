"""Sandbox fan-out on Ray: spread records over Ray tasks, each running the local warm pool.

    from recode_lib.sandbox import execute_many
    results = execute_many(records, ray="auto")            # an existing cluster (`ray start`)
    results = execute_many(records, ray="ray://head:10001", chunk_size=32, on_result=save)
    results = execute_many(records, ray="local")           # a Ray cluster on this machine

This module does not validate records (records.py) nor judge them (pool.py, verdict.py).
More: docs/modules/sandbox.md (recode_lib.sandbox.fanout).
"""

from __future__ import annotations

import math

from recode_lib.core.errors import RecodeError
from recode_lib.core.ray_cluster import connect
from recode_lib.sandbox.config import SandboxConfig
from recode_lib.sandbox.pool import parse_all, run_specs

DEFAULT_RETRIES = 2  # Ray re-runs a chunk whose worker process or node died this often
MAX_DEFAULT_CHUNK = 64
CHUNKS_PER_SLOT = 4


class RayFanoutError(RecodeError, RuntimeError):
    """One or more chunks of a Ray fan-out failed (the message names each one)."""


def chunk_bounds(n: int, chunk_size: int) -> list[tuple[int, int]]:
    """[(lo, hi), ...] contiguous index ranges covering range(n), each at most chunk_size long."""
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    return [(lo, min(lo + chunk_size, n)) for lo in range(0, n, chunk_size)]


def default_chunk_size(n: int, slots: int) -> int:
    """About CHUNKS_PER_SLOT chunks per task slot, at most MAX_DEFAULT_CHUNK records each."""
    return max(1, min(MAX_DEFAULT_CHUNK, math.ceil(n / max(1, slots * CHUNKS_PER_SLOT))))


def run_chunk(records: list, workers: int, config, early_stop: bool) -> list:
    """What one Ray task runs: the local pool on this node (execute_many without Ray)."""
    return run_specs(parse_all(records, config), config, workers=workers, early_stop=early_stop)


def execute_on_ray(
    records: list,
    address: str,
    *,
    workers: int | None = None,
    config=None,
    progress: bool = False,
    early_stop: bool = False,
    on_result=None,
    chunk_size: int | None = None,
    retries: int = DEFAULT_RETRIES,
    task=run_chunk,
) -> list:
    """Run already-validated `records` as Ray tasks (module docstring); results in input order.
    `task(records, workers, config, early_stop) -> results` is what each task calls (tests
    replace it to simulate a dying node)."""
    config = config or SandboxConfig()
    records = list(records)
    if not records:
        return []
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    per_task = workers or 1
    ray = connect(address)
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if per_task > cpus:
        raise ValueError(
            f"workers={per_task} per Ray task, but the cluster at {address!r} has "
            f"{cpus} CPU(s): no task could be scheduled"
        )
    slots = max(1, cpus // per_task)
    size = chunk_size or default_chunk_size(len(records), slots)
    bounds = chunk_bounds(len(records), size)
    remote = ray.remote(task).options(
        num_cpus=per_task, max_retries=retries, retry_exceptions=False, name="recode-sandbox-chunk"
    )
    refs = {
        remote.remote(records[lo:hi], per_task, config, early_stop): (ci, lo, hi)
        for ci, (lo, hi) in enumerate(bounds)
    }
    results: list = [None] * len(records)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(records), desc=f"sandbox (ray, {len(bounds)} chunks)", unit="sub")
    failures = []
    pending = list(refs)
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                ci, lo, hi = refs[ref]
                try:
                    chunk = ray.get(ref)
                    if not isinstance(chunk, list) or len(chunk) != hi - lo:
                        raise RuntimeError(
                            f"expected {hi - lo} results, got "
                            f"{len(chunk) if isinstance(chunk, list) else chunk!r:.80}"
                        )
                    if [r.get("id") for r in chunk] != [r.get("id") for r in records[lo:hi]]:
                        raise RuntimeError("the results' ids are not the chunk's ids, in order")
                except Exception as exc:  # named below, after every other chunk is delivered
                    failures.append((ci, lo, hi, exc))
                    continue
                for j, res in enumerate(chunk):
                    results[lo + j] = res
                    if on_result is not None:
                        on_result(res)
                if bar is not None:
                    bar.update(hi - lo)
    except BaseException:  # interrupted (or on_result raised): stop the chunks still queued
        for ref in pending:
            ray.cancel(ref)
        raise
    finally:
        if bar is not None:
            bar.close()
    if failures:
        lines = [
            f"chunk {ci} of {len(bounds)} (records {lo}..{hi - 1}, ids "
            f"{records[lo].get('id')!r}..{records[hi - 1].get('id')!r}): "
            f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
            for ci, lo, hi, exc in failures
        ]
        raise RayFanoutError(
            f"{len(failures)} of {len(bounds)} sandbox chunks failed on Ray ({address}) after "
            f"{retries} retr{'y' if retries == 1 else 'ies'} for dead workers/nodes; the other "
            f"{len(records) - sum(hi - lo for _, lo, hi, _ in failures)} results were "
            "delivered:\n  " + "\n  ".join(lines)
        ) from failures[0][3]
    return results
