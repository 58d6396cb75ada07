"""The response format shared by the policy, evaluation, the rewards and CRPL.

A response is a reasoning section followed by one fenced Python code block:

    <think>
    ...reasoning...
    </think>
    ```python
    ...code...
    ```

- build_messages(problem, reasoning=True) -> chat messages for a Problem (or a plain prompt).
- parse_response(text) -> Parsed(reasoning, code, has_code, format_ok, reason):
  `code` is the last fenced block that parses as Python (None if there is none: a format error
  for evaluation); `format_ok` (what R_fmt rewards) additionally needs a non-empty reasoning
  section before the code and exactly one code block.
This module does no generation and no execution.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

SYSTEM_REASONING = (
    "You are an expert Python programmer. First reason about the problem step by step inside "
    "<think> and </think>. Then give your complete solution in a single ```python code block."
)
SYSTEM_DIRECT = (
    "You are an expert Python programmer. Reply with your complete solution in a single "
    "```python code block."
)

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.DOTALL)
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def user_prompt(problem) -> str:
    """The user turn for a Problem (anything with .prompt/.starter_code/.tests) or a string."""
    if isinstance(problem, str):
        return problem
    text = problem.prompt.strip()
    kind = (problem.tests or {}).get("kind")
    if kind == "stdio":
        text += "\n\nRead the input from standard input and write the answer to standard output."
    starter = (problem.starter_code or "").strip()
    if starter and starter not in text:
        text += f"\n\nComplete this code:\n```python\n{starter}\n```"
    elif starter:
        text += "\n\nComplete the code above; include the full function in your answer."
    return text


def build_messages(problem, reasoning: bool = True) -> list[dict]:
    return [
        {"role": "system", "content": SYSTEM_REASONING if reasoning else SYSTEM_DIRECT},
        {"role": "user", "content": user_prompt(problem)},
    ]


@dataclass
class Parsed:
    reasoning: str
    code: str | None
    n_blocks: int
    format_ok: bool
    reason: str           # "" when format_ok, else why not (for logging)

    @property
    def has_code(self) -> bool:
        return self.code is not None


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
        return True
    except (SyntaxError, ValueError):
        return False


def code_blocks(text: str) -> list[tuple[str, str, int]]:
    """(language, body, start offset) of every fenced block, unterminated last one included."""
    return [(m.group(1).lower(), m.group(2), m.start()) for m in _FENCE.finditer(text)]


def parse_response(text: str) -> Parsed:
    text = text or ""
    blocks = [b for b in code_blocks(text) if b[0] in ("python", "py", "python3", "")]
    code, start = None, len(text)
    for lang, body, off in reversed(blocks):
        if body.strip() and _parses(body):
            code, start = body.strip("\n"), off
            break
    m = _THINK.search(text)
    reasoning = (m.group(1) if m else text[:start]).strip()
    if code is None:
        reason = "no code block" if not blocks else "code block does not parse"
        return Parsed(reasoning, None, len(blocks), False, reason)
    if not reasoning:
        return Parsed(reasoning, code, len(blocks), False, "no reasoning before the code")
    if len(blocks) != 1:
        return Parsed(reasoning, code, len(blocks), False, f"{len(blocks)} code blocks")
    return Parsed(reasoning, code, len(blocks), True, "")


def extract_code(text: str) -> str | None:
    """The code to execute, or None (a format error)."""
    return parse_response(text).code


def format_response(reasoning: str, code: str) -> str:
    """Assemble a response in the canonical format (used by CRPL rewrites and fixtures)."""
    return f"<think>\n{reasoning.strip()}\n</think>\n```python\n{code.strip()}\n```"
