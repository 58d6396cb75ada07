"""How torch's OpenMP threads wait between parallel regions in this process: chosen once, at
`import recode_lib`, from how busy the machine is then.

    import recode_lib                  # calls choose_wait_policy() before torch is imported
    recode_lib.core.openmp.CHOSEN      # "PASSIVE", or None: OpenMP's own default left
    recode_lib.core.openmp.describe()   # what provenance() stamps on results (wall times differ)

OpenMP reads OMP_WAIT_POLICY once, when torch loads it, so the choice has to be made before.
Two policies, each right on one kind of machine (2-core VM, a laptop GRPO step's bf16 sampling,
16 completions x 64 tokens, docs/measured.md):
- quiet machine: OpenMP's default (a thread spins a little before it sleeps) took 10.8-11.2 s,
  PASSIVE (sleep at once) 14.1-16.0 s; in a GRPO step, generation 24.9 s vs 48.5 s and the
  forward/backward 24.1 s vs 29-38 s. Every decoding step is hundreds of small parallel
  regions, and waking a sleeping thread costs more than the work between them.
- busy machine (another process holding one of the 2 cores): default 45.9 s, PASSIVE 22.6 s.
  Spinning threads wait for a partner that is not running and take the core it needs.
So: when other processes keep at least BUSY_CORES cores busy while recode_lib is imported
(measured over WINDOW_S from /proc/stat, this process's own CPU time subtracted), it sets
OMP_WAIT_POLICY=PASSIVE, which child processes inherit; otherwise it leaves the variable
unset. A value already in the environment is never changed (set OMP_WAIT_POLICY=PASSIVE on a
machine that gets busy later, e.g. two notebooks at once). Off Linux it does nothing.
The wait policy changes only speed, never a result: the arithmetic is the same.
"""

from __future__ import annotations

import os
import sys
import time

try:
    import resource
except ImportError:  # not on Windows
    resource = None

BUSY_CORES = 0.5
WINDOW_S = 0.05
CHOSEN: str | None = None
MEASURED_BUSY: float | None = None  # others' busy cores measured at import (None: not measured)


def cpu_jiffies(stat_path: str = "/proc/stat") -> tuple[int, int] | None:
    """(busy, total) clock ticks of all CPUs since boot, from the "cpu" line of /proc/stat
    (idle and iowait are not busy); None when it cannot be read."""
    try:
        with open(stat_path) as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 5:
        return None
    ticks = [int(x) for x in fields[1:9]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return sum(ticks) - idle, sum(ticks)


def own_cpu_seconds() -> float:
    """This process's user + system CPU seconds, every thread included."""
    if resource is None:
        t = os.times()
        return t.user + t.system
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def others_busy_cores(window_s: float = WINDOW_S, stat_path: str = "/proc/stat") -> float | None:
    """How many cores other processes kept busy during the next `window_s` seconds (this
    process's own CPU time subtracted); None where /proc/stat cannot be read."""
    a, own_a, t_a = cpu_jiffies(stat_path), own_cpu_seconds(), time.monotonic()
    if a is None:
        return None
    time.sleep(window_s)
    b, own_b, t_b = cpu_jiffies(stat_path), own_cpu_seconds(), time.monotonic()
    if b is None:
        return None
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    busy_s = (b[0] - a[0]) / hz - (own_b - own_a)
    return max(busy_s, 0.0) / max(t_b - t_a, 1e-6)


def choose_wait_policy(environ=None, busy_cores: float | None = None) -> str | None:
    """Set OMP_WAIT_POLICY=PASSIVE in `environ` (os.environ) when other processes keep
    BUSY_CORES or more cores busy (`busy_cores`, measured when not given); leave it alone when
    it is already set or the machine is quiet, and measures nothing when torch (so OpenMP) is
    already loaded in this process. Returns the policy it set, or None."""
    global CHOSEN, MEASURED_BUSY
    own = environ is None  # this process's environment: record the choice
    environ = os.environ if own else environ
    if "OMP_WAIT_POLICY" in environ:
        return None
    if busy_cores is None:
        if own and "torch" in sys.modules:  # OpenMP has read its policy already: too late
            return None
        busy_cores = others_busy_cores()
        if own:
            MEASURED_BUSY = busy_cores
    if busy_cores is None or busy_cores < BUSY_CORES:
        return None
    environ["OMP_WAIT_POLICY"] = "PASSIVE"
    if own:
        CHOSEN = "PASSIVE"
    return "PASSIVE"


def describe() -> dict:
    """What this process runs with, for a result's provenance: the policy ("default" when
    OpenMP's own), whether import chose it, and the others' busy cores measured then."""
    return {
        "wait_policy": os.environ.get("OMP_WAIT_POLICY") or "default",
        "chosen_at_import": CHOSEN is not None,
        "others_busy_cores": None if MEASURED_BUSY is None else round(MEASURED_BUSY, 2),
    }
