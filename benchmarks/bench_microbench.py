"""Margins of the micro-benchmark: reference vs time limit vs naive on the largest input.

    python benchmarks/bench_microbench.py [--cap 20] [NAME ...]

Prints, per problem, the reference's and the naive solution's wall time on the largest test
(python start included, naive capped at --cap seconds) and the ratios limit/reference (headroom
of correct efficient code) and naive/limit (how clearly the naive solution times out).
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from recode_lib.data import microbench as mb  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--cap", type=float, default=20.0)
    args = ap.parse_args()
    limits = mb.read_limits()
    print(
        f"{'problem':18s} {'len':>7s} {'ref_s':>7s} {'limit_s':>7s} {'limit/ref':>9s} "
        f"{'naive_s':>8s} {'naive/limit':>11s}"
    )
    worst_head, worst_naive = float("inf"), float("inf")
    for name in args.names or mb.problem_names():
        spec = mb.load_spec(name)
        big = mb.make_cases(spec)[-1]
        t_ref, _ = mb._timed_run(spec.REFERENCE, big["input"], 60)
        t_naive, out = mb._timed_run(spec.NAIVE, big["input"], args.cap)
        lim = limits[name]["time_limit_s"]
        capped = ">" if out is None else " "
        worst_head = min(worst_head, lim / t_ref)
        worst_naive = min(worst_naive, t_naive / lim)
        print(
            f"{name:18s} {big['input_len']:7d} {t_ref:7.3f} {lim:7.2f} {lim / t_ref:9.1f} "
            f"{capped}{t_naive:7.2f} {t_naive / lim:11.1f}"
        )
    print(
        f"smallest headroom limit/reference: {worst_head:.1f}x; smallest naive/limit: "
        f"{worst_naive:.1f}x"
    )


if __name__ == "__main__":
    main()
