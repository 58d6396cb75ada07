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
Every response template it leaves on the tokenizer opens the reasoning only at the start of the
turn (anchor_reasoning): TRL's templates open it at any `<think>`, so a literal '<think>' inside
the code after the think block cut the code there in training while evaluation ran it whole.
SmolLM2-135M-Instruct renders and parses fine with CHATML_TOOLS but does not call tools: 0 calls
in 8 tool-setting episodes on the micro-benchmark, and 0 in 8 with a one-shot tool-call example
in the system block (not kept; docs/settings.md).
It does not run tools (the environments do).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

CHATML_TOOLS = (Path(__file__).with_name("chatml_tools.jinja")).read_text(encoding="utf-8")


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


def prepare_tool_tokenizer(tok):
    """Give `tok` a chat template that renders tools and a response template TRL parses (its
    reasoning opened only at the start of a turn: anchor_reasoning)."""
    from trl.chat_template_utils import add_response_schema, qwen3_template

    template = getattr(tok, "chat_template", None)
    if getattr(tok, "response_template", None) is not None and not is_plain_chatml(template):
        tok.response_template = anchor_reasoning(tok.response_template)
        return tok
    if is_plain_chatml(template):
        tok.chat_template = CHATML_TOOLS
        tok.response_template = anchor_reasoning(qwen3_template)
        return tok
    try:
        tok = add_response_schema(tok)
        if getattr(tok, "response_template", None) is not None:
            tok.response_template = anchor_reasoning(tok.response_template)
        return tok
    except ValueError as exc:
        raise ValueError(
            f"no tool-calling template known for this tokenizer (template starts "
            f"{str(template)[:80]!r}): set tok.chat_template and "
            f"tok.response_template yourself ({exc})"
        ) from None
