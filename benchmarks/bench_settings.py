"""Cost of paper B's settings: the sandboxed tools alone, and a smoke rollout per setting.

    python benchmarks/bench_settings.py [--calls 20] [--files 50]
    python benchmarks/bench_settings.py --smoke [--problems 4] [--model smollm2] [--settings ...]

Tools (no model): the wall time per call of run_python (a trivial program), a terminal command
over a workspace of --files small files (the copy in and back is part of every command),
write_file / read_file (judge-side only), and a scripted agentic episode (write, run, submit).
The warm sandbox worker is started before timing.
--smoke: the smoke cost per setting: the start model evaluated on the first --problems held-out
micro-benchmark problems with notebook 11's smoke evaluation parameters (notebooks/params/
smoke.yaml: tokens per turn, turns, tool calls, tool time limit, temperature) in each setting
(single, tool, agentic), printing seconds per rollout (generation + execution, model load
excluded), outcome shares, and tool calls / tool errors per rollout
(recode_lib.evaluation.summary.pooled_summary). Results go to a temporary folder.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from recode_lib.environments import PythonToolEnv, TerminalEnv  # noqa: E402
from recode_lib.sandbox.tools import ToolLimits  # noqa: E402


def timed(fn, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out), max(out)


def smoke(args) -> None:
    import tempfile

    from recode_lib.core.models import resolve_model
    from recode_lib.data.split import train_eval_split
    from recode_lib.evaluation.spec import EvalSpec
    from recode_lib.evaluation.summary import OUTCOMES, pooled_summary
    from recode_lib.runner.pipeline import load_profile

    p = {**load_profile("smoke").get("common", {}), **load_profile("smoke")["11_settings_sweep"]}
    _, problems = train_eval_split(p["BENCHMARK"], p["N_TRAIN"], args.problems)
    spec = EvalSpec(
        backend="hf",
        temperature=p["EVAL_TEMPERATURE"],
        max_new_tokens=p["EVAL_MAX_NEW_TOKENS"],
        n=1,
        seed=0,
        batch_size=p["EVAL_BATCH_SIZE"],
        workers=p["WORKERS"],
        max_turns=p["MAX_TURNS"],
        max_tool_calls=p["MAX_TOOL_CALLS"],
        tool_time_limit_s=p["TOOL_TIME_LIMIT_S"],
        progress=False,
    )
    model = resolve_model(args.model)
    print(
        f"smoke cost per setting: {args.model}, {len(problems)} {p['BENCHMARK']} problems, "
        f"{spec.max_new_tokens} tokens/turn, {spec.max_turns} turns, {spec.max_tool_calls} "
        f"tool calls, temperature {spec.temperature}"
    )
    print(
        f"{'setting':8s} {'s/rollout':>9s} {'correct':>7s} {'opt_f':>6s} {'corr_f':>6s} "
        f"{'hang':>5s} {'format':>6s} {'calls':>5s} {'errors':>6s} {'tokens':>6s}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for setting in args.settings.split(","):
            s = spec.replace(setting=setting).evaluate(
                model, problems, f"{tmp}/{setting}", benchmark=p["BENCHMARK"]
            )
            v = pooled_summary([s])
            o = v["outcomes"]
            print(
                f"{setting:8s} {v['seconds_per_rollout']:9.2f} "
                + " ".join(f"{o[k]:{w}.2f}" for k, w in zip(OUTCOMES[:3], (7, 6, 6), strict=True))
                + f" {v['hang']:5.2f} {o['format_error']:6.2f} {v['tool_calls']:5.2f} "
                f"{v['tool_errors']:6.2f} {v['tokens']:6.1f}"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--smoke", action="store_true", help="the smoke cost per setting (a model)")
    ap.add_argument("--problems", type=int, default=4)
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--settings", default="single,tool,agentic")
    args = ap.parse_args()
    if args.smoke:
        return smoke(args)
    limits = ToolLimits(time_limit_s=5)
    row = {"prompt": [{"role": "user", "content": "Write f(x) = x + 1."}], "starter_code": ""}
    py = PythonToolEnv(max_calls=10**6, limits=limits)
    py.reset(**row)
    py.run_python("print(1)")  # warm worker
    term = TerminalEnv(max_calls=10**6, limits=limits)
    term.reset(**row)
    for i in range(args.files):
        term.write_file(f"data/f{i}.txt", "x" * 1000)
    print(f"{'operation':36s} {'median_s':>9s} {'max_s':>7s}")
    for name, fn in [
        ("run_python('print(1)')", lambda: py.run_python("print(1)")),
        (f"run('ls') over {args.files + 2} files", lambda: term.run("ls > /dev/null")),
        ("write_file (judge side)", lambda: term.write_file("a.txt", "x")),
        ("read_file (judge side)", lambda: term.read_file("a.txt")),
    ]:
        med, mx = timed(fn, args.calls)
        print(f"{name:36s} {med:9.4f} {mx:7.3f}")

    def episode():
        env = TerminalEnv(limits=limits)
        env.reset(**row)
        env.write_file("solution.py", "def f(x):\n    return x + 1\n")
        env.run("python -c 'import solution; print(solution.f(1))'")
        env.submit("solution.py")

    med, mx = timed(episode, max(3, args.calls // 4))
    print(f"{'agentic episode (write, run, submit)':36s} {med:9.4f} {mx:7.3f}")


if __name__ == "__main__":
    main()
