"""Hand-written traces and a scripted generator for the CRPL / LCB-RB / judge tests."""

from __future__ import annotations

from dataclasses import dataclass

from recode_lib.core.prompts import format_response

CODE = "def add(a, b):\n    return a + b"
REASONING = (
    "We need the sum of two numbers.\nPython's + operator adds two integers.\n"
    "Return a + b directly, which is O(1).\nReturn a + b directly, which is O(1)."
)


@dataclass
class Comp:
    text: str
    n_tokens: int = 1
    finish_reason: str = "stop"


class ScriptedGenerator:
    """Implements the generation interface; replies come from `reply(messages, j)`."""

    def __init__(self, reply):
        self.reply = reply
        self.calls = 0

    def generate(self, messages, sampling):
        self.calls += len(messages)
        return [[Comp(self.reply(m, j)) for j in range(sampling.n)] for m in messages]


def trace(
    tid="p/1#s0", problem_id="p/1", reasoning=REASONING, code=CODE, outcome="correct", usable=True
):
    return {
        "id": tid,
        "problem_id": problem_id,
        "prompt": f"Write add for {problem_id}.",
        "reasoning": reasoning,
        "code": code,
        "usable": usable,
        "reason": "",
        "trace": format_response(reasoning, code) if usable else None,
        "verdict": {
            "status": "passed" if outcome == "correct" else "wrong_answer",
            "outcome": outcome,
            "passed": 1,
            "total": 1,
        },
    }
