"""An offline math training set written for this project: seeded short-answer problems.

    problems = load_math_synth(limit=64, seed=0)      # list[Problem], answer an integer string
    load_benchmark("math_synth", limit=64, seed=0)    # the same, through the registry

The smoke profile trains the math domain (notebook 10) on these, never on AIME: nothing can be
downloaded there. Each problem is drawn from one of four families, every one with an exact
integer answer computed here (never parsed from text):
    arithmetic     "Compute 37 * 12 - 45."                  (integer expression, no division)
    modular        "What is the remainder when 7^23 is divided by 13?"
    combinatorics  "How many ways are there to choose 3 objects from 9?"  (binomial coefficient)
    linear         "If 4x + 9 = 41, what is x?"             (integer solution by construction)
Deterministic by seed: the same (seed, index) always gives the same problem, and a larger
`limit` extends a smaller one (problem i does not depend on how many are drawn). Ids are
"math_synth/<seed>-<i>". Like AIME problems they carry the always-failing `tests` script (a math
problem never passes the code sandbox); grade with recode_lib.core.math_answers.answer_correct.
It does not load or check AIME (recode_lib.data.math_train.math_train_eval does).
"""

from __future__ import annotations

import math
import random

from recode_lib.data.aime import NOT_CODE
from recode_lib.data.schema import Problem

FAMILIES = ("arithmetic", "modular", "combinatorics", "linear")


def _arithmetic(rng: random.Random) -> tuple[str, int]:
    a, b, c = rng.randint(11, 99), rng.randint(2, 19), rng.randint(1, 200)
    op = rng.choice(["+", "-"])
    value = a * b + c if op == "+" else a * b - c
    return f"Compute ${a} \\times {b} {op} {c}$.", value


def _modular(rng: random.Random) -> tuple[str, int]:
    base, exp, mod = rng.randint(2, 12), rng.randint(5, 40), rng.choice([7, 9, 11, 13, 17, 19, 23])
    return (
        f"What is the remainder when ${base}^{{{exp}}}$ is divided by ${mod}$?",
        pow(base, exp, mod),
    )


def _combinatorics(rng: random.Random) -> tuple[str, int]:
    n = rng.randint(5, 14)
    k = rng.randint(2, min(5, n - 1))
    return (
        f"How many ways are there to choose ${k}$ objects from ${n}$ distinct objects "
        f"(order does not matter)?",
        math.comb(n, k),
    )


def _linear(rng: random.Random) -> tuple[str, int]:
    x, a, b = rng.randint(-20, 30), rng.randint(2, 12), rng.randint(-50, 50)
    sign = "+" if b >= 0 else "-"
    return f"If ${a}x {sign} {abs(b)} = {a * x + b}$, what is $x$?", x


_MAKERS = {
    "arithmetic": _arithmetic,
    "modular": _modular,
    "combinatorics": _combinatorics,
    "linear": _linear,
}


def make_problem(seed: int, index: int) -> Problem:
    """Problem `index` of the set drawn with `seed` (independent of every other index)."""
    rng = random.Random(f"math_synth:{seed}:{index}")
    family = FAMILIES[rng.randrange(len(FAMILIES))]
    text, value = _MAKERS[family](rng)
    return Problem.from_dict(
        dict(
            id=f"math_synth/{seed}-{index}",
            source="math_synth",
            prompt=f"{text} Give the final answer as an integer.",
            tests=dict(NOT_CODE),
            answer=str(int(value)),
            metadata={"family": family, "seed": seed},
        )
    )


def load_math_synth(
    data_dir=None, limit: int | None = None, seed: int = 0, size: int = 256
) -> list[Problem]:
    """The first `limit` (default `size`) problems of the set drawn with `seed`. `data_dir` is
    accepted for the registry's signature and ignored (nothing is read)."""
    n = size if limit is None else limit
    if n < 0:
        raise ValueError(f"limit must be >= 0, got {n}")
    return [make_problem(seed, i) for i in range(n)]
