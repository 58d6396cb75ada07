"""The response format shared by the policy, evaluation, the rewards and CRPL.
This module does no generation and no execution.
More: docs/modules/core_and_runner.md (recode_lib.core.prompts).
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

FENCE = "```"
PYTHON_LANGS = ("python", "py", "python3", "")
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
UNREADABLE = "the judge could not read this answer"  # the reason's start (failure_reason)


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


# where a chat template's response parser puts the think block it took out of the content:
# TRL's parse_response / transformers' response templates ("reasoning_content"; LFM2.5's
# "thinking"), an OpenAI-compatible server with a reasoning parser ("reasoning_content",
# newer vLLM "reasoning")
REASONING_KEYS = ("reasoning_content", "thinking", "reasoning")
# the turn's whole text as evaluation reads it (the generation backends' decode), which the tool
# tokenizer's parse adds to the message it hands the rewards (environments.chat.JudgedTextParse):
# a response parser's split cannot be undone exactly (it strips the reasoning and drops an
# empty one)
GENERATED_TEXT_KEY = "generated_text"


def message_text(message: dict) -> str:
    """The text an assistant message was generated as: its content, after its reasoning in a
    <think> block when a response parser took that block out of the content (REASONING_KEYS;
    TRL parses every completion so when the tokenizer has a response template, as the tool
    and agentic settings' templates do). Without this the judge would read a canonical answer
    as "no reasoning before the code" in training while evaluation, which reads the raw text,
    reads it as well formatted. An empty reasoning stays an empty think block (as generated).
    A message that carries the turn's text as generated (GENERATED_TEXT_KEY) is that text: the
    split is then not undone but skipped (the parser strips the reasoning, so a reasoning that
    ended in ``` came back as an opening fence, and drops an empty one, so "<think></think>"
    before prose came back as prose)."""
    generated = message.get(GENERATED_TEXT_KEY)
    if isinstance(generated, str):
        return generated
    content = message.get("content") or ""
    content = content if isinstance(content, str) else str(content)
    for key in REASONING_KEYS:
        reasoning = message.get(key)
        if isinstance(reasoning, str):
            return f"{THINK_OPEN}\n{reasoning}\n{THINK_CLOSE}\n{content}"
    return content


def completion_text(completion) -> str:
    """A completion as text: strings pass through; chat messages -> the assistant messages'
    texts joined (message_text: a reasoning a response parser split off is put back)."""
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return message_text(completion)
    return "".join(
        message_text(m)
        for m in completion
        if isinstance(m, dict) and m.get("role", "assistant") == "assistant"
    )


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
    reason: str  # "" when format_ok, else why not (for logging)
    explanation: str = ""  # prose after the code block

    @property
    def has_code(self) -> bool:
        return self.code is not None


def failure_reason(exc: BaseException) -> str:
    """The one-line reason recorded when the judge cannot read one answer (the exception that
    a degenerate completion raised: RecursionError, MemoryError, a codec error, ...)."""
    msg = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
    return f"{UNREADABLE} ({type(exc).__name__}{': ' + msg if msg else ''})"


def unreadable(exc: BaseException) -> Parsed:
    """The Parsed of an answer the judge cannot read: no code, a format error, and why."""
    return Parsed("", None, 0, False, failure_reason(exc))


def _parses(code: str) -> bool:
    """Whether `code` compiles as a module, as the sandbox will compile it: not only parses
    (ast.parse accepts `return`, `yield` or `break` outside their blocks, a late
    `from __future__` import, `nonlocal` at module level; compile refuses them, so such a
    block would be a format success that can never run). Too deep to compile (RecursionError,
    MemoryError) or not encodable (a lone surrogate): does not compile."""
    try:
        compile(code, "<answer>", "exec", dont_inherit=True)
        return True
    except Exception:
        return False


# The fence grammar. An opening fence: ``` then spaces/tabs, a language word, spaces/tabs and a
# newline (it may begin anywhere in a line); its block runs to the first newline followed by
# spaces/tabs and ``` (that ``` closes it), or to the end of the text (an unterminated last
# block). The quantifiers of the opening line are possessive (*+): its only possible match is
# the greedy one, and without backtracking finditer runs in linear time (the former pattern,
# with plain *, took quadratic time on ``` followed by many spaces).
_FENCE = re.compile(r"```[ \t]*+([A-Za-z0-9_+-]*+)[ \t]*+\n(.*?)(?:\n[ \t]*+```|\Z)", re.DOTALL)


@dataclass(frozen=True)
class Fence:
    """One fenced block: its language (lower case), body, and offsets in the text."""

    lang: str
    body: str
    start: int  # offset of the opening ```
    end: int  # offset just past the closing ``` (len(text) when unterminated)


def fences(text: str, pos: int = 0) -> list[Fence]:
    """Every fenced block from offset `pos` on, left to right, each starting after the last
    one's end (the unterminated last one included), in time linear in len(text)."""
    return [
        Fence(m.group(1).lower(), m.group(2), m.start(), m.end())
        for m in _FENCE.finditer(text, pos)
    ]


def code_blocks(text: str) -> list[tuple[str, str, int]]:
    """(language, body, start offset) of every fenced block, unterminated last one included.
    A CodeAnswer is its one file."""
    if isinstance(text, CodeAnswer):
        return [("python", text.code, 0)]
    return [(f.lang, f.body, f.start) for f in fences(text)]


def think_span(text: str, pos: int = 0) -> tuple[int, int] | None:
    """(start, end) of the first <think>...</think> block from `pos` (the first <think> and the
    first </think> after it), or None; linear time (a regex `<think>(.*?)</think>` is
    quadratic in the number of unclosed openers)."""
    i = text.find(THINK_OPEN, pos)
    if i < 0:
        return None
    j = text.find(THINK_CLOSE, i + len(THINK_OPEN))
    return None if j < 0 else (i, j + len(THINK_CLOSE))


def in_reasoning(text: str, pos: int) -> bool:
    """Whether offset `pos` lies inside the reasoning: inside a think block (<think> to the
    first </think> after it), after a <think> never closed (the model never ended its
    reasoning: TRL's response parser files such a turn's whole text as reasoning_content), or
    before a lone </think> with no opener before it (a chat template that prefills <think> in
    the prompt, Qwen3/R1-style: the generated text holds only the closer). An answer (code
    block, boxed answer) that starts there is not given after the reasoning. Text outside
    every think block is not reasoning: code before a think block is read as TRL's parser
    reads it (it moves the think block in front), so training and evaluation agree. Linear
    time (each tag found once)."""
    first_open, close = text.find(THINK_OPEN), text.find(THINK_CLOSE)
    i = 0
    if close >= 0 and (first_open < 0 or close < first_open):
        if pos < close + len(THINK_CLOSE):
            return True
        i = close + len(THINK_CLOSE)
    while (i := text.find(THINK_OPEN, i)) >= 0 and i <= pos:
        j = text.find(THINK_CLOSE, i + len(THINK_OPEN))
        if j < 0 or pos < j + len(THINK_CLOSE):
            return True
        i = j + len(THINK_CLOSE)
    return False


def think_text(text: str) -> str | None:
    """The inside of the first think block, or None when there is none."""
    span = think_span(text)
    return None if span is None else text[span[0] + len(THINK_OPEN) : span[1] - len(THINK_CLOSE)]


def reasoning_text(text: str) -> str | None:
    """The reasoning of a response: the inside of its first think block, or, when its first
    <think> is never closed, everything after it (as TRL's response parser files it into
    reasoning_content); None when there is no <think>."""
    inside = think_text(text)
    if inside is not None:
        return inside
    i = text.find(THINK_OPEN)
    return None if i < 0 else text[i + len(THINK_OPEN) :]


def without_think(text: str) -> str:
    """`text` with every think block removed (left to right, as re.sub would)."""
    out, pos = [], 0
    while (span := think_span(text, pos)) is not None:
        out.append(text[pos : span[0]])
        pos = span[1]
    out.append(text[pos:])
    return "".join(out)


def _unopened_block(text: str) -> tuple[str, int] | None:
    """A reply that begins with code and only closes the fence: (code, end offset)."""
    close = text.find(FENCE)
    if close <= 0:
        return None
    if _FENCE.match(text.lstrip()):
        return None
    rest = text.find("\n", close + 3)
    if text[close + 3 : rest if rest >= 0 else len(text)].strip():  # "```python": it opens
        return None
    body = text[:close].strip("\n")
    if body.strip() and "\n" in body.strip() and _parses(body):
        return body, close + 3
    return None


class CodeAnswer(str):
    """A final answer that is a file of code (the agentic setting's submission): its text is
    the canonical trace `format_response(reasoning, code)` (what the reward model and the logs
    read), and parse_response takes `code` as the one code block as it is, never looking for
    fences in it (a file with a line starting with ``` inside a string stays whole)."""

    code: str
    reasoning: str

    def __new__(cls, reasoning: str, code: str):
        obj = super().__new__(cls, format_response(reasoning, code))
        obj.code, obj.reasoning = code, reasoning.strip()
        return obj

    def __reduce__(self):
        return (CodeAnswer, (self.reasoning, self.code))


def parse_response(text: str) -> Parsed:
    """The Parsed of one response (module docstring). Never raises: a response the judge cannot
    read (too deep, too big, not text) is a format error with the reason (failure_reason)."""
    try:
        if isinstance(text, CodeAnswer):
            return _parse_file(text)
        if text is not None and not isinstance(text, str):
            raise TypeError(f"a response must be text, got {type(text).__name__}")
        return _parse_response(text or "")
    except Exception as exc:  # one answer's failure is its own format error
        return unreadable(exc)


def _parse_file(answer: CodeAnswer) -> Parsed:
    code = answer.code
    if not code.strip() or not _parses(code):
        return Parsed(answer.reasoning, None, 1, False, "code block does not parse")
    if not answer.reasoning:
        return Parsed("", code.strip("\n"), 1, False, "no reasoning before the code")
    return Parsed(answer.reasoning, code.strip("\n"), 1, True, "")


def _parse_response(text: str) -> Parsed:
    # a reply that starts with code and closes the fence: that fence closes, never opens
    unopened = _unopened_block(text)
    after = unopened[1] if unopened else 0
    blocks = [f for f in fences(text, after) if f.lang in PYTHON_LANGS]
    code, start, end = None, len(text), len(text)
    failed = set()  # a repeated block is compiled once (degenerate repetition)
    for f in reversed(blocks):
        if f.body in failed:
            continue
        if f.body.strip() and _parses(f.body):
            code, start, end = f.body.strip("\n"), f.start, f.end
            break
        failed.add(f.body)
    n_blocks = len(blocks) + (unopened is not None)
    if code is None and unopened is not None:
        (code, end), start = unopened, 0
    inside = reasoning_text(text)
    reasoning = (inside if inside is not None else text[:start]).strip()
    explanation = without_think(text[end:]).strip().strip("`").strip()
    if code is None:
        reason = "no code block" if not blocks else "code block does not parse"
        return Parsed(reasoning, None, n_blocks, False, reason, explanation)
    if not reasoning:
        return Parsed(reasoning, code, n_blocks, False, "no reasoning before the code", explanation)
    if in_reasoning(text, start):
        return Parsed(
            reasoning,
            code,
            n_blocks,
            False,
            "the code block is inside the reasoning (a think block)",
            explanation,
        )
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
