"""Math answers: the prompt format, response parsing and answer checking (math-verify) shared by
the policy's prompts, evaluation and the math rewards.

    messages = math_messages(problem)              # Problem with .prompt (or a string)
    p = parse_math_response(text)  # MathParsed(reasoning, answer, format_ok, reason)
    ok, reason = answer_correct(text, gold="025")  # math-verify equivalence, gold normalised

A math response is reasoning inside <think>...</think> followed by the final answer in
\\boxed{...}. `format_ok` (the math R_fmt) needs non-empty reasoning and exactly one boxed
answer after it, not inside the reasoning (prompts.in_reasoning: inside a think block, after a
<think> never closed, before a lone </think>: an answer with no reasoning before it).
`answer_correct` compares the last boxed answer (at most MAX_ANSWER_CHARS long, else wrong
unread: answer_target) or, when there is none, the whole text, as math-verify does, with the
gold answer;
AIME's zero-padded gold strings ("025") are normalised to integers first. math-verify
(imported when first needed) runs its own timeouts with signals, which work only in the main
thread: called from any other thread, the check runs in a child process
(recode_lib.core.bounded_call) killed after CHECK_TIMEOUT_S, and an answer whose check overruns
is wrong, as one math-verify's own timeout stops is.
The math domain's counterpart of recode_lib.core.prompts (the code response format); a sample's
verdict and the math evaluation are recode_lib.evaluation.math, the rewards
recode_lib.rewards.math. It does no generation and no code execution.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from recode_lib.core.bounded_call import CallTimedOut, ChildDied, ChildFailed, bounded_call
from recode_lib.core.prompts import in_reasoning, reasoning_text

CHECK_TIMEOUT_S = 30.0  # off the main thread: the bound of one answer check (parse + verify)

SYSTEM_MATH = (
    "You are an expert mathematician. First reason about the problem step by step inside "
    "<think> and </think>. Then give only the final answer in \\boxed{}."
)


def math_messages(problem) -> list[dict]:
    text = problem if isinstance(problem, str) else problem.prompt
    return [{"role": "system", "content": SYSTEM_MATH}, {"role": "user", "content": text.strip()}]


def boxed_spans(text: str) -> list[tuple[int, str]]:
    """(offset of the \\boxed, its contents) of every \\boxed{...} (balanced braces), in order."""
    out, i = [], 0
    while True:
        j = text.find("\\boxed", i)
        if j < 0:
            return out
        k = text.find("{", j)
        if k < 0:
            return out
        depth, m = 0, k
        while m < len(text):
            if text[m] == "{":
                depth += 1
            elif text[m] == "}":
                depth -= 1
                if depth == 0:
                    break
            m += 1
        if depth != 0:
            return out
        out.append((j, text[k + 1 : m].strip()))
        i = m + 1


def boxed_answers(text: str) -> list[str]:
    """The contents of every \\boxed{...} (balanced braces), in order."""
    return [b for _, b in boxed_spans(text)]


@dataclass
class MathParsed:
    reasoning: str
    answer: str | None
    format_ok: bool
    reason: str


def parse_math_response(text: str) -> MathParsed:
    text = text or ""
    spans = boxed_spans(text)
    boxes = [b for _, b in spans]
    inside = reasoning_text(text)
    first_box = text.find("\\boxed")
    reasoning = (
        inside if inside is not None else text[: first_box if first_box >= 0 else len(text)]
    ).strip()
    answer = boxes[-1] if boxes else None
    if answer is None:
        return MathParsed(reasoning, None, False, "no \\boxed{} answer")
    if not reasoning:
        return MathParsed(reasoning, answer, False, "no reasoning before the answer")
    if len(boxes) != 1:
        return MathParsed(reasoning, answer, False, f"{len(boxes)} boxed answers")
    if in_reasoning(text, spans[-1][0]):
        return MathParsed(
            reasoning, answer, False, "the answer is inside the reasoning (a think block)"
        )
    return MathParsed(reasoning, answer, True, "")


def normalise_gold(gold) -> str:
    s = str(gold).strip()
    if re.fullmatch(r"[+-]?\d+", s):
        return str(int(s))  # "025" -> "25"
    return s


def answer_correct(text: str, gold, *, timeout_s: float | None = None) -> tuple[bool, str]:
    """(correct, reason). Never raises: a parse failure is (False, reason). On the main thread
    math-verify bounds its own parsing and comparisons; from any other thread the check runs in
    a child process killed after timeout_s (default CHECK_TIMEOUT_S): an overrun, or a check
    that kills its process, is a wrong answer, not an infrastructure error (a reward of 0, not
    None: no completion escapes its penalty by being slow to check)."""
    if threading.current_thread() is threading.main_thread():
        return check_answer(text, gold)
    timeout_s = CHECK_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        args = [text or "", normalise_gold(gold)]
        ok, why = bounded_call(f"{__name__}:check_answer", args, timeout_s=timeout_s)
        return bool(ok), str(why)
    except CallTimedOut:
        return False, f"wrong answer: checking it took over {timeout_s:g} s"
    except ChildDied as exc:
        return False, f"wrong answer: checking it ended the checker ({exc})"[:300]
    except ChildFailed as exc:
        return False, f"math-verify error: {exc}"[:300]


MAX_ANSWER_CHARS = 1000  # the longest boxed answer math-verify reads (its parsing is quadratic)


def answer_target(text: str) -> tuple[str | None, str]:
    """(what math-verify reads, "") or (None, why the answer is wrong unread): the last boxed
    answer, wrong when longer than MAX_ANSWER_CHARS (no AIME or MATH answer comes close; a
    degenerate one such as 4,000 `\\[` cost math-verify ~0.5 s, 8,000 ~2 s, in the trainer's
    process); with no box, the whole text (math-verify looks for a "final answer is" anywhere
    in it; its own timeout, or CHECK_TIMEOUT_S off the main thread, bounds that cost)."""
    boxes = boxed_answers(text)
    if not boxes:
        return text, ""
    if len(boxes[-1]) > MAX_ANSWER_CHARS:
        return None, (
            f"wrong answer: the boxed answer has {len(boxes[-1])} characters "
            f"(over {MAX_ANSWER_CHARS})"
        )
    return f"\\boxed{{{boxes[-1]}}}", ""


def check_answer(text: str, gold) -> tuple[bool, str]:
    """answer_correct in this process, with math-verify's own timeouts where they work."""
    from math_verify import parse, verify

    kw = {} if threading.current_thread() is threading.main_thread() else {"parsing_timeout": None}
    vkw = {} if not kw else {"timeout_seconds": None}
    try:
        gold_parsed = parse(f"${normalise_gold(gold)}$", **kw)
        if not gold_parsed:
            return False, f"gold answer {gold!r} does not parse"
        target, why = answer_target(text or "")
        if target is None:
            return False, why
        pred = parse(target, **kw)
        if not pred:
            return False, "no answer found"
        ok = bool(verify(gold_parsed, pred, **vkw))
        return ok, "" if ok else "wrong answer"
    except Exception as exc:  # math-verify raises on pathological input / timeouts
        return False, f"math-verify error: {type(exc).__name__}: {exc}"[:300]
