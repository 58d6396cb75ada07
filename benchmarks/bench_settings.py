"""Cost of the tool and agentic settings' sandboxed tools (no model involved).

    python benchmarks/bench_settings.py [--calls 20] [--files 50]

Prints the wall time per call of: run_python (a trivial program), a terminal command over a
workspace of --files small files (the copy in and back is part of every command), write_file /
read_file (judge-side only), and a scripted agentic episode (write, run, submit). The warm
sandbox worker is started before timing.
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--files", type=int, default=50)
    args = ap.parse_args()
    limits = ToolLimits(time_limit_s=5)
    row = {"prompt": [{"role": "user", "content": "Write f(x) = x + 1."}], "starter_code": ""}
    py = PythonToolEnv(max_calls=10**6, limits=limits)
    py.reset(**row)
    py.run_python("print(1)")                      # warm worker
    term = TerminalEnv(max_calls=10**6, limits=limits)
    term.reset(**row)
    for i in range(args.files):
        term.write_file(f"data/f{i}.txt", "x" * 1000)
    print(f"{'operation':36s} {'median_s':>9s} {'max_s':>7s}")
    for name, fn in [("run_python('print(1)')", lambda: py.run_python("print(1)")),
                     (f"run('ls') over {args.files + 2} files", lambda: term.run("ls > /dev/null")),
                     ("write_file (judge side)", lambda: term.write_file("a.txt", "x")),
                     ("read_file (judge side)", lambda: term.read_file("a.txt"))]:
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
