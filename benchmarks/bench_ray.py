"""Ray fan-out benchmark: sandbox throughput (records/s) of the local pool vs Ray with 1 and 2
worker CPUs on a local Ray cluster, and their ratios; verdicts are checked equal.

    python benchmarks/bench_ray.py [--workers 2] [--limit 60] [--ray-cpus 1,2] [--chunk-size N]

Records: HumanEval+ canonical solutions (recode_lib.data.evalplus.sandbox_records, base+plus
inputs) when the benchmark data is present (RECODE_DATA_DIR or ../shared/data), else a synthetic
set of call/stdio records. The local pool runs with --workers workers. Each Ray configuration
starts its own local cluster (ray.init(num_cpus=K), not timed), runs the records once cold
(Ray worker processes and their sandbox pools start: what a one-off `recode sandbox --ray`
pays) and once warm (steady state of a long evaluation), each task with one sandbox worker.
The load average is printed next to the figures (2 shared cores: ratios mean more than
absolute figures). Prints figures only; needs the `scale` extra.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def records(limit: int) -> tuple[str, list[dict]]:
    try:
        from recode_lib.data.evalplus import sandbox_records
        from recode_lib.data.humaneval import load_humanevalplus

        recs = sandbox_records(load_humanevalplus(limit=limit, download=False))
        if recs:
            return f"HumanEval+ canonical solutions ({len(recs)} records)", recs
    except Exception as exc:  # no benchmark data here: the synthetic set
        print(f"(HumanEval+ not available: {type(exc).__name__}: {exc}; synthetic records)")
    recs = []
    for i in range(limit):
        if i % 2:
            recs.append(
                {
                    "id": f"s{i}",
                    "code": "n = int(input())\nprint(sum(range(n)))\n",
                    "tests": {
                        "kind": "stdio",
                        "cases": [
                            {"input": f"{k}\n", "output": f"{sum(range(k))}\n"}
                            for k in (10, 1000, 100000)
                        ],
                    },
                }
            )
        else:
            recs.append(
                {
                    "id": f"c{i}",
                    "code": "def f(x):\n    return sorted(x)[::-1]\n",
                    "tests": {
                        "kind": "call",
                        "fn_name": "f",
                        "cases": [
                            {"args": [list(range(k))], "expected": list(range(k))[::-1]}
                            for k in (1, 100, 10000)
                        ],
                    },
                }
            )
    return f"synthetic call/stdio records ({len(recs)})", recs


def strip(results):
    return [(r["id"], r["status"], r["passed"], r["total"]) for r in results]


def timed(fn) -> tuple[float, list]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2, help="local pool workers")
    ap.add_argument("--limit", type=int, default=60, help="records")
    ap.add_argument("--ray-cpus", default="1,2", help="Ray cluster sizes (CPUs) to run")
    ap.add_argument("--chunk-size", type=int, default=None, help="records per Ray task")
    ap.add_argument(
        "--start-attempts",
        type=int,
        default=6,
        help="tries to start each local Ray cluster (a loaded machine can miss Ray's "
        "15 s agent wait)",
    )
    args = ap.parse_args()
    import ray

    from recode_lib.sandbox import execute_many
    from recode_lib.sandbox.fanout import start_local

    what, recs = records(args.limit)
    print(
        f"records: {what}; {len(recs)} records; "
        + "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    )
    execute_many(recs[:2], workers=1)  # start the local pool's first worker
    t_local, local = timed(lambda: execute_many(recs, workers=args.workers))
    rate_local = len(recs) / t_local
    rows = [(f"local pool ({args.workers} workers)", t_local, rate_local, None)]
    for k in [int(x) for x in args.ray_cpus.split(",") if x.strip()]:
        t0 = time.perf_counter()
        start_local(num_cpus=k, attempts=args.start_attempts)
        t_init = time.perf_counter() - t0
        try:
            t_cold, cold = timed(
                lambda: execute_many(recs, ray="local", workers=1, chunk_size=args.chunk_size)
            )
            t_warm, warm = timed(
                lambda: execute_many(recs, ray="local", workers=1, chunk_size=args.chunk_size)
            )
        finally:
            ray.shutdown()
        same = strip(cold) == strip(local) and strip(warm) == strip(local)
        rows.append(
            (
                f"ray, {k} CPU(s), cold (init {t_init:.1f} s not counted)",
                t_cold,
                len(recs) / t_cold,
                same,
            )
        )
        rows.append((f"ray, {k} CPU(s), warm", t_warm, len(recs) / t_warm, same))
    print(f"{'configuration':<48} {'seconds':>8} {'records/s':>10} {'vs local':>9}  verdicts")
    for name, t, rate, same in rows:
        print(
            f"{name:<48} {t:8.2f} {rate:10.2f} {rate / rate_local:9.2f}  "
            f"{'-' if same is None else ('equal' if same else 'DIFFER')}"
        )
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
