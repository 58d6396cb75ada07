"""CRPL rewrite prompts (3 dimensions x 2 directions) and the rule-based fallback rewriter.

    msgs = rewrite_messages(problem_text, base_response, "logical_rigor", "degrade")
    new_reasoning, op = rule_rewrite(reasoning, "factual_correctness", "degrade", seed=3)

A base trace `t` (reasoning + code in the shared format of recode_lib.core.prompts) is rewritten by
a generator LLM into an optimized `t+` (direction "optimize") or a degraded `t-` ("degrade") along
one of the three reasoning-quality dimensions of the ReCode paper: factual correctness, logical
rigor, logical coherence. TRANSFORMS names the concrete transformation each prompt asks for; it
is stored with every rewrite ("transformation" record).

The rule-based rewriter is a deterministic fallback for weak generators (the 135M smoke model):
degrade = perturb a fact (number/comparison/boolean), drop a reasoning step, or shuffle steps;
optimize = remove redundant (repeated) steps. Its rewrites are labelled `rule:<op>` so they can
be counted, filtered, and switched off (paper profile). It returns None when it cannot apply
(e.g. nothing redundant to remove); the caller counts that. It never touches the code.
This module builds text only: no generation, no checks (see recode_lib.process_reward.crpl).
"""

from __future__ import annotations

import random
import re

DIMENSIONS = ("factual_correctness", "logical_rigor", "logical_coherence")
DIRECTIONS = ("optimize", "degrade")

# (dimension, direction) -> the transformation the generator is asked to apply
TRANSFORMS: dict[tuple[str, str], str] = {
    (
        "factual_correctness",
        "optimize",
    ): "Fix every factual mistake about the problem, Python semantics or algorithm complexity, "
    "and state facts precisely.",
    (
        "factual_correctness",
        "degrade",
    ): "Inject one plausible factual error (a wrong claim about the problem, a Python built-in, "
    "an edge case or a complexity) while keeping the text fluent.",
    (
        "logical_rigor",
        "optimize",
    ): "Make every step justified: state the invariant or reason behind each step, cover the "
    "edge cases, and remove unsupported leaps.",
    (
        "logical_rigor",
        "degrade",
    ): "Weaken the rigor: skip a necessary justification or edge case, or make an unjustified "
    "leap, so the argument no longer fully supports the code.",
    (
        "logical_coherence",
        "optimize",
    ): "Make the reasoning flow in order from understanding to plan to implementation; remove "
    "redundancy and repetition; keep each step connected to the previous one.",
    (
        "logical_coherence",
        "degrade",
    ): "Break the coherence: put steps out of order, add an irrelevant digression, or contradict "
    "an earlier step, while keeping the overall topic.",
}

REWRITE_SYSTEM = (
    "You rewrite reasoning traces of Python programming solutions for a research dataset. "
    "Keep the same problem and the same answer format: the reasoning inside <think> and </think>, "
    "then the complete solution in a single ```python code block. Reply with the rewritten "
    "response only."
)


def rewrite_messages(
    problem_text: str, base_response: str, dimension: str, direction: str
) -> list[dict]:
    """Chat messages asking a generator to rewrite `base_response` along one dimension."""
    check_dim_dir(dimension, direction)
    goal = "improve" if direction == "optimize" else "make worse"
    user = (
        f"Problem:\n{problem_text.strip()}\n\n"
        f"Original response:\n{base_response.strip()}\n\n"
        f"Task: {goal} the reasoning along the dimension '{dimension.replace('_', ' ')}'. "
        f"{TRANSFORMS[(dimension, direction)]} Do not change the problem being solved. Keep the "
        "code's function names and signature. Answer in the same format: <think>...</think> "
        "followed by one ```python code block."
    )
    return [{"role": "system", "content": REWRITE_SYSTEM}, {"role": "user", "content": user}]


def check_dim_dir(dimension: str, direction: str) -> None:
    if dimension not in DIMENSIONS:
        raise ValueError(f"unknown CRPL dimension {dimension!r}; expected one of {DIMENSIONS}")
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown CRPL direction {direction!r}; expected one of {DIRECTIONS}")


# --- rule-based fallback -------------------------------------------------------------------

_SENT = re.compile(r"(?<=[.!?])\s+|\n+")
_SWAPS = [
    ("less", "greater"),
    ("smaller", "larger"),
    ("minimum", "maximum"),
    ("ascending", "descending"),
    ("True", "False"),
    ("even", "odd"),
    ("first", "last"),
    ("<=", ">="),
    (" < ", " > "),
    ("increase", "decrease"),
    ("before", "after"),
]


def split_steps(reasoning: str) -> list[str]:
    """Reasoning steps: non-empty lines, or sentences when the text is one line."""
    lines = [s.strip() for s in reasoning.splitlines() if s.strip()]
    if len(lines) >= 2:
        return lines
    return [s.strip() for s in _SENT.split(reasoning) if s.strip()]


def _swap_pattern(word: str) -> str:
    w = word.strip()
    return rf"(?<!\w){re.escape(w)}(?!\w)" if w.isalnum() else re.escape(word)


def _perturb_fact(steps: list[str], rng: random.Random) -> list[str] | None:
    """Flip one comparison/boolean/ordering word, else change one integer, in a random step."""
    order = list(range(len(steps)))
    rng.shuffle(order)
    for i in order:
        s = steps[i]
        for a, b in _SWAPS:
            for x, y in ((a, b), (b, a)):
                if re.search(_swap_pattern(x), s):
                    new = re.sub(
                        _swap_pattern(x), y.strip() if x.strip().isalnum() else y, s, count=1
                    )
                    return steps[:i] + [new] + steps[i + 1 :]
        m = re.search(r"(?<![\w.])(\d+)(?![\w.])", s)
        if m:
            n = int(m.group(1))
            new = s[: m.start()] + str(n + 1 if n != 1 else 2) + s[m.end() :]
            return steps[:i] + [new] + steps[i + 1 :]
    return None


def rule_rewrite(
    reasoning: str, dimension: str, direction: str, seed: int = 0
) -> tuple[str, str] | None:
    """(rewritten reasoning, op label) or None when no rule applies to this reasoning.

    degrade: factual_correctness -> perturb_fact; logical_rigor -> drop_step (a middle step);
    logical_coherence -> shuffle_steps. optimize (any dimension) -> remove_redundancy
    (drop repeated steps); None when nothing repeats."""
    check_dim_dir(dimension, direction)
    rng = random.Random(f"{seed}:{dimension}:{direction}:{reasoning}")
    steps = split_steps(reasoning)
    if not steps:
        return None
    if direction == "optimize":
        seen, kept = set(), []
        for s in steps:
            key = re.sub(r"\W+", " ", s.lower()).strip()
            if key and key not in seen:
                seen.add(key)
                kept.append(s)
        return ("\n".join(kept), "remove_redundancy") if len(kept) < len(steps) else None
    if dimension == "factual_correctness":
        new = _perturb_fact(steps, rng)
        return ("\n".join(new), "perturb_fact") if new else None
    if len(steps) < 2:
        return None
    if dimension == "logical_rigor":
        drop = rng.randrange(1, len(steps)) if len(steps) > 2 else 1
        return "\n".join(s for i, s in enumerate(steps) if i != drop), "drop_step"
    order = list(range(len(steps)))
    for _ in range(10):
        rng.shuffle(order)
        if order != sorted(order):
            break
    return "\n".join(steps[i] for i in order), "shuffle_steps"
