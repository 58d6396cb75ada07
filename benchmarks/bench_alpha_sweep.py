"""Benchmark: the alpha sweep in memory (one live model) vs writing K checkpoints, evaluating each.

    python benchmarks/bench_alpha_sweep.py [--alphas=-2.5,0,0.5,1,3.5] [--problems 2]
                                           [--max-new-tokens 24] [--dtype bfloat16]
                                           [--workdir /tmp/bench_alpha_sweep]

Endpoints: the embedded SmolLM2-135M (recode_lib.core.models.resolve_model("smollm2")) cast to
--dtype as `low`, and a perturbed copy (every float tensor + 1% of its std in Gaussian noise) as
`high`. Workload per alpha: the first --problems microbench problems, greedy, n=1,
--max-new-tokens tokens, hf backend on CPU with --threads torch threads, sandbox with 1 worker
(the same for both methods).
  in-memory    recode_lib.weights.sweep.sweep_alphas: one model load, both endpoints read once,
               per alpha theta_alpha copied into the live model, then evaluated
  checkpoints  merge_grid writes K checkpoints (one pass), then EvalSpec.evaluate on each
               folder (a model load per alpha), i.e. notebook 07 before the in-memory sweep
Both run in this process, one after the other, on fresh output folders, with the sources in
the page cache (a warm-up load first). Reported: wall time of each method and its parts, disk
written, and the in-memory sweep's cost expressed as (one model load + K evaluations), the goal.
Both methods must give the same pass@1 per alpha (greedy, same values): printed and checked.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def make_endpoints(workdir: Path, dtype: str) -> tuple[Path, Path]:
    import torch
    from transformers import AutoModelForCausalLM

    from recode_lib.core.models import resolve_model

    src = Path(resolve_model("smollm2"))
    low, high = workdir / "low", workdir / "high"
    for dst, noise in ((low, 0.0), (high, 0.01)):
        if (dst / "model.safetensors").is_file():
            continue
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.safetensors", ".complete"))
        net = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32)
        g = torch.Generator().manual_seed(1)
        with torch.no_grad():
            for p in net.parameters():
                if noise:
                    p.add_(noise * p.std() * torch.randn(p.shape, generator=g))
        net.to(getattr(torch, dtype)).save_pretrained(dst)
    return low, high


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alphas", default="-2.5,0,0.5,1,3.5")
    ap.add_argument("--problems", type=int, default=2)
    ap.add_argument("--max-new-tokens", type=int, default=24)
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--workdir", default="/tmp/bench_alpha_sweep")
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads for generation (1: steadier on shared cores)",
    )
    args = ap.parse_args()

    import torch

    from recode_lib.core.models import load_model
    from recode_lib.data import load_benchmark
    from recode_lib.evaluation.spec import EvalSpec
    from recode_lib.weights.merge import MergeConfig, alpha_dirname, merge_grid, parse_alphas
    from recode_lib.weights.sweep import sweep_alphas

    torch.set_num_threads(args.threads)
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    alphas = sorted(parse_alphas([args.alphas]))
    k = len(alphas)
    low, high = make_endpoints(work, args.dtype)
    problems = load_benchmark("microbench", limit=args.problems)
    spec = EvalSpec(
        backend="hf",
        temperature=0.0,
        max_new_tokens=args.max_new_tokens,
        n=1,
        batch_size=max(1, args.problems),
        workers=1,
        progress=False,
    )
    for d in ("mem", "ckpt"):
        shutil.rmtree(work / d, ignore_errors=True)

    t0 = time.perf_counter()
    load_model(str(low))  # warm-up: page cache, imports
    warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    load_model(str(low))
    one_load = time.perf_counter() - t0

    # -- checkpoints: write K, evaluate each -----------------------------------------------------
    t0 = time.perf_counter()
    merged = merge_grid(
        MergeConfig(
            str(low), str(high), tuple(alphas), str(work / "ckpt" / "merged"), progress=False
        )
    )
    t_merge = time.perf_counter() - t0
    written = du(work / "ckpt" / "merged")
    ck_eval, ck_pass = {}, {}
    for a in alphas:
        t1 = time.perf_counter()
        s = spec.evaluate(merged[a], problems, work / "ckpt" / "eval" / alpha_dirname(a))
        ck_eval[a] = time.perf_counter() - t1
        ck_pass[a] = s["pass@1"]
    t_ckpt = time.perf_counter() - t0

    # -- in memory: one live model -----------------------------------------------------------------
    t0 = time.perf_counter()
    res = sweep_alphas(low, high, alphas, problems, spec, work / "mem" / "eval", log=None)
    t_mem = time.perf_counter() - t0
    mem_eval = {
        a: res.seconds["evaluate"][a]
        - res.seconds["push"].get(a, 0.0)
        - (res.seconds["load_model"] + res.seconds["load_endpoints"] if a == alphas[0] else 0)
        for a in alphas
    }
    gen_only = sum(mem_eval.values())
    same = all(res.summaries[a]["pass@1"] == ck_pass[a] for a in alphas)

    print(
        f"SmolLM2-135M ({args.dtype}, {du(low) / 1e6:.0f} MB per checkpoint), K={k} alphas "
        f"{alphas}, {len(problems)} microbench problems x {args.max_new_tokens} tokens greedy, "
        f"torch threads {torch.get_num_threads()}"
    )
    print(f"one model load (warm page cache): {one_load:.2f} s   (first, cold: {warm:.2f} s)")
    print()
    print(f"{'method':<13}{'total s':>9}{'  parts'}")
    print(
        f"{'checkpoints':<13}{t_ckpt:>9.2f}  merge {t_merge:.2f} s ({written / 1e9:.2f} GB written)"
        f" + {k} x (load + evaluate) {sum(ck_eval.values()):.2f} s "
        f"[{', '.join(f'{v:.1f}' for v in ck_eval.values())}]"
    )
    print(
        f"{'in-memory':<13}{t_mem:>9.2f}  model load {res.seconds['load_model']:.2f} s + endpoints "
        f"{res.seconds['load_endpoints']:.2f} s + {k} pushes "
        f"{sum(res.seconds['push'].values()):.2f} s + {k} evaluations {gen_only:.2f} s; "
        "0 GB written"
    )
    goal = one_load + gen_only
    print()
    print(
        f"goal (one model load + K evaluations) = {one_load:.2f} + {gen_only:.2f} = {goal:.2f} s; "
        f"in-memory = {t_mem / goal:.2f} x goal; checkpoints = {t_ckpt / goal:.2f} x goal; "
        f"speed-up {t_ckpt / t_mem:.2f} x"
    )
    print(
        f"same pass@1 per alpha in both methods: {same}  "
        f"{ {a: round(ck_pass[a], 3) for a in alphas} }"
    )
    if not same:
        sys.exit("in-memory and checkpoint evaluations disagree")


if __name__ == "__main__":
    main()
