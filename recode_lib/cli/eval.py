"""`recode eval --model M --benchmark B [--n N] [--k K] [--backend hf|vllm|openai] [--setting single|tool|agentic] [--ray ADDRESS] ...`.

The argument half of recode_lib.evaluation: builds the EvalSpec (sampling, backend options,
limits; recode_lib.evaluation.spec), loads the benchmark, prints pass@k with its CI, the outcome
classes and where the results are (default runs/cli/eval/<benchmark>/<model>). `--ray ADDRESS`
executes the samples on a Ray cluster (recode_lib.sandbox.fanout; single setting).
"""

from __future__ import annotations

from pathlib import Path

from recode_lib.cli import CliError
from recode_lib.cli.sandbox import add_ray_arguments, check_ray_arguments
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.jsonl import JsonlError


def add_arguments(parser) -> None:
    parser.add_argument("--model", required=True, help="smollm2, a checkpoint folder or hub id "
                        "(for --backend openai: the served model name)")
    parser.add_argument("--benchmark", required=True,
                        help="e.g. humanevalplus, mbppplus, microbench")
    parser.add_argument("--n", type=int, default=1, help="samples per problem (default 1)")
    parser.add_argument("--k", type=int, action="append", help="pass@k to report (repeatable; "
                        "default 1)")
    parser.add_argument("--limit", type=int, help="first L problems only")
    parser.add_argument("--temperature", type=float,
                        help="default: 0 (greedy) when --n 1, else 0.8")
    parser.add_argument("--top-p", type=float, default=0.95)
    parser.add_argument("--max-new-tokens", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", choices=["hf", "vllm", "openai"], default="hf")
    parser.add_argument("--out", help="output folder (default runs/cli/eval/<benchmark>/<model>)")
    parser.add_argument("--no-reasoning", action="store_true",
                        help="ask for the code only (no <think> section)")
    parser.add_argument("--batch-size", type=int, default=16, help="hf backend batch size")
    parser.add_argument("--tensor-parallel-size", type=int, default=1, help="vllm backend")
    parser.add_argument("--base-url", default="http://localhost:8000/v1", help="openai backend")
    parser.add_argument("--concurrency", type=int, default=8, help="openai backend")
    parser.add_argument("--workers", type=int, help="sandbox workers (default: CPU count)")
    parser.add_argument("--early-stop", action="store_true",
                        help="stop a sample's tests at the first failure")
    parser.add_argument("--setting", choices=["single", "tool", "agentic"], default="single",
                        help="paper B's setting: single-turn, Python tool calls, or a sandboxed "
                        "terminal (hf/vllm backends)")
    parser.add_argument("--max-turns", type=int, default=5, help="tool/agentic: turns per episode")
    parser.add_argument("--max-tool-calls", type=int, default=4,
                        help="tool/agentic: tool calls per episode")
    parser.add_argument("--tool-time-limit", type=float, default=10.0,
                        help="tool/agentic: seconds per tool call")
    parser.add_argument("--tool-max-output", type=int, default=4096,
                        help="tool/agentic: stdout/stderr characters returned per tool call")
    add_ray_arguments(parser)
    parser.add_argument("--data-dir", help="benchmark files (default RECODE_DATA_DIR or "
                        "../shared/data)")


def run(args) -> int:
    import re

    from recode_lib.generation import GenerationError
    from recode_lib.models import ModelError
    from recode_lib.sandbox import RayFanoutError
    from recode_lib.paths import runs_dir

    try:
        from recode_lib.data import load_benchmark
    except ImportError as exc:
        raise CliError(f"benchmark loaders unavailable: {exc}") from None
    check_ray_arguments(args)
    try:
        temperature = args.temperature if args.temperature is not None else \
            (0.0 if args.n == 1 else 0.8)
        spec = EvalSpec(backend=args.backend, temperature=temperature, top_p=args.top_p,
                        max_new_tokens=args.max_new_tokens, n=args.n, seed=args.seed,
                        k=tuple(args.k or [1]), reasoning=not args.no_reasoning,
                        batch_size=args.batch_size, tensor_parallel_size=args.tensor_parallel_size,
                        base_url=args.base_url, concurrency=args.concurrency,
                        workers=args.workers, early_stop=args.early_stop,
                        setting=args.setting, max_turns=args.max_turns,
                        max_tool_calls=args.max_tool_calls,
                        tool_time_limit_s=args.tool_time_limit,
                        tool_max_output_chars=args.tool_max_output,
                        ray=args.ray, chunk_size=args.chunk_size)
        sampling = spec.sampling()
        problems = load_benchmark(args.benchmark, limit=args.limit, data_dir=args.data_dir)
    except (ValueError, KeyError, OSError) as exc:
        raise CliError(str(exc)) from None
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(args.model).strip("/"))[-80:]
    out = Path(args.out) if args.out else runs_dir("cli") / "eval" / args.benchmark / slug
    try:
        s = spec.evaluate(args.model, problems, out, benchmark=args.benchmark)
    except (ValueError, JsonlError, ModelError, GenerationError, RayFanoutError) as exc:
        raise CliError(str(exc)) from None
    print(f"{args.benchmark} ({s['setting']} setting): {s['n_problems']} problems x {sampling.n} samples "
          f"(temperature {sampling.temperature}, max_new_tokens {sampling.max_new_tokens})")
    for kk in s["k"]:
        lo, hi = s[f"pass@{kk}_ci"]
        print(f"  pass@{kk} = {s[f'pass@{kk}']:.4f}  (95% CI {lo:.4f}-{hi:.4f})")
    print("  outcomes: " + ", ".join(f"{o} {v:.3f}" for o, v in s["outcomes"].items()))
    print(f"  tokens/response: mean {s['tokens']['mean']:.1f}, truncated "
          f"{s['tokens']['truncated_rate']:.3f}; no code block {s['format']['no_code_rate']:.3f}")
    if "episodes" in s:
        e = s["episodes"]
        print(f"  episodes: {e['mean_turns']:.2f} turns, {e['mean_tool_calls']:.2f} tool calls "
              f"({e['tool_error_rate']:.3f} errors), no answer {e['no_answer_rate']:.3f}")
    if s["timing"]["problems_per_minute"]:
        print(f"  throughput: {s['timing']['problems_per_minute']:.2f} problems/minute")
    print(f"  results: {out}/samples.jsonl, {out}/summary.json")
    return 0
