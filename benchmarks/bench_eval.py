"""Benchmark: end-to-end evaluation throughput (problems per minute) on CPU, embedded model.

    python benchmarks/bench_eval.py [--benchmark humanevalplus] [--limit 8] [--max-new-tokens 256]
                                    [--batch-sizes 1,8] [--threads 2] [--workdir /tmp/bench_eval]

For each batch size: a fresh output folder (no cache), EvalSpec.evaluate (the evaluation loop,
recode_lib.evaluation.loop) with the hf backend on the first --limit problems, greedy, one
sample each, the loaded model reused. Reported per run: model load,
generation and execution seconds, generated tokens per second, end-to-end problems per minute
(load excluded; the harness's own timing), pass@1 and the outcome rates. With more than one
batch size it prints the speed-up of each over the first. The figures depend on how busy the
machine's cores are: run it on an otherwise idle machine before quoting them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--benchmark", default="humanevalplus")
    ap.add_argument("--limit", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=256)
    ap.add_argument("--batch-sizes", default="8")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch default)")
    ap.add_argument("--workers", type=int, default=2, help="sandbox workers")
    ap.add_argument("--workdir", default="/tmp/bench_eval")
    args = ap.parse_args()

    import torch

    from recode_lib.data import load_benchmark
    from recode_lib.evaluation.spec import EvalSpec
    from recode_lib.generation import Backend, get_generator

    if args.threads:
        torch.set_num_threads(args.threads)
    problems = load_benchmark(args.benchmark, limit=args.limit)
    spec = EvalSpec(
        temperature=0.0,
        n=1,
        max_new_tokens=args.max_new_tokens,
        workers=args.workers,
        progress=False,
    )
    t = time.perf_counter()
    gen = get_generator(Backend.HF, args.model, batch_size=1)
    load_s = time.perf_counter() - t
    print(
        f"{args.benchmark}: {len(problems)} problems, greedy, max_new_tokens "
        f"{args.max_new_tokens}, torch threads {torch.get_num_threads()}, model load "
        f"{load_s:.1f} s"
    )
    results = []
    for bs in [int(b) for b in args.batch_sizes.split(",")]:
        gen.batch_size = bs
        out = Path(args.workdir) / f"bs{bs}"
        shutil.rmtree(out, ignore_errors=True)
        s = spec.evaluate(args.model, problems, out, benchmark=args.benchmark, generator=gen)
        tm = s["timing"]
        toks = s["tokens"]["mean"] * s["n_samples"]
        row = {
            "batch_size": bs,
            "generation_s": round(tm["generation_s"], 1),
            "execution_s": round(tm["execution_s"], 1),
            "tokens_per_s": round(toks / tm["generation_s"], 1),
            "problems_per_minute": round(tm["problems_per_minute"], 2),
            "pass@1": round(s["pass@1"], 3),
            "mean_tokens": round(s["tokens"]["mean"], 1),
            "truncated": round(s["tokens"]["truncated_rate"], 3),
            "outcomes": {k: round(v, 3) for k, v in s["outcomes"].items()},
        }
        results.append(row)
        print(json.dumps(row))
    base = results[0]["problems_per_minute"]
    for r in results[1:]:
        print(
            f"batch {r['batch_size']} vs batch {results[0]['batch_size']}: "
            f"{r['problems_per_minute'] / base:.2f}x problems/minute"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
