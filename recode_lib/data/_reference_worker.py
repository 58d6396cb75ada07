"""Subprocess worker: run trusted reference solutions on inputs, print outputs as JSON lines.

Run as `python -m recode_lib.data._reference_worker`; reads one job per stdin line
{"id", "code", "entry_point", "inputs": [encoded args lists], "output_not_none": bool} and prints
{"id", "outputs": [encoded], "times": [s]} or {"id", "error": "..."} per job, flushed. When the
outputs are too large to store ("outputs": null) the line carries "digests": the sha256 of each
output's canonical sandbox encoding (output_digest), which the judge compares first.
Only for the benchmarks' own reference code (no isolation: it is trusted, like EvalPlus's
trusted_exec). A job is stopped after JOB_TIMEOUT_S seconds.
"""

import contextlib
import copy
import io
import json
import signal
import sys
import time

from recode_lib.data.pyvalues import decode, encode
from recode_lib.sandbox.codec import digest as output_digest

JOB_TIMEOUT_S = 300


def _alarm(signum, frame):
    raise TimeoutError(f"reference job exceeded {JOB_TIMEOUT_S} s")


def approx_chars(v, budget: int) -> int:
    """Cheap upper-bound-ish estimate of len(json.dumps(v)); stops counting past budget
    (str() of a 10^5-digit integer is quadratic, so ints are sized from their bit length)."""
    if isinstance(v, bool) or v is None:
        return 5
    if isinstance(v, int):
        return int(v.bit_length() * 0.30103) + 2
    if isinstance(v, (str, bytes)):
        return len(v) + 2
    if isinstance(v, (list, tuple, set, frozenset, dict)):
        total = 2
        for x in v.items() if isinstance(v, dict) else v:
            total += approx_chars(x, budget - total) + 2
            if total > budget:
                break
        return total
    return 24


def run_job(job: dict) -> dict:
    g: dict = {"__name__": "__reference__"}
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        exec(job["code"], g)
    fn = g[job["entry_point"]]
    outs, times, size, digests = [], [], 0, []
    limit = job.get("max_output_chars")
    for i, args in enumerate(decode(job["inputs"])):
        args = copy.deepcopy(args)
        t0 = time.perf_counter()
        try:
            with contextlib.redirect_stdout(sink):
                out = fn(*args)
        except Exception as exc:
            raise RuntimeError(f"input {i}: {type(exc).__name__}: {exc}") from None
        times.append(time.perf_counter() - t0)
        if job.get("output_not_none"):
            out = out is not None
        if outs is not None and limit:
            size += approx_chars(out, limit - size)
            if size > limit:  # too big to store: the tests recompute the outputs instead
                outs = None
        if outs is not None:
            outs.append(encode(out))
        digests.append(output_digest(out))
        sink.seek(0)
        sink.truncate()
    res = {"id": job["id"], "outputs": outs, "times": times}
    if outs is None:
        res["digests"] = digests
    return res


def main() -> None:
    signal.signal(signal.SIGALRM, _alarm)
    sys.setrecursionlimit(10000)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)  # EvalPlus outputs include integers of 10^4+ digits
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        signal.alarm(JOB_TIMEOUT_S)
        try:
            res = run_job(job)
        except BaseException as exc:  # report, keep serving the next job
            res = {"id": job.get("id"), "error": f"{type(exc).__name__}: {exc}"[:2000]}
        finally:
            signal.alarm(0)
        try:
            line = json.dumps(res)
        except (TypeError, ValueError) as exc:
            line = json.dumps({"id": job.get("id"), "error": f"unserialisable output: {exc}"})
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
