"""A seeded generator of short, easy coding tasks for the `laptop` profile (made for this project).

    from recode_lib.data.easy_tasks import generate_easy_tasks, TEMPLATES
    problems = generate_easy_tasks(n=40, seed=0)  # list[Problem], ids "easy/<seed>-<i>-<template>"
    problems = generate_easy_tasks(n=8, seed=1, kinds=("call",))

Each task comes from a template (TEMPLATES: one-line list/string/number tasks such as "return
the sum of the even numbers", "print the maximum of the numbers read from stdin") with a seeded
constant and function name, so one template yields many distinct problems. Every task carries
a reference solution, and its tests are a few small hand-sized inputs plus seeded large ones
(lists of SIZES elements: about 10^0 .. 10^5 characters of input, `input_len` recorded), so the
nested strictness rewards R_k (tests with input_len < 10^k) see several decades. R_1 is the
one-element edge case EDGE ([1] or "a", input_len < 10), which many wrong programs pass (`max`
or `sum` where the task asks for the number of distinct values): with SmolLM2-135M that is
where a lenient reward and R_inf disagree. The efficiency
templates (EFFICIENCY: "how many numbers appear exactly once", "remove repeated numbers", running
totals, ...) also carry `naive`, the quadratic answer a small model writes (`nums.count(x)` in a
loop, `x not in out` on a list, `sum(nums[:i+1])`): it passes every test up to a few hundred
elements and exceeds TIME_LIMIT_S on the BIG one (tests/test_easy_tasks.py runs it in the
sandbox), so on these tasks a lenient R_k and the strict R_inf disagree, which is what paper B's
strictness sweep and extrapolation need. They are opt-in (`templates=EFFICIENCY`, or
calibration's `n_efficiency`; the `easy` benchmark and the default pool hold TEMPLATES only):
SmolLM2-135M at T=1 solved none of them, not even on small inputs (0 of 72 samples, 2026-11-30).
Expected outputs come from running the reference in-process (trusted code only).
Two test kinds: "call" (a function, starter code = its signature) and "stdio" (a program).
The tasks are meant to be solved sometimes by a 135M chat model; which ones are is measured,
not assumed (recode_lib.evaluation.calibration keeps those with 0 < pass rate < 1; the
`calibrated:<profile>` benchmark, recode_lib.data.calibrated, loads them).
It does not execute model code and does not download anything.
"""

from __future__ import annotations

import io
import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass

from recode_lib.data.schema import Problem

BIG = 50_000  # the largest test: a quadratic answer takes >> TIME_LIMIT_S
SIZES = (1, 3, 5, 30, 300, 2000, BIG)  # list lengths: the one-element edge case, small, large
TIME_LIMIT_S = 2.0  # per test; a linear answer on BIG takes ~0.05 s, the naive ones >= 5 s


@dataclass(frozen=True)
class Template:
    """One family of tasks. `statement` and `reference` are format strings over {fn} (the
    function name) and {k} (the seeded constant); `make_args(rng, size, k)` -> the call's
    argument list; `kinds`: the test kinds the template can be posed as."""

    name: str
    statement: str
    params: str  # the signature's parameters, e.g. "nums"
    reference: str  # body of the function, indented 4 spaces
    make_args: Callable
    k_range: tuple = (2, 9)
    kinds: tuple = ("call", "stdio")
    naive: str = ""  # a correct but quadratic body (efficiency templates); "" = none


def ints(rng, size, lo=-50, hi=50):
    return [rng.randint(lo, hi) for _ in range(size)]


def word(rng, size):
    return "".join(rng.choice("abcdeiou") for _ in range(size))


TEMPLATES: tuple[Template, ...] = (
    Template(
        "sum_list",
        "returns the sum of the numbers in the list `nums`.",
        "nums",
        "    return sum(nums)",
        lambda r, n, k: [ints(r, n)],
        (0, 0),
    ),
    Template(
        "max_list",
        "returns the largest number in the non-empty list `nums`.",
        "nums",
        "    return max(nums)",
        lambda r, n, k: [ints(r, n)],
        (0, 0),
    ),
    Template(
        "min_list",
        "returns the smallest number in the non-empty list `nums`.",
        "nums",
        "    return min(nums)",
        lambda r, n, k: [ints(r, n)],
        (0, 0),
    ),
    Template(
        "count_even",
        "returns how many numbers in the list `nums` are even.",
        "nums",
        "    return sum(1 for x in nums if x % 2 == 0)",
        lambda r, n, k: [ints(r, n)],
        (0, 0),
    ),
    Template(
        "sum_even",
        "returns the sum of the even numbers in the list `nums`.",
        "nums",
        "    return sum(x for x in nums if x % 2 == 0)",
        lambda r, n, k: [ints(r, n)],
        (0, 0),
    ),
    Template(
        "add_k",
        "returns a new list with {k} added to every number of the list `nums`.",
        "nums",
        "    return [x + {k} for x in nums]",
        lambda r, n, k: [ints(r, n)],
        kinds=("call",),
    ),
    Template(
        "times_k",
        "returns a new list with every number of the list `nums` multiplied by {k}.",
        "nums",
        "    return [x * {k} for x in nums]",
        lambda r, n, k: [ints(r, n)],
        kinds=("call",),
    ),
    Template(
        "count_k",
        "returns how many times the number {k} appears in the list `nums`.",
        "nums",
        "    return nums.count({k})",
        lambda r, n, k: [ints(r, n, 0, 12)],
    ),
    Template(
        "greater_k",
        "returns how many numbers in the list `nums` are greater than {k}.",
        "nums",
        "    return sum(1 for x in nums if x > {k})",
        lambda r, n, k: [ints(r, n, 0, 20)],
    ),
    Template(
        "reverse_list",
        "returns the list `nums` in reverse order.",
        "nums",
        "    return nums[::-1]",
        lambda r, n, k: [ints(r, n)],
        (0, 0),
        ("call",),
    ),
    Template(
        "reverse_str",
        "returns the string `s` reversed.",
        "s",
        "    return s[::-1]",
        lambda r, n, k: [word(r, n)],
        (0, 0),
    ),
    Template(
        "count_vowels",
        "returns how many characters of the string `s` are vowels (a, e, i, o, u).",
        "s",
        "    return sum(1 for c in s if c in 'aeiou')",
        lambda r, n, k: [word(r, n)],
        (0, 0),
    ),
    Template(
        "distinct",
        "returns how many different numbers the list `nums` contains.",
        "nums",
        "    return len(set(nums))",
        lambda r, n, k: [ints(r, n, 0, 3 * n)],
        (0, 0),
    ),
    Template(
        "first_k",
        "returns the first {k} elements of the list `nums` (all of them when it is shorter).",
        "nums",
        "    return nums[:{k}]",
        lambda r, n, k: [ints(r, n)],
        kinds=("call",),
    ),
    Template(
        "square_sum",
        "returns the sum of the squares of the numbers in the list `nums`.",
        "nums",
        "    return sum(x * x for x in nums)",
        lambda r, n, k: [ints(r, n)],
        (0, 0),
    ),
    Template(
        "mult_k",
        "returns the sum of the numbers in the list `nums` that are divisible by {k}.",
        "nums",
        "    return sum(x for x in nums if x % {k} == 0)",
        lambda r, n, k: [ints(r, n)],
    ),
)


def unique_mode(rng, n):
    """n numbers in which one value appears 3 times (all of them when n <= 3) and every other
    value once: "the number that appears most often" has one answer."""
    vals = rng.sample(range(4 * n + 10), n)
    for j in range(1, min(3, n)):
        vals[j] = vals[0]
    rng.shuffle(vals)
    return vals


EFFICIENCY: tuple[Template, ...] = (
    Template(
        "mode",
        "returns the number that appears most often in the list `nums` (exactly one number does).",
        "nums",
        "    from collections import Counter\n    return Counter(nums).most_common(1)[0][0]",
        lambda r, n, k: [unique_mode(r, n)],
        (0, 0),
        naive="    return max(nums, key=nums.count)",
    ),
    Template(
        "count_once",
        "returns how many numbers in the list `nums` appear exactly once.",
        "nums",
        "    from collections import Counter\n    c = Counter(nums)\n"
        "    return sum(1 for v in c.values() if v == 1)",
        lambda r, n, k: [ints(r, n, 0, n)],
        (0, 0),
        naive="    return sum(1 for x in nums if nums.count(x) == 1)",
    ),
    Template(
        "dedupe",
        "returns the list `nums` without repeated numbers, keeping the first "
        "occurrence of each number in its original order.",
        "nums",
        "    return list(dict.fromkeys(nums))",
        lambda r, n, k: [ints(r, n, 0, n)],
        (0, 0),
        ("call",),
        naive="    out = []\n    for x in nums:\n        if x not in out:\n"
        "            out.append(x)\n    return out",
    ),
    Template(
        "running_sum",
        "returns the list of running totals of the list `nums`: element i "
        "is nums[0] + nums[1] + ... + nums[i].",
        "nums",
        "    from itertools import accumulate\n    return list(accumulate(nums))",
        lambda r, n, k: [ints(r, n)],
        (0, 0),
        ("call",),
        naive="    return [sum(nums[:i + 1]) for i in range(len(nums))]",
    ),
    Template(
        "has_duplicate",
        "returns True if some number appears more than once in the list "
        "`nums`, and False otherwise.",
        "nums",
        "    return len(set(nums)) != len(nums)",
        lambda r, n, k: [ints(r, n, 0, 2 * n) if n < 100 else r.sample(range(10 * n), n)],
        (0, 0),
        naive="    return any(nums.count(x) > 1 for x in nums)",
    ),
    Template(
        "sum_distinct",
        "returns the sum of the different numbers in the list `nums` (each value counted once).",
        "nums",
        "    return sum(set(nums))",
        lambda r, n, k: [ints(r, n, 0, n)],
        (0, 0),
        naive="    seen = []\n    for x in nums:\n        if x not in seen:\n"
        "            seen.append(x)\n    return sum(seen)",
    ),
)
ALL_TEMPLATES: tuple[Template, ...] = TEMPLATES + EFFICIENCY
FN_NAMES = ("solve", "compute", "answer", "f", "process")
# The one-element edge case of every task (R_1's only test): [1] / "a". It under-specifies the
# task on purpose, as small examples do: `max`, `min` and `sum` agree on it, so a program that
# answers the wrong question can pass R_1 and fail R_inf (a lenient reward's blind spot).
EDGE = {"nums": [[1]], "s": ["a"]}


def stdio_reference(t: Template, k: int) -> str:
    """The stdin/stdout program of a template: read the list (numbers on one line or one word),
    print the result (a list as space-separated numbers)."""
    body = t.reference.format(fn="f", k=k)
    read = (
        "s = sys.stdin.read().strip()"
        if t.params == "s"
        else "nums = list(map(int, sys.stdin.read().split()))"
    )
    return (
        f"import sys\n\ndef f({t.params}):\n{body}\n\n{read}\n"
        f"r = f({t.params})\nprint(' '.join(map(str, r)) if isinstance(r, list) else r)\n"
    )


def stdio_input(t: Template, args: list) -> str:
    return args[0] + "\n" if t.params == "s" else " ".join(map(str, args[0])) + "\n"


def run_reference(code: str, stdin: str) -> str:
    old_in, old_out = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = io.StringIO(stdin), io.StringIO()
    try:
        exec(compile(code, "<easy reference>", "exec"), {"__name__": "__main__"})
        return sys.stdout.getvalue()
    finally:
        sys.stdin, sys.stdout = old_in, old_out


def make_task(t: Template, kind: str, k: int, fn: str, rng: random.Random, pid: str) -> Problem:
    """One Problem of template `t` posed as `kind` with constant k and function name fn."""
    if kind not in t.kinds:
        raise ValueError(f"template {t.name!r} cannot be posed as {kind!r} (kinds {t.kinds})")
    arglists = [EDGE[t.params] if n == 1 else t.make_args(rng, n, k) for n in SIZES]
    what = t.statement.format(fn=fn, k=k)
    meta = {"template": t.name, "k": k, "kind": kind, "generator": "easy_tasks"}
    if kind == "call":
        ref = f"def {fn}({t.params}):\n{t.reference.format(fn=fn, k=k)}\n"
        env: dict = {}
        exec(compile(ref, "<easy reference>", "exec"), env)
        cases = [
            {
                "args": a,
                "expected": env[fn](*json.loads(json.dumps(a))),
                "input_len": len(json.dumps(a)),
            }
            for a in arglists
        ]
        return Problem.from_dict(
            dict(
                id=pid,
                source="easy",
                prompt=f"Write a Python function `{fn}({t.params})` that {what}",
                tests={"kind": "call", "fn_name": fn, "cases": cases},
                starter_code=f"def {fn}({t.params}):\n",
                entry_point=fn,
                time_limit_s=TIME_LIMIT_S,
                memory_mb=512,
                difficulty="easy",
                reference_solution=ref,
                metadata=meta,
            ),
            pid,
        )
    ref = stdio_reference(t, k)
    what_io = (
        what.replace("returns", "prints")
        .replace("the list `nums`", "the numbers")
        .replace("the string `s`", "the word")
    )
    src = "a line of integers separated by spaces" if t.params == "nums" else "one word"
    cases = []
    for a in arglists:
        inp = stdio_input(t, a)
        cases.append({"input": inp, "output": run_reference(ref, inp), "input_len": len(inp)})
    return Problem.from_dict(
        dict(
            id=pid,
            source="easy",
            prompt=f"Write a Python program that reads {src} from standard input and {what_io}",
            tests={"kind": "stdio", "cases": cases},
            time_limit_s=TIME_LIMIT_S,
            memory_mb=512,
            difficulty="easy",
            reference_solution=ref,
            metadata=meta,
        ),
        pid,
    )


def generate_easy_tasks(
    n: int = 40,
    seed: int = 0,
    kinds=("call", "stdio"),
    templates: tuple[Template, ...] | None = None,
) -> list[Problem]:
    """n tasks, the same for the same (n, seed, kinds): templates in a seeded order (cycled),
    each with a seeded constant, function name and kind (among `kinds` it supports); ids
    "easy/<seed>-<i>-<template>-<kind>"."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    kinds = tuple(kinds)
    bad = set(kinds) - {"call", "stdio"}
    if bad or not kinds:
        raise ValueError(f"kinds must be a non-empty subset of ('call', 'stdio'), got {kinds}")
    pool = [t for t in (templates or TEMPLATES) if set(t.kinds) & set(kinds)]
    rng = random.Random(f"easy:{seed}")
    order = pool[:]
    rng.shuffle(order)
    out = []
    for i in range(n):
        t = order[i % len(order)]
        kind = rng.choice([k for k in kinds if k in t.kinds])
        k = rng.randint(*t.k_range)
        fn = rng.choice(FN_NAMES)
        trng = random.Random(f"easy:{seed}:{i}")
        out.append(make_task(t, kind, k, fn, trng, f"easy/{seed}-{i}-{t.name}-{kind}"))
    return out


def load_easy_tasks(
    data_dir=None, limit: int | None = None, seed: int = 0, kinds=("call", "stdio")
) -> list[Problem]:
    """The `easy` benchmark: generate_easy_tasks(limit or 2 x len(TEMPLATES), seed, kinds);
    data_dir is accepted for the registry's uniform call and ignored."""
    if isinstance(kinds, str):
        kinds = tuple(k.strip() for k in kinds.split(",") if k.strip())
    return generate_easy_tasks(limit if limit is not None else 2 * len(TEMPLATES), seed, kinds)
