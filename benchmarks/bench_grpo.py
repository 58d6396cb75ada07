"""Benchmark: seconds per GRPO step on CPU, split into generation / reward / optimizer, and the
sandbox reward throughput (inside training and standalone).

    python benchmarks/bench_grpo.py [--model smollm2] [--benchmark microbench] [--steps 4]
        [--num-generations 4] [--batch 8] [--max-completion-length 128] [--reward outcome_only]
        [--workers 2] [--threads N] [--workdir /tmp/bench_grpo]

Part 1 runs recode_lib.training.grpo.train (TRL GRPOTrainer, the real sandbox-backed reward) for
--steps steps and reads the run's metrics.jsonl: per step, the wall time and its split
(generation = TRL's _generate, reward = _calculate_rewards, optimizer = the rest: forward/backward
of the policy loss and the update), then the medians over steps 2.. (step 1 pays warm-up).
Part 2 measures the reward path alone: N completions (the problems' reference solutions, plus
the same number of wrong ones) scored by the `outcome` reward through a fresh SandboxRunner,
cold (executed) and warm (same step: served by the per-step cache), in submissions per second.
Prints a table and the ratios; writes <workdir>/bench_grpo.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def part1(a, problems) -> dict:
    from recode_lib.core.run_files import read_metrics
    from recode_lib.training.grpo import load_recipe, train

    out = Path(a.workdir) / "run"
    shutil.rmtree(out, ignore_errors=True)
    r = load_recipe(
        "cg_grpo_smoke",
        model=a.model,
        rewards=[{"name": a.reward}],
        max_steps=a.steps,
        num_generations=a.num_generations,
        per_device_train_batch_size=a.batch,
        max_completion_length=a.max_completion_length,
        sandbox_workers=a.workers,
        save_steps=10_000,
        save_total_limit=None,
        cpu_threads=a.threads,
    )
    t0 = time.perf_counter()
    train(r, problems, out)
    wall = time.perf_counter() - t0
    rows = read_metrics(out)
    print(
        f"\n== GRPO steps: model={a.model} completions/step={a.batch} "
        f"(G={a.num_generations}) max_len={a.max_completion_length} reward={a.reward}"
    )
    print(
        f"{'step':>4} {'step_s':>7} {'gen_s':>7} {'reward_s':>8} {'optim_s':>7} "
        f"{'mean_len':>8} {'reward':>6} {'executed':>8} {'sbx/s':>6}"
    )
    for m in rows:
        per_s = m.get("sandbox/per_s")
        print(
            f"{m['step']:>4} {m['time/step_s']:7.2f} {m['time/generation_s']:7.2f} "
            f"{m['time/reward_s']:8.3f} {m['time/optimizer_s']:7.2f} "
            f"{m.get('completions/mean_length', 0):8.1f} {m.get('reward', 0):6.2f} "
            f"{m.get('sandbox/executed', 0):8} {per_s if per_s is None else round(per_s, 1)!s:>6}"
        )
    steady = rows[1:] or rows
    med = {
        k: statistics.median(m[f"time/{k}"] for m in steady)
        for k in ("step_s", "generation_s", "reward_s", "optimizer_s")
    }
    executed = sum(m.get("sandbox/executed", 0) for m in rows)
    sbx_s = sum(m.get("sandbox/seconds", 0.0) for m in rows)
    res = {
        "wall_s": wall,
        "median": med,
        "share": {k: med[f"{k}_s"] / med["step_s"] for k in ("generation", "reward", "optimizer")},
        "sandbox_executed": executed,
        "sandbox_seconds": sbx_s,
        "sandbox_per_s_in_training": executed / sbx_s if sbx_s else None,
        "steps": rows,
    }
    print(
        f"median s/step (steps 2..): {med['step_s']:.2f}  = generation "
        f"{res['share']['generation']:.0%} + reward {res['share']['reward']:.1%} + optimizer "
        f"{res['share']['optimizer']:.0%}; run wall {wall:.1f}s incl. load/save"
    )
    print(
        f"sandbox inside training: {executed} submissions in {sbx_s:.2f}s "
        f"({res['sandbox_per_s_in_training'] or 0:.1f}/s)"
    )
    return res


def part2(a, problems) -> dict:
    from recode_lib.core.prompts import format_response
    from recode_lib.rewards import get_reward
    from recode_lib.rewards.execution import SandboxRunner

    refs = [p for p in problems if p.reference_solution]
    if not refs:
        print("\n(no reference solutions in this benchmark: standalone throughput skipped)")
        return {}
    refs = (refs * (a.n_reward // len(refs) + 1))[: a.n_reward // 2]
    comps = [format_response("Reference.", p.reference_solution) for p in refs]
    comps += [
        format_response("Wrong.", "def _nothing():\n    return None\n" + "raise SystemExit(1)")
        for _ in refs
    ]
    judged = [p.to_json() for p in refs] * 2  # the training rows' `problem` column
    out = {}
    print(f"\n== reward throughput: {len(comps)} completions (half reference, half failing)")
    for w in sorted({1, a.workers}):
        runner = SandboxRunner(workers=w)
        fn = get_reward("outcome", runner=runner)
        state = type("S", (), {"global_step": 0})()
        t0 = time.perf_counter()
        r1 = fn([""] * len(comps), comps, problem=judged, trainer_state=state)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        fn([""] * len(comps), comps, problem=judged, trainer_state=state)
        warm = time.perf_counter() - t0
        uniq = runner.stats.executed
        out[f"workers_{w}"] = {
            "cold_s": cold,
            "warm_s": warm,
            "executed": uniq,
            "cold_per_s": len(comps) / cold,
            "warm_per_s": len(comps) / warm,
            "reference_pass_rate": sum(r1[: len(refs)]) / len(refs),
        }
        print(
            f"workers={w}: cold {len(comps) / cold:7.1f}/s ({uniq} unique executed, "
            f"{cold:.2f}s)  warm-cache {len(comps) / warm:9.1f}/s  "
            f"reference pass rate {out[f'workers_{w}']['reference_pass_rate']:.2f}"
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--benchmark", default="microbench")
    ap.add_argument("--n-problems", type=int, default=8)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--num-generations", type=int, default=4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--max-completion-length", type=int, default=128)
    ap.add_argument("--reward", default="outcome_only")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads (1 is much faster when the cores are oversubscribed)",
    )
    ap.add_argument("--n-reward", type=int, default=64)
    ap.add_argument("--skip-train", action="store_true")
    ap.add_argument("--workdir", default="/tmp/bench_grpo")
    a = ap.parse_args()
    from recode_lib.data import load_benchmark

    problems = load_benchmark(a.benchmark, limit=a.n_problems)
    Path(a.workdir).mkdir(parents=True, exist_ok=True)
    res = {"args": vars(a)}
    if not a.skip_train:
        res["train"] = part1(a, problems)
    res["reward"] = part2(a, load_benchmark(a.benchmark, limit=max(a.n_problems, 32)))
    (Path(a.workdir) / "bench_grpo.json").write_text(json.dumps(res, indent=2, default=str))
    print(f"\nwrote {Path(a.workdir) / 'bench_grpo.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
