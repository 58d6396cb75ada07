"""Benchmark: the judge's parsing on adversarial completions (milliseconds per completion).

    python benchmarks/bench_parse.py [--repeat 3] [--old] [--only NAME]

For each adversarial completion (50,000 `<think>` openers, 1 MB of fences, ``` followed by
1 MB of spaces, a function answer followed by 50,000 top-level statements, ...) it prints the
size and the best of --repeat CPU times (time.process_time: single-threaded work, so on a quiet
machine the wall time; on a busy shared one the figure that does not count other processes) of:
  parse     recode_lib.core.prompts.parse_response (runs 2-4 times per completion per reward)
  assemble  recode_lib.core.assemble.assemble on a call problem whose starter ends with the entry
            point (so the body-only path tries every block)
  math      recode_lib.core.math_answers.parse_math_response
--old also times the former regexes (`<think>(.*?)</think>` search and the fence finditer)
on the same text, each stopped after 20 s of wall time (the quadratic ones take minutes at full
size: 118 s for 50,000 openers in the issue's measurement); it runs them in a child process so a
stop leaves this one intact. Nothing is executed; it is single-threaded.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from recode_lib.core.assemble import assemble  # noqa: E402
from recode_lib.core.math_answers import parse_math_response  # noqa: E402
from recode_lib.core.prompts import parse_response  # noqa: E402

OLD_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.DOTALL)
OLD_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
GOOD = "def f(x):\n    return x + 1"
PROBLEM = SimpleNamespace(
    tests={"kind": "call", "fn_name": "f", "cases": []},
    starter_code='def f(x):\n    """Add one."""\n',
    entry_point="f",
    metadata={"prelude": "from typing import *"},
)


def completions() -> dict[str, str]:
    mb = 1_000_000
    return {
        "50,000 <think> openers": "<think>" * 50_000,
        "50,000 <think> openers + answer": "<think>" * 50_000 + f"```python\n{GOOD}\n```",
        "50,000 </think><think> pairs": "</think><think>" * 50_000,
        "1 MB of empty fences": "```\n" * (mb // 4),
        "1 MB of ```python openers": "```python\n" * (mb // 10),
        "1 MB of distinct bad blocks": "".join(f"```\nx{i} (\n```\n" for i in range(mb // 16)),
        "1 MB of distinct body blocks": "".join(f"```\ny{i} = 1\n```\n" for i in range(mb // 16)),
        "``` + 1 MB of spaces": "```" + " " * mb + "x",
        "1 MB of indented lines": "```python\n" + ("\n" + " " * 999) * 1000,
        "function + 50,000 statements": f"<think>r</think>\n```python\n{GOOD}\n"
        + "print(1)\n" * 50_000
        + "```",
        "1 MB of prose, one block": "<think>"
        + "word " * (mb // 5)
        + f"</think>\n```python\n{GOOD}\n```",
        "unfenced code + 1 MB": GOOD + "\n" + "x = 1\n" * (mb // 6) + "```\nThat was it.",
    }


def best_ms(fn, text, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn(text)
        best = min(best, time.process_time() - t0)
    return best * 1e3


def old_regexes(text: str) -> None:
    OLD_THINK.search(text)
    list(OLD_FENCE.finditer(text))


def _child(text, q):
    t0 = time.process_time()
    old_regexes(text)
    q.put((time.process_time() - t0) * 1e3)


def old_ms(text: str, limit_s: float = 20.0) -> str:
    q = mp.get_context("fork").Queue()
    p = mp.get_context("fork").Process(target=_child, args=(text, q))
    p.start()
    p.join(limit_s)
    if p.is_alive():
        p.kill()
        p.join()
        return f">{limit_s * 1e3:.0f}"
    return f"{q.get():.1f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--old", action="store_true", help="also time the former regexes")
    ap.add_argument("--only", default=None, help="run the completions whose name has this text")
    args = ap.parse_args(argv)
    cols = ["completion", "KB", "parse ms", "assemble ms", "math ms"] + (
        ["former regexes ms"] if args.old else []
    )
    print(" | ".join(cols))
    for name, text in completions().items():
        if args.only and args.only not in name:
            continue
        row = [
            name,
            f"{len(text) / 1e3:.0f}",
            f"{best_ms(parse_response, text, args.repeat):.1f}",
            f"{best_ms(lambda t: assemble(PROBLEM, t), text, args.repeat):.1f}",
            f"{best_ms(parse_math_response, text, args.repeat):.1f}",
        ]
        if args.old:
            row.append(old_ms(text))
        print(" | ".join(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
