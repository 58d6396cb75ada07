"""SandboxConfig: the knobs of the execution sandbox, one dataclass with documented fields.

    cfg = SandboxConfig(time_limit_s=2.0, workers=2)
    execute_many(records, config=cfg)

A record's own `time_limit_s` / `memory_mb` override the defaults here. This module only
holds settings; limits are applied by limits.py inside the worker processes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

ISOLATION_MODES = ("auto", "root", "userns", "plain")


@dataclass(frozen=True)
class SandboxConfig:
    time_limit_s: float = 10.0  # wall clock per test (and for loading the submission)
    memory_mb: int = 1024  # address-space limit (RLIMIT_AS) of the sandboxed process
    max_output_bytes: int = 64 << 20  # stdout of one stdio test / one encoded return value
    max_processes: int = 64  # processes + threads at once (RLIMIT_NPROC; see limits.py)
    tmp_size_mb: int = 64  # size of the private writable /tmp (root/userns modes)
    isolation: str = "auto"  # auto | root | userns | plain (see limits.py)
    workers: int | None = None  # pool size for execute_many; None = os.cpu_count()
    python: str | None = None  # interpreter for the workers; None = sys.executable
    stall_grace_s: float = (
        30.0  # judge-side watchdog: a worker silent for time limit + this is killed
    )
    # call tests: hand each test's input to the submission's process only after the previous
    # test reported (zygote.Child.feed_next), so no call can read a later test's input and
    # spend its slot precomputing that test (pooling per-test time limits). Off by default:
    # EvalPlus's and LiveCodeBench's own harnesses hold every input in the process too, and
    # the round trip per test costs ~1.3-1.45x the wall time on HumanEval+ (bench_sandbox.py)
    sealed_inputs: bool = False
    # testlib checkers (CodeContests+) that cannot be built (no working C++ compiler, a checker
    # that does not compile): False (default) refuses to judge (checker.CheckerUnavailable,
    # naming the package to install); True judges by exact comparison instead, and every result
    # it touches says "checker": "exact_fallback" with its "checker_reason"
    checker_fallback: bool = False

    def __post_init__(self):
        if self.isolation not in ISOLATION_MODES:
            raise ValueError(
                f"SandboxConfig.isolation must be one of {ISOLATION_MODES}, got {self.isolation!r}"
            )
        if not self.time_limit_s > 0 or not self.memory_mb > 0 or not self.stall_grace_s > 0:
            raise ValueError(
                "SandboxConfig.time_limit_s, memory_mb and stall_grace_s must be positive"
            )

    def worker_config(self) -> dict:
        """The part each warm worker receives once, at start."""
        return {
            "isolation": self.isolation,
            "max_processes": self.max_processes,
            "tmp_size_mb": self.tmp_size_mb,
        }

    def replace(self, **changes) -> SandboxConfig:
        return dataclasses.replace(self, **changes)
