"""The response format shared by the policy, evaluation, the rewards and CRPL.

A response is a reasoning section followed by one fenced Python code block:

    <think>
    ...reasoning...
    </think>
    ```python
    ...code...
    ```

- build_messages(problem, reasoning=True) -> chat messages for a Problem (or a plain prompt).
- canonical_trace(reasoning, code) -> (format_response(...) or None, why not): a trace that
  parses back to the same code with format_ok (what CRPL and LCB-RB store as usable).
- parse_response(text) -> Parsed(reasoning, code, has_code, format_ok, reason):
  `code` is the last fenced block that parses as Python (None if there is none: a format error
  for evaluation); a reply that starts straight with code and only closes the fence
  ("def f(x): ...\n```\nThis function ...", a habit of small chat models) counts as a block;
  `format_ok` (what R_fmt rewards) additionally needs a non-empty reasoning section before the
  code and exactly one code block; `explanation` is the prose after the code (never reasoning).
- completion_text(completion) / prompt_text(prompt) -> the text of a TRL completion or prompt
  (a string, or chat messages: the assistant contents joined / the last user turn).
This module does no generation and no execution.
"""

from __future__ import annotations

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


def completion_text(completion) -> str:
    """A completion as text: strings pass through; chat messages -> assistant contents joined."""
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return str(completion.get("content") or "")
    parts = [m.get("content") or "" for m in completion
             if isinstance(m, dict) and m.get("role", "assistant") == "assistant"]
    return "".join(p if isinstance(p, str) else str(p) for p in parts)


def prompt_text(prompt) -> str:
    """The user's problem statement: the last user turn of a chat prompt, or the string."""
    if isinstance(prompt, str):
        return prompt
    users = [m.get("content") or "" for m in prompt or [] if m.get("role") == "user"]
    return users[-1] if users else ""


@dataclass
class Parsed:
    reasoning: str
    code: str | None
    n_blocks: int
    format_ok: bool
    reason: str           # "" when format_ok, else why not (for logging)
    explanation: str = ""  # prose after the code block

    @property
    def has_code(self) -> bool:
        return self.code is not None


def _parses(code: str) -> bool:
    """Whether `code` compiles as a module, as the sandbox will compile it: not only parses
    (ast.parse accepts `return`, `yield` or `break` outside their blocks, a late
    `from __future__` import, `nonlocal` at module level; compile refuses them, so such a
    block would be a format success that can never run)."""
    try:
        compile(code, "<answer>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def code_blocks(text: str) -> list[tuple[str, str, int]]:
    """(language, body, start offset) of every fenced block, unterminated last one included."""
    return [(m.group(1).lower(), m.group(2), m.start()) for m in _FENCE.finditer(text)]


def _unopened_block(text: str) -> tuple[str, int] | None:
    """A reply that begins with code and only closes the fence: (code, end offset)."""
    close = text.find("```")
    if close <= 0 or _FENCE.match(text.lstrip()):
        return None
    if text[close + 3:].split("\n", 1)[0].strip():   # "```python": an opening fence
        return None
    body = text[:close].strip("\n")
    if body.strip() and "\n" in body.strip() and _parses(body):
        return body, close + 3
    return None


def parse_response(text: str) -> Parsed:
    text = text or ""
    # a reply that starts with code and closes the fence: that fence closes, never opens
    unopened = _unopened_block(text)
    after = unopened[1] if unopened else 0
    blocks = [m for m in _FENCE.finditer(text, after)
              if m.group(1).lower() in ("python", "py", "python3", "")]
    code, start, end = None, len(text), len(text)
    for m in reversed(blocks):
        body = m.group(2)
        if body.strip() and _parses(body):
            code, start, end = body.strip("\n"), m.start(), m.end()
            break
    n_blocks = len(blocks) + (unopened is not None)
    if code is None and unopened is not None:
        (code, end), start = unopened, 0
    m = _THINK.search(text)
    reasoning = (m.group(1) if m else text[:start]).strip()
    explanation = _THINK.sub("", text[end:]).strip().strip("`").strip()
    if code is None:
        reason = "no code block" if not blocks else "code block does not parse"
        return Parsed(reasoning, None, n_blocks, False, reason, explanation)
    if not reasoning:
        return Parsed(reasoning, code, n_blocks, False, "no reasoning before the code",
                      explanation)
    if n_blocks != 1:
        return Parsed(reasoning, code, n_blocks, False, f"{n_blocks} code blocks", explanation)
    return Parsed(reasoning, code, n_blocks, True, "", explanation)


def extract_code(text: str) -> str | None:
    """The code to execute, or None (a format error)."""
    return parse_response(text).code


def canonical_trace(reasoning: str, code: str | None) -> tuple[str | None, str]:
    """(trace, "") when reasoning + code make a trace that parses back with format_ok, else
    (None, why): no code, no reasoning, or reasoning that itself holds a code fence (the
    canonical trace would then carry several code blocks)."""
    if code is None or not code.strip():
        return None, "no code"
    if not (reasoning or "").strip():
        return None, "no reasoning"
    text = format_response(reasoning, code)
    back = parse_response(text)
    if not back.format_ok or (back.code or "").strip() != code.strip():
        return None, f"trace does not round-trip ({back.reason or 'the code changes'})"
    return text, ""


def format_response(reasoning: str, code: str) -> str:
    """Assemble a response in the canonical format (used by CRPL rewrites and fixtures)."""
    return f"<think>\n{reasoning.strip()}\n</think>\n```python\n{code.strip()}\n```"
