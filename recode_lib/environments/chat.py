"""Chat templates for tool calling: make a tokenizer render tools and let TRL parse tool calls.

    from recode_lib.environments.chat import prepare_tool_tokenizer, CHATML_TOOLS
    tok = prepare_tool_tokenizer(tok)    # in place; returns tok

- A template TRL knows (Qwen2.5's own, as the paper profile's Qwen2.5 models ship it, and the
  other families in trl/chat_templates/) keeps its template and gets TRL's response template
  (trl.chat_template_utils.add_response_schema).
- A plain ChatML template without tool support (the embedded SmolLM2-135M-Instruct, the tiny
  test models: `<|im_start|>`/`<|im_end|>`, no `tools` variable) is replaced by CHATML_TOOLS
  (chatml_tools.jinja next to this file): Qwen2.5's tool format (TRL's prefix-preserving
  qwen2_5_training.jinja with SmolLM2's default system text), parsed by TRL's Qwen response
  template (trl.chat_template_utils.qwen3_template: `<tool_call>{json}</tool_call>`).
- Anything else raises ValueError naming the template's start: set a tool template yourself.
A template with tool support is left alone when the tokenizer already has a response template.
Every template it leaves is made to read a turn as evaluation does (anchor_reasoning,
anchor_turn_end, JudgedTextParse: a literal '<think>' or '<|im_end|>' or a special token inside
the code no longer changes what training judges). More: docs/modules/environments.md (chat).
It does not run tools (the environments do).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

from recode_lib.core.jsonl import nested_deeper
from recode_lib.core.prompts import GENERATED_TEXT_KEY

CHATML_TOOLS = (Path(__file__).with_name("chatml_tools.jinja")).read_text(encoding="utf-8")
# A tool call ({"name", "arguments"}) nesting deeper than this is malformed. The tools take
# strings; the bound is what keeps an accepted call renderable: JSON parsed near the
# interpreter's recursion limit from one stack cannot be rendered again (the chat template's
# tojson) from a deeper one, which ended the rollout with a RecursionError.
MAX_CALL_DEPTH = 32


def call_too_deep(call) -> bool:
    """Whether a parsed tool call nests deeper than MAX_CALL_DEPTH."""
    return nested_deeper(call, MAX_CALL_DEPTH)


def is_plain_chatml(template) -> bool:
    return isinstance(template, str) and "<|im_start|>" in template and "tools" not in template


def anchor_reasoning(response_template):
    """A copy of a transformers response template whose `reasoning_content` field opens only at
    the start of the assistant turn (or of its prefill), never at a later '<think>'.

    The template's parser opens a field wherever its opener occurs: with TRL's templates a
    '<think>' written inside the code after the think block (`s = '<think>'`) starts a second
    reasoning region and the code is cut there, so training judged broken code that evaluation
    (the raw text) runs. Anchored, the whole turn after the first think block stays content.
    Templates without a literal reasoning opener (or not a dict) are returned unchanged."""
    if not isinstance(response_template, dict):
        return response_template
    field = response_template.get("fields", {}).get("reasoning_content")
    if not isinstance(field, dict) or not isinstance(field.get("open"), str):
        return response_template
    out = copy.deepcopy(response_template)
    anchored = out["fields"]["reasoning_content"]
    anchored["open_pattern"] = r"\A" + re.escape(anchored.pop("open"))
    return out


def anchor_turn_end(response_template):
    """A copy of a transformers response template whose implicit field (the one without an
    opener: `content`) closes only at the end of the turn, never at an earlier match of its
    closer.

    The parser closes that field at every match (`<|im_end|>` in TRL's Qwen templates) and
    reopens it for the text after, which replaces what it held: a turn that writes the
    literal '<|im_end|>' in ordinary tokens (generation does not stop there) was judged in
    training on the text after it only, while evaluation reads the whole turn. Anchored, the
    closer counts only as the turn's last text (trailing whitespace allowed by the pattern).
    Templates without such a field (or not a dict) are returned unchanged."""
    if not isinstance(response_template, dict) or not isinstance(
        response_template.get("fields"), dict
    ):
        return response_template
    for name, field in response_template["fields"].items():
        if not isinstance(field, dict) or "open" in field or "open_pattern" in field:
            continue
        close = field.get("close_pattern")
        if close is None and isinstance(field.get("close"), str):
            close = re.escape(field["close"])
        elif isinstance(field.get("close"), list):
            close = "|".join(re.escape(c) for c in field["close"] if isinstance(c, str))
        if not isinstance(close, str) or not close or close.endswith(r")\Z"):
            return response_template  # none, or anchored already
        out = copy.deepcopy(response_template)
        anchored = out["fields"][name]
        anchored.pop("close", None)
        anchored["close_pattern"] = "(?:" + close + r")\Z"
        return out
    return response_template


def anchor_template(response_template):
    """anchor_reasoning and anchor_turn_end together: what prepare_tool_tokenizer installs."""
    return anchor_turn_end(anchor_reasoning(response_template))


class JudgedTextParse:
    """`tok.parse_response` reading the text evaluation judges. TRL (GRPOTrainer, its tool
    loop) parses each completion with `tokenizer.parse_response(ids, prefix=..., tools=...)`,
    which decodes the ids with every special token kept (and the tokenizer's clean-up of
    spaces), while the generation backends give evaluation `decode(skip_special_tokens=True,
    clean_up_tokenization_spaces=False)` (generation/hf.py, vllm_backend.py): a special token
    inside the code (`len('<|im_start|>')`) made a program that passed in training and failed
    in evaluation, or the reverse. Here the response's ids are decoded as evaluation decodes
    them, except the special tokens one of the template's delimiters matches (the end-of-turn
    closer, special tool-call tags), which the parser needs; and each parsed message carries
    that text whole (prompts.GENERATED_TEXT_KEY), which the judge reads (prompts.message_text):
    the parser's split of the reasoning cannot be undone exactly (it strips the reasoning and
    drops an empty one). Text responses and the prefix are passed on unchanged. Picklable (no
    closure).

    Never raises for what a completion holds: TRL falls back to plain text only on ValueError
    or TypeError, while the template's JSON parser raises RecursionError on a tool call nested
    ~1,000 deep (`<tool_call>[[[[...`, a few hundred tokens), which ended the GRPO run. A row
    whose parse raises anything is parsed alone, and one that still raises is a plain answer:
    its text as content, no tool call (TRL's own fallback for a call that does not parse). A
    tool call nesting deeper than MAX_CALL_DEPTH counts as not parsing (evaluation's parse_turn
    refuses it too)."""

    __slots__ = ("tok",)

    def __init__(self, tok):
        self.tok = tok

    def parse(self, texts, schema, prefix, tools) -> list:
        """The template's parse of each text; a row whose parse raises is a plain message."""
        tok = self.tok
        try:
            parsed = type(tok).parse_response(tok, texts, schema, prefix=prefix, tools=tools)
            if any(
                isinstance(m, dict)
                and any(
                    call_too_deep(c.get("function") if isinstance(c, dict) else c)
                    for c in m.get("tool_calls") or ()
                )
                for m in parsed
            ):
                raise ValueError(f"a tool call nested more than {MAX_CALL_DEPTH} levels deep")
            return parsed
        except Exception:
            if len(texts) == 1:
                return [{"role": "assistant", "content": texts[0]}]
        return [
            self.parse([t], schema, row_prefix(prefix, i, len(texts)), tools)[0]
            for i, t in enumerate(texts)
        ]

    def __call__(self, response, schema=None, *, prefix=None, tools=None):
        tok = self.tok
        if isinstance(response, str) or (
            isinstance(response, (list, tuple)) and response and isinstance(response[0], str)
        ):  # text: passed on as it is
            parsed = self.parse(
                [response] if isinstance(response, str) else list(response), schema, prefix, tools
            )
            return parsed[0] if isinstance(response, str) else parsed
        if hasattr(response, "tolist"):
            response = response.tolist()
        batch = bool(response) and isinstance(response[0], list)
        rows = response if batch else [response]
        texts = [self.text(ids, schema) for ids in rows]
        parsed = self.parse(texts, schema, prefix, tools)
        for msg, ids in zip(parsed, rows, strict=True):
            if isinstance(msg, dict):
                msg[GENERATED_TEXT_KEY] = tok.decode(
                    ids, skip_special_tokens=True, clean_up_tokenization_spaces=False
                )
        return parsed if batch else parsed[0]

    def text(self, ids, schema=None):
        """The response's text as evaluation reads it, the template's special delimiters kept
        (the end-of-turn closer only at the end, where generation stopped at it)."""
        tok = self.tok
        ids = list(ids)
        anywhere, at_end = structural_ids(
            tok, schema if schema is not None else tok.response_template
        )
        special = set(tok.all_special_ids) | {
            i for i, t in tok.added_tokens_decoder.items() if getattr(t, "special", False)
        }
        end = len(ids)
        while end and ids[end - 1] in at_end:
            end -= 1
        kept = [i for i in ids[:end] if i in anywhere or i not in special] + ids[end:]
        return tok.decode(kept, skip_special_tokens=False, clean_up_tokenization_spaces=False)


def row_prefix(prefix, i: int, n: int):
    """Row i's prefix of a batch of n parsed together: one prefix per item (a list of n
    strings or id lists, a 2D array) gives its i-th; a single one is everyone's."""
    if hasattr(prefix, "tolist"):
        prefix = prefix.tolist()
    if (
        isinstance(prefix, (list, tuple))
        and len(prefix) == n
        and all(isinstance(p, (str, list, tuple)) for p in prefix)
    ):
        return prefix[i]
    return prefix


def structural_ids(tok, response_template) -> tuple[set, set]:
    """(ids of the special tokens a delimiter of one of the template's explicit fields matches,
    ids of those the implicit field's closer matches: the end of the turn)."""
    anywhere, at_end = [], []
    fields = (response_template or {}).get("fields", {})
    for field in fields.values() if isinstance(fields, dict) else ():
        if not isinstance(field, dict):
            continue
        implicit = "open" not in field and "open_pattern" not in field
        pats = []
        for key in ("open", "close"):
            lits = field.get(key)
            for lit in [lits] if isinstance(lits, str) else lits or []:
                if isinstance(lit, str):
                    pats.append(re.escape(lit))
        for key in ("open_pattern", "close_pattern"):
            if isinstance(field.get(key), str):
                pats.append(field[key].replace(r"\A", "").replace(r"\Z", ""))
        (at_end if implicit else anywhere).extend(pats)
    out = (set(), set())
    for i, t in tok.added_tokens_decoder.items():
        text = str(getattr(t, "content", t))
        for pats, ids in zip((anywhere, at_end), out, strict=True):
            if any(_matches(p, text) for p in pats):
                ids.add(i)
    return out


def _matches(pattern: str, text: str) -> bool:
    try:
        return re.match(pattern, text, re.S) is not None
    except re.error:
        return False


def judged_parse(tok):
    """Anchor `tok`'s response template (anchor_template) and make its parse_response read the
    text evaluation judges (JudgedTextParse). In place; returns tok (unchanged without one)."""
    if getattr(tok, "response_template", None) is None:
        return tok
    tok.response_template = anchor_template(tok.response_template)
    if not isinstance(tok.__dict__.get("parse_response"), JudgedTextParse):
        tok.parse_response = JudgedTextParse(tok)
    return tok


def prepare_tool_tokenizer(tok):
    """Give `tok` a chat template that renders tools and a response template TRL parses (its
    reasoning opened only at the start of a turn and its content closed only at the end:
    anchor_template), read from the text evaluation judges (JudgedTextParse)."""
    from trl.chat_template_utils import add_response_schema, qwen3_template

    template = getattr(tok, "chat_template", None)
    if getattr(tok, "response_template", None) is not None and not is_plain_chatml(template):
        return judged_parse(tok)
    if is_plain_chatml(template):
        tok.chat_template = CHATML_TOOLS
        tok.response_template = qwen3_template
        return judged_parse(tok)
    try:
        return judged_parse(add_response_schema(tok))
    except ValueError as exc:
        raise ValueError(
            f"no tool-calling template known for this tokenizer (template starts "
            f"{str(template)[:80]!r}): set tok.chat_template and "
            f"tok.response_template yourself ({exc})"
        ) from None
