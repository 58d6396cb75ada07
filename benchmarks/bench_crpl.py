"""Benchmark: CRPL synthesis and reasoning-reward scoring throughput on CPU, embedded model.

    python benchmarks/bench_crpl.py [--model smollm2] [--benchmark microbench] [--limit 6]
        [--policy-max-new-tokens 160] [--max-new-tokens 128] [--batch-size 8]
        [--no-trailing-reasoning]
        [--pair-traces 5000] [--batch-sizes 1,8] [--n-score 64] [--workers 2] [--threads N]
        [--skip traces,llm,rules,pairs,score] [--workdir /tmp/bench_crpl] [--progress]

Stages, one JSON row each (the model is loaded once, outside the timings, and warmed up; the
sandbox pool is warmed up too; every run starts from a fresh <workdir>/run, so no resumable
store or cache is reused):
  traces  recode_lib.process_reward.crpl.generate_base_traces (hf backend, the smoke profile's
          sampling) on the first --limit problems: traces/s, generated tokens/s (the records'
          n_tokens), the split between generation and sandbox execution (timed by wrapping the
          generator and the `execute=` hook), the usable fraction and the verdict outcomes.
  llm     synthesize_rewrites with one LLM GeneratorSpec (same model, n_candidates 1,
          rule_fallback off, --max-new-tokens) over the usable traces x 3 dimensions x 2
          directions: rewrites/s, generated tokens/s, acceptance rate and rejection counts
          (synthesis_report). With no usable trace (or `traces` skipped) it uses traces built
          from the problems' reference solutions with a short fixed reasoning, and says so
          (trace_source "reference_fallback").
  rules   the same traces through the rule rewriter (GeneratorSpec model "rules"): rewrites/s
          end to end (the store fsyncs every record) and for the rule + check compute alone.
  pairs   recode_lib.process_reward.pairs.build_pairs over the traces and rewrites, replicated
          to about --pair-traces traces (distinct trace/problem ids and prompts, so no copy
          duplicates another), in "single" and "cross" mode: pairs/s (best of --pair-repeats).
          Without any accepted rewrite it falls back to the reference traces' rule rewrites.
  score   save_untrained_reward_model (scores are meaningless; throughput is not) then
          ProcessRewardScorer at each of --batch-sizes over --n-score (prompt, trace) pairs
          (base traces and accepted rewrites, repeated): sequences/s, tokens/s, mean tokens
          per sequence; the speed-up of each batch size over the first.
The summary lines at the end give the ratios. The figures depend on how busy the machine's
cores are: the load average is printed first, and the timed rows carry cpu_util (this
process's CPU seconds / wall seconds, about the torch thread count when nothing competes).
When another process holds a core, torch's threads wait on each other and a forward pass can
be ten times slower: run it on an otherwise idle machine before quoting figures, or compare
with --threads 1.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STAGES = ("traces", "llm", "rules", "pairs", "score")

# The reference-fallback reasoning: several lines, one repeated (so the rule optimizer applies),
# a number and a comparison/ordering word (so fact perturbation applies).
FALLBACK_REASONING = (
    "Read all the input at once and parse the integers.\n"
    "Process the values in ascending order of position and keep what is needed.\n"
    "Read all the input at once and parse the integers.\n"
    "Each of the n values is handled once, so the work is linear for n >= 1.\n"
    "Print the answer on one line."
)


class TimedGenerator:
    """Delegates .generate to a generator; adds up the seconds and generated tokens."""

    def __init__(self, gen):
        self.gen, self.seconds, self.n_tokens, self.calls = gen, 0.0, 0, 0

    def generate(self, prompts, sampling, **kw):
        t = time.perf_counter()
        outs = self.gen.generate(prompts, sampling, **kw)
        self.seconds += time.perf_counter() - t
        self.n_tokens += sum(c.n_tokens for o in outs for c in o)
        self.calls += 1
        return outs


class Clock:
    """Wall and process CPU seconds (all threads of this process; sandbox children excluded)."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def stop(self) -> tuple[float, float]:
        """(wall seconds, CPU seconds / wall seconds)."""
        wall = time.perf_counter() - self.wall
        return wall, round((time.process_time() - self.cpu) / wall, 2) if wall else None


def fallback_traces(problems) -> list[dict]:
    """Usable trace records built from reference solutions (no generation, no sandbox)."""
    from recode_lib.core.prompts import format_response, user_prompt

    out = []
    for p in problems:
        if not p.reference_solution:
            continue
        out.append(
            {
                "id": f"{p.id}#ref",
                "problem_id": p.id,
                "policy": "reference",
                "prompt": user_prompt(p),
                "entry_point": p.entry_point,
                "response": "",
                "reasoning": FALLBACK_REASONING,
                "reasoning_from": "fixed",
                "code": p.reference_solution,
                "trace": format_response(FALLBACK_REASONING, p.reference_solution),
                "usable": True,
                "format_ok": True,
                "reason": "",
                "n_tokens": 0,
                "verdict": {
                    "status": "not_run",
                    "outcome": "not_run",
                    "passed": None,
                    "total": None,
                },
            }
        )
    return out


def replicate(traces, rewrites, target: int):
    """Copies of traces and rewrites with distinct ids, problem ids and prompts (~target traces)."""
    copies = max(1, math.ceil(target / max(1, len(traces))))
    tr, rw = [], []
    for i in range(copies):
        suf = f"~{i}"
        for t in traces:
            tr.append(
                dict(
                    t,
                    id=t["id"] + suf,
                    problem_id=t["problem_id"] + suf,
                    prompt=f"{t['prompt']}\n(copy {i})",
                )
            )
        for r in rewrites:
            rw.append(
                dict(
                    r,
                    id=r["id"] + suf,
                    trace_id=r["trace_id"] + suf,
                    problem_id=r["problem_id"] + suf,
                )
            )
    return tr, rw


def stage_traces(a, problems, gen, execute, run: Path):
    from recode_lib.process_reward.crpl import CRPLConfig, generate_base_traces

    sbx = {"seconds": 0.0, "n": 0}

    def timed_execute(records):
        t = time.perf_counter()
        res = execute(records)
        sbx["seconds"] += time.perf_counter() - t
        sbx["n"] += len(records)
        return res

    cfg = CRPLConfig(
        policy=a.model,
        policy_max_new_tokens=a.policy_max_new_tokens,
        batch_size=a.batch_size,
        seed=a.seed,
        trailing_reasoning=a.trailing_reasoning,
    )
    tg = TimedGenerator(gen)
    clock = Clock()
    traces = generate_base_traces(
        problems, cfg, run / "traces.jsonl", generator=tg, execute=timed_execute
    )
    wall, cpu_util = clock.stop()
    toks = sum(r["n_tokens"] for r in traces)
    n_usable = sum(bool(r["usable"]) for r in traces)
    outcomes: dict[str, int] = {}
    for r in traces:
        outcomes[r["verdict"]["outcome"]] = outcomes.get(r["verdict"]["outcome"], 0) + 1
    row = {
        "stage": "traces",
        "n_traces": len(traces),
        "seconds": round(wall, 2),
        "traces_per_s": round(len(traces) / wall, 3),
        "n_tokens": toks,
        "tokens_per_s": round(toks / tg.seconds, 1) if tg.seconds else None,
        "mean_tokens": round(toks / len(traces), 1) if traces else None,
        "generation_s": round(tg.seconds, 2),
        "sandbox_s": round(sbx["seconds"], 2),
        "cpu_util": cpu_util,
        "sandbox_runs": sbx["n"],
        "other_s": round(wall - tg.seconds - sbx["seconds"], 3),
        "generation_frac": round(tg.seconds / wall, 3),
        "sandbox_frac": round(sbx["seconds"] / wall, 3),
        "usable": n_usable,
        "usable_frac": round(n_usable / len(traces), 3) if traces else None,
        "reasoning_from": sorted({r["reasoning_from"] for r in traces if r["usable"]}),
        "unusable_by_reason": {},
        "outcomes": outcomes,
    }
    for r in traces:
        if not r["usable"]:
            row["unusable_by_reason"][r["reason"]] = (
                row["unusable_by_reason"].get(r["reason"], 0) + 1
            )
    return row, traces


def stage_llm(a, traces, gen, run: Path, trace_source: str):
    from recode_lib.process_reward.crpl import (
        CRPLConfig,
        GeneratorSpec,
        synthesis_report,
        synthesize_rewrites,
    )

    spec = GeneratorSpec(
        "llm", a.model, max_new_tokens=a.max_new_tokens, n_candidates=1, seed=a.seed
    )
    cfg = CRPLConfig(
        policy=a.model, generators=[spec], rule_fallback=False, batch_size=a.batch_size, seed=a.seed
    )
    tg = TimedGenerator(gen)
    clock = Clock()
    rewrites = synthesize_rewrites(traces, cfg, run / "rewrites_llm.jsonl", generators={"llm": tg})
    wall, cpu_util = clock.stop()
    rep = synthesis_report(traces, rewrites)["rewrites"]
    n = len(rewrites)
    row = {
        "stage": "llm",
        "trace_source": trace_source,
        "n_traces": sum(bool(x.get("usable")) for x in traces),
        "n_rewrites": n,
        "seconds": round(wall, 2),
        "rewrites_per_s": round(n / wall, 3) if wall else None,
        "n_tokens": tg.n_tokens,
        "tokens_per_s": round(tg.n_tokens / tg.seconds, 1) if tg.seconds else None,
        "mean_tokens": round(tg.n_tokens / n, 1) if n else None,
        "generation_s": round(tg.seconds, 2),
        "cpu_util": cpu_util,
        "max_new_tokens": a.max_new_tokens,
        "accepted": rep["accepted"],
        "acceptance": round(rep["accepted"] / n, 3) if n else None,
        "rejected_by_reason": rep["rejected_by_reason"],
        "candidate_rejections_by_reason": rep["candidate_rejections_by_reason"],
        "accepted_by_dim_dir": rep["accepted_by_dim_dir"],
    }
    return row, rewrites


def stage_rules(a, traces, run: Path, trace_source: str):
    from recode_lib.core.prompts import format_response
    from recode_lib.process_reward.crpl import (
        CRPLConfig,
        GeneratorSpec,
        check_rewrite,
        synthesis_report,
        synthesize_rewrites,
    )
    from recode_lib.process_reward.rewrite_prompts import DIMENSIONS, DIRECTIONS, rule_rewrite

    cfg = CRPLConfig(
        policy=a.model,
        generators=[GeneratorSpec("rules", "rules", seed=a.seed)],
        batch_size=a.batch_size,
        seed=a.seed,
    )
    t = time.perf_counter()
    rewrites = synthesize_rewrites(traces, cfg, run / "rewrites_rules.jsonl")
    wall = time.perf_counter() - t
    # the same work without the store: rule rewrite + check, repeated to a measurable time
    jobs = [(x, d, r) for x in traces if x.get("usable") for d in DIMENSIONS for r in DIRECTIONS]
    reps, done, t = 0, 0, time.perf_counter()
    while jobs and (reps < 3 or time.perf_counter() - t < 0.5):
        for x, d, r in jobs:
            got = rule_rewrite(x["reasoning"], d, r, seed=a.seed)
            if got is not None:
                check_rewrite(x, format_response(got[0], x["code"]))
        done += len(jobs)
        reps += 1
    compute = time.perf_counter() - t
    rep = synthesis_report(traces, rewrites)["rewrites"]
    n = len(rewrites)
    row = {
        "stage": "rules",
        "trace_source": trace_source,
        "n_rewrites": n,
        "seconds": round(wall, 4),
        "rewrites_per_s": round(n / wall, 1) if wall else None,
        "compute_only_rewrites_per_s": round(done / compute, 1) if done else None,
        "accepted": rep["accepted"],
        "acceptance": round(rep["accepted"] / n, 3) if n else None,
        "accepted_by_op": rep["accepted_by_op"],
        "rejected_by_reason": rep["rejected_by_reason"],
    }
    return row, rewrites


def stage_pairs(a, traces, rewrites, trace_source: str) -> list[dict]:
    from recode_lib.process_reward.pairs import build_pairs

    tr, rw = replicate([x for x in traces if x.get("usable")], rewrites, a.pair_traces)
    gens = sorted({r["generator"] for r in rw if r["accepted"]})
    single = "rules" if "rules" in gens else (gens[0] if gens else None)
    rows = []
    for mode in ("single", "cross"):
        best, pairs, report = None, [], {}
        for _ in range(a.pair_repeats):
            t = time.perf_counter()
            pairs, report = build_pairs(
                tr, rw, mode=mode, generator=single, val_fraction=0.2, seed=a.seed
            )
            dt = time.perf_counter() - t
            best = dt if best is None else min(best, dt)
        rows.append(
            {
                "stage": "pairs",
                "mode": mode,
                "trace_source": trace_source,
                "generator": single if mode == "single" else gens,
                "n_traces": len(tr),
                "n_rewrites": len(rw),
                "n_pairs": len(pairs),
                "seconds": round(best, 3),
                "repeats": a.pair_repeats,
                "pairs_per_s": round(len(pairs) / best, 1) if best else None,
                "traces_per_s": round(len(tr) / best, 1) if best else None,
                "rejected_by_reason": report.get("rejected_by_reason"),
                "by_dimension": report.get("by_dimension"),
            }
        )
    return rows


def stage_score(a, texts, run: Path) -> tuple[list[dict], float, float]:
    import torch

    from recode_lib.process_reward.model import (
        ProcessRewardScorer,
        RMConfig,
        encode,
        save_untrained_reward_model,
    )

    t = time.perf_counter()
    path = save_untrained_reward_model(
        RMConfig(backbone=a.model, output_dir=str(run / "rm"), seed=a.seed), reason="benchmark"
    )
    create_s = time.perf_counter() - t
    t = time.perf_counter()
    scorer = ProcessRewardScorer(path, batch_size=1)
    load_s = time.perf_counter() - t
    reps = math.ceil(a.n_score / len(texts))
    pairs = (texts * reps)[: a.n_score]
    prompts, traces = [p for p, _ in pairs], [x for _, x in pairs]
    lens = [min(len(encode(scorer.tok, p, x)), scorer.max_length) for p, x in pairs]
    scorer.score(prompts[:1], traces[:1])  # warm-up (first forward), not timed
    rows = []
    for bs in [int(b) for b in a.batch_sizes.split(",")]:
        scorer.batch_size = bs
        scorer.truncated = 0
        clock = Clock()
        scores = scorer.score(prompts, traces)
        dt, cpu_util = clock.stop()
        # padded tokens actually run: the scorer sorts by length and pads each batch
        order = sorted(lens)
        padded = sum(
            max(order[s : s + bs]) * len(order[s : s + bs]) for s in range(0, len(order), bs)
        )
        rows.append(
            {
                "stage": "score",
                "batch_size": bs,
                "n_sequences": len(pairs),
                "distinct_sequences": len(texts),
                "seconds": round(dt, 2),
                "sequences_per_s": round(len(pairs) / dt, 2),
                "tokens_per_s": round(sum(lens) / dt, 1),
                "mean_tokens": round(sum(lens) / len(lens), 1),
                "max_tokens": max(lens),
                "padding_frac": round(1 - sum(lens) / padded, 3),
                "truncated": scorer.truncated,
                "max_length": scorer.max_length,
                "finite_scores": all(math.isfinite(s) for s in scores),
                "torch_threads": torch.get_num_threads(),
                "cpu_util": cpu_util,
            }
        )
    return rows, create_s, load_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--benchmark", default="microbench")
    ap.add_argument("--limit", type=int, default=6)
    ap.add_argument(
        "--policy-max-new-tokens",
        type=int,
        default=160,
        help="base-trace budget (the smoke profile's 160)",
    )
    ap.add_argument("--max-new-tokens", type=int, default=128, help="LLM rewrite budget")
    ap.add_argument(
        "--trailing-reasoning",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="use the prose after the code as reasoning (the smoke profile's setting)",
    )
    ap.add_argument(
        "--batch-size",
        type=int,
        default=8,
        help="CRPLConfig.batch_size = generation batch (prompts per generate call)",
    )
    ap.add_argument(
        "--pair-traces",
        type=int,
        default=5000,
        help="traces after replication for the pair-building stage",
    )
    ap.add_argument("--pair-repeats", type=int, default=3, help="build_pairs runs (best kept)")
    ap.add_argument("--batch-sizes", default="1,8", help="RM scoring batch sizes")
    ap.add_argument("--n-score", type=int, default=64, help="(prompt, trace) pairs to score")
    ap.add_argument("--workers", type=int, default=2, help="sandbox workers")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch default)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip", default="", help=f"comma list of stages to skip: {','.join(STAGES)}")
    ap.add_argument("--progress", action="store_true", help="show the library's tqdm bars")
    ap.add_argument("--workdir", default="/tmp/bench_crpl")
    a = ap.parse_args()
    skip = {s.strip() for s in a.skip.split(",") if s.strip()}
    if skip - set(STAGES):
        ap.error(f"--skip: unknown stage(s) {sorted(skip - set(STAGES))}; choose from {STAGES}")
    if not a.progress:
        os.environ.setdefault("TQDM_DISABLE", "1")  # read by tqdm at bar creation

    import torch

    from recode_lib.data import load_benchmark

    if a.threads:
        torch.set_num_threads(a.threads)
    if not a.progress:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()  # the untrained head's load report
    load1, load5, load15 = os.getloadavg()
    ncpu = os.cpu_count() or 1
    print(
        f"machine: {ncpu} cpus, load average {load1:.2f} {load5:.2f} {load15:.2f} "
        f"(1/5/15 min), torch {torch.__version__} threads {torch.get_num_threads()}"
    )
    if load1 > 0.5 * ncpu:
        print(
            f"WARNING: the machine is busy (1-min load {load1:.2f} on {ncpu} cpus): torch's "
            "threads stall on each other when a core is taken, and the figures can be many "
            "times lower; compare with --threads 1 (cpu_util in the rows shows it)"
        )
    run = Path(a.workdir) / "run"
    shutil.rmtree(run, ignore_errors=True)  # fresh stores: nothing is resumed
    run.mkdir(parents=True)
    t = time.perf_counter()
    problems = load_benchmark(a.benchmark, limit=a.limit)
    print(
        f"{a.benchmark}: {len(problems)} problems (loaded in {time.perf_counter() - t:.2f} s), "
        f"model {a.model}, stages {[s for s in STAGES if s not in skip]}, workdir {run}"
    )

    gen = execute = None
    if not {"traces", "llm"} <= skip:
        from recode_lib.core.prompts import build_messages
        from recode_lib.generation import SamplingConfig
        from recode_lib.generation.chat import make_generator

        t = time.perf_counter()
        gen = make_generator("hf", a.model, batch_size=a.batch_size)
        load_s = time.perf_counter() - t
        t = time.perf_counter()
        gen.generate([build_messages(problems[0])], SamplingConfig(max_new_tokens=4))
        print(
            f"generator: hf {a.model} batch {a.batch_size}, load {load_s:.1f} s, warm-up "
            f"{time.perf_counter() - t:.1f} s"
        )
    if "traces" not in skip:
        from recode_lib.sandbox import execute_many

        def execute(records):
            return execute_many(records, workers=a.workers)

        ref = [p for p in problems if p.reference_solution][: a.workers]
        if ref:
            t = time.perf_counter()
            execute(
                [
                    {
                        "id": p.id,
                        "code": p.reference_solution,
                        "tests": p.tests,
                        "time_limit_s": p.time_limit_s,
                        "memory_mb": p.memory_mb,
                    }
                    for p in ref
                ]
            )
            print(
                f"sandbox: {a.workers} workers, warm-up ({len(ref)} reference solutions) "
                f"{time.perf_counter() - t:.1f} s"
            )

    rows: dict[str, list[dict]] = {s: [] for s in STAGES}
    traces = []
    if "traces" not in skip:
        row, traces = stage_traces(a, problems, gen, execute, run)
        rows["traces"].append(row)
        print(json.dumps(row))
    usable = [x for x in traces if x.get("usable")]
    trace_source = "policy"
    if not usable:
        usable = fallback_traces(problems)
        trace_source = "reference_fallback"
        why = "stage skipped" if "traces" in skip else "no usable base trace"
        print(
            f"({why}: rewrites use {len(usable)} traces built from reference solutions with a "
            f"fixed {len(FALLBACK_REASONING.splitlines())}-line reasoning)"
        )
    rewrites = []
    if "llm" not in skip and usable:
        row, got = stage_llm(a, usable, gen, run, trace_source)
        rewrites += got
        rows["llm"].append(row)
        print(json.dumps(row))
    if "rules" not in skip and usable:
        row, got = stage_rules(a, usable, run, trace_source)
        rewrites += got
        rows["rules"].append(row)
        print(json.dumps(row))
    if "pairs" not in skip and usable:
        p_traces, p_rewrites, p_source = usable, rewrites, trace_source
        if not any(r["accepted"] for r in p_rewrites) and not rows["rules"]:
            _, p_rewrites = stage_rules(a, usable, run / "pairs_input", trace_source)
            print(
                "(pairs: no accepted rewrites from the stages run; using rule rewrites made "
                "for this stage)"
            )
        if not any(r["accepted"] for r in p_rewrites) and trace_source == "policy":
            p_traces, p_source = fallback_traces(problems), "reference_fallback"
            _, p_rewrites = stage_rules(a, p_traces, run / "pairs_input_ref", p_source)
            print(
                "(pairs: no accepted rewrite of the policy traces; the pairs are built from "
                "reference-solution traces and their rule rewrites)"
            )
        for row in stage_pairs(a, p_traces, p_rewrites, p_source):
            rows["pairs"].append(row)
            print(json.dumps(row))
    if "score" not in skip:
        texts = [(x["prompt"], x["trace"]) for x in usable]
        by_trace = {x["id"]: x for x in usable}
        texts += [
            (by_trace[r["trace_id"]]["prompt"], r["trace"])
            for r in rewrites
            if r["accepted"] and r["trace_id"] in by_trace
        ]
        if not texts:
            print("(score: no traces to score; skipped)")
        else:
            got, create_s, load_s = stage_score(a, texts, run)
            print(
                f"reward model: untrained {a.model} head, created {create_s:.1f} s, "
                f"loaded {load_s:.1f} s"
            )
            for row in got:
                rows["score"].append(row)
                print(json.dumps(row))

    # --- summary ratios ---------------------------------------------------------------------
    print()
    if rows["traces"]:
        r = rows["traces"][0]
        print(
            f"base traces: {r['traces_per_s']:.3f} traces/s, {r['tokens_per_s']} tokens/s; "
            f"generation {r['generation_frac']:.0%} / sandbox {r['sandbox_frac']:.0%} of the "
            f"stage; usable {r['usable']}/{r['n_traces']}"
        )
    if rows["llm"] and rows["rules"]:
        lr, rr = rows["llm"][0], rows["rules"][0]
        if lr["rewrites_per_s"]:
            print(
                "rule rewrites vs LLM rewrites: "
                f"{rr['rewrites_per_s'] / lr['rewrites_per_s']:.0f}x "
                f"rewrites/s (acceptance {rr['acceptance']} vs {lr['acceptance']})"
            )
    if rows["rules"]:
        rr = rows["rules"][0]
        if rr["rewrites_per_s"] and rr["compute_only_rewrites_per_s"]:
            print(
                f"rule rewrites, compute alone vs with the fsynced store: "
                f"{rr['compute_only_rewrites_per_s'] / rr['rewrites_per_s']:.0f}x"
            )
    if (
        rows["llm"]
        and rows["traces"]
        and rows["traces"][0]["tokens_per_s"]
        and rows["llm"][0]["tokens_per_s"]
    ):
        print(
            f"LLM rewrite vs base-trace generation: "
            f"{rows['llm'][0]['tokens_per_s'] / rows['traces'][0]['tokens_per_s']:.2f}x "
            f"tokens/s (longer prompts, budget {a.max_new_tokens} vs "
            f"{a.policy_max_new_tokens})"
        )
    if len(rows["pairs"]) == 2 and rows["pairs"][0]["pairs_per_s"]:
        s, c = rows["pairs"]
        print(
            f"pairs, cross vs single mode: {c['pairs_per_s'] / s['pairs_per_s']:.2f}x pairs/s "
            f"({c['n_pairs']} vs {s['n_pairs']} pairs)"
        )
    if rows["score"]:
        base = rows["score"][0]
        for r in rows["score"][1:]:
            print(
                f"RM scoring batch {r['batch_size']} vs batch {base['batch_size']}: "
                f"{r['sequences_per_s'] / base['sequences_per_s']:.2f}x sequences/s"
            )
        best = max(rows["score"], key=lambda r: r["sequences_per_s"])
        if rows["llm"] and rows["llm"][0]["rewrites_per_s"]:
            print(
                f"RM scoring (batch {best['batch_size']}) vs LLM rewriting: "
                f"{best['sequences_per_s'] / rows['llm'][0]['rewrites_per_s']:.0f}x "
                f"items/s"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
