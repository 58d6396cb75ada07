"""Sandbox execution for reward functions: parallel, bounded in time, cached per step.

    runner = SandboxRunner(workers=2, batch_timeout_s=120)
    results = runner.run(codes, tests, ids=ids, step=trainer_state.global_step)
    # -> one sandbox result dict per code (contract of recode_lib.sandbox.execute_many), or a
    #    synthetic result {"status": "reward_error", "outcome": "reward_error", "reason": ...}

It does not parse responses (recode_lib.core.prompts does) nor turn results into rewards
(recode_lib.rewards does). Exceptions raised by the sandbox become recorded reward_error
results, never NaN and never a crash of the training run.
More: docs/modules/rewards.md (recode_lib.rewards.execution).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from recode_lib import sandbox
from recode_lib.core.errors import RecodeError
from recode_lib.core.linux import require_linux
from recode_lib.sandbox.record_builder import submission_record
from recode_lib.sandbox.records import runs_in_process

REWARD_ERROR = "reward_error"


class InProcessTestsError(RecodeError, ValueError):
    """In-process (forgeable) tests given to a runner that does not allow them."""


def refuse_in_process(tests: dict, where: str) -> None:
    """Raise InProcessTestsError when `tests` run in the submission's own process."""
    if runs_in_process(tests):
        raise InProcessTestsError(
            f"{where}: its tests are in-process script tests (tests.kind 'script' using "
            "unittest/mock, or separate: false), which run inside the submission's own "
            "interpreter, where the submission can forge the verdict (write the harness's "
            "result lines, patch unittest or the harness) — a reward of 1 would not mean the "
            "code is correct. Set allow_in_process_tests: true in the recipe "
            "(SandboxRunner(allow_in_process_tests=True)) to train on them anyway, or leave "
            "such problems out"
        )


class BatchAbandoned(RecodeError):
    """Raised into the sandbox's threads of a batch the reward stopped waiting for."""


def _key(code: str, tests: dict, time_limit_s, memory_mb, extras=None) -> str:
    blob = json.dumps(
        [code, tests, time_limit_s, memory_mb, extras or {}], sort_keys=True, default=str
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def error_result(rid: str, reason: str) -> dict:
    return {
        "id": rid,
        "status": REWARD_ERROR,
        "outcome": REWARD_ERROR,
        "passed": 0,
        "total": 0,
        "time_s": 0.0,
        "memory_mb": 0.0,
        "tests": [],
        "reason": reason,
    }


@dataclass
class RunnerStats:
    """Counters for the benchmark and the metrics file (cumulative since construction)."""

    executed: int = 0  # submissions sent to the sandbox
    cache_hits: int = 0
    timeouts: int = 0  # submissions abandoned by the batch time bound
    errors: int = 0  # submissions whose batch raised
    exec_seconds: float = 0.0  # wall time spent waiting on the sandbox
    batches: int = 0
    per_batch: list = field(default_factory=list)  # (n_submissions, seconds) of the last batches


class SandboxRunner:
    """Executes (code, tests) pairs through recode_lib.sandbox with a per-step cache.
    `allow_in_process_tests`: accept tests that run in the submission's process (module
    docstring: Trust); False (default) makes `run` raise InProcessTestsError on them."""

    def __init__(
        self,
        workers: int | None = None,
        batch_timeout_s: float = 300.0,
        sandbox_config=None,
        cache_size: int = 8192,
        early_stop: bool = True,
        allow_in_process_tests: bool = False,
    ):
        self.workers = workers
        self.allow_in_process_tests = bool(allow_in_process_tests)
        self.early_stop = early_stop
        self.batch_timeout_s = float(batch_timeout_s)
        self.sandbox_config = sandbox_config
        self.cache_size = cache_size
        self._cache: OrderedDict[str, dict] = OrderedDict()
        self._step = None
        self._lock = threading.Lock()
        self.stats = RunnerStats()

    def check_tests(self, tests: dict, where: str) -> None:
        """Raise InProcessTestsError (naming `where`) for in-process tests unless allowed, and
        LinuxRequired off Linux (the sandbox needs it): raised, like a configuration error,
        before anything runs (recode_lib.training.grpo.train checks every problem up front)."""
        require_linux("a code reward")
        if not self.allow_in_process_tests:
            refuse_in_process(tests, where)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def run(
        self,
        codes: list,
        tests: list,
        *,
        ids: list | None = None,
        time_limit_s=None,
        memory_mb=None,
        step=None,
        extras: list | None = None,
    ) -> list[dict]:
        """One sandbox result per code (cached by code, tests, limits and extras: the record
        fields bench_env.record_extras gives a problem — "requires", "python" — per code)."""
        n = len(codes)
        extras = extras if extras is not None else [{}] * n
        ids = ids or [f"sample-{i}" for i in range(n)]
        for i in range(n):  # before anything runs: decided from the tests alone
            self.check_tests(tests[i], f"submission {ids[i]!r}")
        tl = time_limit_s if isinstance(time_limit_s, list) else [time_limit_s] * n
        mem = memory_mb if isinstance(memory_mb, list) else [memory_mb] * n
        with self._lock:
            if step is not None and step != self._step:
                self._cache.clear()
                self._step = step
        out: list[dict | None] = [None] * n
        todo: dict[str, dict] = {}  # key -> sandbox record
        keys: list[str | None] = [None] * n
        for i in range(n):
            k = _key(codes[i], tests[i], tl[i], mem[i], extras[i])
            keys[i] = k
            with self._lock:
                hit = self._cache.get(k)
            if hit is not None:
                self.stats.cache_hits += 1
                out[i] = dict(hit, id=str(ids[i]))
            elif k not in todo:
                todo[k] = submission_record(
                    k, codes[i], tests[i], time_limit_s=tl[i], memory_mb=mem[i], extras=extras[i]
                )
        if todo:
            fresh = self._execute(list(todo.values()))
            with self._lock:
                for k, res in fresh.items():
                    if res.get("status") != REWARD_ERROR:  # never cache a failure of the runner
                        self._cache[k] = res
                        self._cache.move_to_end(k)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
            for i in range(n):
                if out[i] is None:
                    out[i] = dict(fresh[keys[i]], id=str(ids[i]))
        return out  # type: ignore[return-value]

    def _execute(self, records: list[dict]) -> dict[str, dict]:
        """One result per record id. On a batch timeout the records that finished keep their
        results (collected through execute_many's on_result as each one ends); only those
        still pending get a reward_error result with the reason. The abandoned batch then
        starts none of its queued records: each sandbox thread stops after the record it is
        judging (on_result raises BatchAbandoned, which execute_many's threads end on), so a
        slow completion leaves at most `workers` records running beside the next batch, not
        its whole queue, and the records still running are killed with their workers
        (sandbox.Cancel): a slow answer does not hold a worker to its own limits."""
        t0 = time.perf_counter()
        box: dict = {}
        done: dict[str, dict] = {}
        done_lock = threading.Lock()
        wanted = {r["id"] for r in records}
        abandoned = threading.Event()
        cancel = sandbox.Cancel()

        def finished(res) -> None:  # from the sandbox's worker threads
            rid = res.get("id") if isinstance(res, dict) else None
            with done_lock:
                if abandoned.is_set():
                    raise BatchAbandoned("the reward no longer waits for this batch")
                if isinstance(rid, str) and rid in wanted:
                    done[rid] = res

        def work():
            try:
                box["results"] = sandbox.execute_many(
                    records,
                    workers=self.workers,
                    config=self.sandbox_config,
                    progress=False,
                    early_stop=self.early_stop,
                    on_result=finished,
                    cancel=cancel,
                )
            except BaseException as exc:  # recorded, never raised into the training loop
                box["error"] = f"{type(exc).__name__}: {exc}"

        thread = threading.Thread(target=work, name="reward-sandbox", daemon=True)
        thread.start()
        thread.join(self.batch_timeout_s)
        dt = time.perf_counter() - t0
        self.stats.batches += 1
        self.stats.exec_seconds += dt
        self.stats.per_batch = (self.stats.per_batch + [(len(records), dt)])[-100:]
        self.stats.executed += sum(
            r["code"] is not None for r in records
        )  # no-code: judged, not run
        if thread.is_alive():
            with done_lock:
                abandoned.set()
                kept = dict(done)
            cancel.set()
            pending = [r["id"] for r in records if r["id"] not in kept]
            self.stats.timeouts += len(pending)
            reason = (
                f"sandbox batch timed out after {self.batch_timeout_s:.0f}s with this "
                f"submission unfinished: still running, or queued behind slower ones and not "
                f"started ({len(pending)} of {len(records)} unfinished)"
            )
            return {
                r["id"]: kept[r["id"]] if r["id"] in kept else error_result(r["id"], reason)
                for r in records
            }
        if "error" in box:
            self.stats.errors += len(records)
            return {
                r["id"]: error_result(r["id"], f"sandbox error: {box['error']}") for r in records
            }
        results = box.get("results") or []
        if len(results) != len(records):
            self.stats.errors += len(records)
            return {
                r["id"]: error_result(
                    r["id"],
                    f"sandbox returned {len(results)} results for {len(records)} submissions",
                )
                for r in records
            }
        return {rec["id"]: res for rec, res in zip(records, results, strict=True)}


_DEFAULT: SandboxRunner | None = None


def default_runner() -> SandboxRunner:
    """The process-wide runner shared by reward functions that were not given one."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = SandboxRunner()
    return _DEFAULT
