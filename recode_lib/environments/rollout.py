"""Episodes of the tool and agentic settings at inference time: the same environments as in
training, driven by a generation backend (hf, vllm) or a scripted policy.

    from recode_lib.environments.rollout import run_episodes, tool_generator
    gen = tool_generator("hf", "smollm2", setting="tool", batch_size=8)   # renders the tools
    eps = run_episodes(gen, rows, "tool", sampling, n=1, max_turns=5,
                       factory=environment_factory("tool", max_calls=4))
    eps[0].turns, eps[0].tool_calls, eps[0].tool_errors, eps[0].n_tokens, eps[0].answer

One episode per (row, sample index): `factory()` makes the environment, `reset(**row)` gives the
note appended to the last user message (as TRL does), then up to `max_turns` assistant turns,
all active episodes of a turn generated in one batch (each sample with its own seed:
sample_seed(seed, conversation, index)). A turn's tool calls are parsed from the Qwen2.5 /
ChatML tool syntax (`<tool_call>{"name", "arguments"}</tool_call>`, parse_turn; not inside
the turn's leading think block, as in training) and run on the
environment; a call with bad JSON, an unknown tool, wrong arguments, or a tool that raises is
answered with an error text, counted in tool_errors, and the episode goes on (in training TRL
treats a turn whose calls do not parse as a plain answer; at evaluation the error is returned).
An episode ends with a turn that calls no tool (tool setting: its text is the answer), with a
submission (agentic), or when the turns run out: then there is no answer, a format error
(settings.final_answer). Environments are dropped when their episode ends (a terminal
workspace is closed at submit or by the garbage collector; it holds no processes). It does not
execute answers (recode_lib.evaluation.loop does, with the sandbox).
"""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import dataclass, field

from recode_lib.environments.chat import MAX_CALL_DEPTH, call_too_deep, prepare_tool_tokenizer
from recode_lib.environments.settings import check_setting, environment_factory, final_answer
from recode_lib.generation import SampleRequest, get_generator, sample_seed

_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)
_THINK_OPEN = "<think>"
_THINK_CLOSE = re.compile(r"</think>\s*")
HIDDEN_METHODS = ("reset", "get_reward")


def tool_methods(env) -> dict:
    """{name: bound method}: the environment's tools, by TRL's rule (public functions of its
    class except reset and get_reward)."""
    return {
        name: getattr(env, name)
        for name, _ in inspect.getmembers(type(env), inspect.isfunction)
        if name not in HIDDEN_METHODS and not name.startswith("_")
    }


def reasoning_end(text: str) -> int:
    """Where the turn's reasoning ends: 0 when the turn does not open with '<think>', else the
    index after its first '</think>' (and the whitespace after it), or len(text) when the block
    is never closed.

    This is how training reads a turn (TRL's response template as environments.chat anchors
    it: the reasoning field opens only at the very start of the turn and closes at the first
    `</think>\\s*`), so a '<tool_call>' written inside the think block is thought, not a call,
    in evaluation as in training."""
    if not text.startswith(_THINK_OPEN):
        return 0
    m = _THINK_CLOSE.search(text, len(_THINK_OPEN))
    return m.end() if m else len(text)


def parse_turn(text: str) -> tuple[str, list[dict], list[str]]:
    """(content without the tool calls, well-formed calls [{"name", "arguments"}], errors for
    the malformed ones). Calls are read after the turn's leading think block (reasoning_end):
    one inside it is not a call, as in training. A call nesting deeper than
    chat.MAX_CALL_DEPTH is malformed (parsed near the recursion limit, the next turn's
    chat template could not render it: the evaluation ended with a RecursionError)."""
    calls, errors = [], []
    text = text or ""
    start = reasoning_end(text)
    for m in _CALL.finditer(text, start):
        body = m.group(1).strip()
        try:
            obj = json.loads(body)
        except (ValueError, RecursionError):
            errors.append(f"malformed tool call (not JSON): {body[:120]!r}")
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
            errors.append(f"malformed tool call (needs a name): {body[:120]!r}")
            continue
        args = obj.get("arguments", {})
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except (ValueError, RecursionError):
                pass
        if args is None:
            args = {}
        if not isinstance(args, dict):
            errors.append(f"tool call {obj['name']!r}: arguments must be an object")
            continue
        if call_too_deep({"name": obj["name"], "arguments": args}):
            errors.append(
                f"malformed tool call (nested more than {MAX_CALL_DEPTH} levels deep): "
                f"{body[:120]!r}"
            )
            continue
        calls.append({"name": obj["name"], "arguments": args})
    if calls or errors:
        content = (text[:start] + _CALL.sub("", text[start:])).strip()
    else:
        content = text
    return content, calls, errors


def call_tool(tools: dict, name: str, arguments: dict) -> tuple[str, bool]:
    """(result text, whether it is an error) of one parsed call; never raises."""
    fn = tools.get(name)
    if fn is None:
        return f"error: unknown tool {name!r} (tools: {', '.join(sorted(tools))})", True
    try:
        inspect.signature(fn).bind(**arguments)
    except TypeError as exc:
        return f"error: {name}: {exc}", True
    try:
        return str(fn(**arguments)), False
    except Exception as exc:  # a tool error is the model's to see, never the evaluator's crash
        return f"error: {exc}"[:2000], True


@dataclass
class Episode:
    row: dict
    sample: int
    env: object
    messages: list
    start: int  # index of the first generated message in `messages`
    turns: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    n_tokens: int = 0
    finish_reason: str = "stop"
    done: bool = False
    answer: str = ""
    no_answer: str = ""  # why there is no answer ("" when there is one)
    statuses: list = field(default_factory=list)

    @property
    def transcript(self) -> list:
        return self.messages[self.start :]


def start_messages(row: dict, note) -> list:
    msgs = [dict(m) for m in row["prompt"]]
    if note:
        msgs[-1] = {**msgs[-1], "content": msgs[-1]["content"] + note}
    return msgs


def run_episodes(
    generator,
    rows,
    setting: str,
    sampling,
    *,
    n: int = 1,
    max_turns: int = 5,
    factory=None,
    progress: bool = False,
) -> list[Episode]:
    """Run n episodes per row (rows: dicts with `prompt` messages and the reset columns)."""
    check_setting(setting)
    if setting == "single":
        raise ValueError("run_episodes is for the tool and agentic settings")
    if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
        raise ValueError(f"max_turns must be a positive integer, got {max_turns!r}")
    if factory is None:
        factory = environment_factory(setting)
    episodes = []
    for row in rows:
        for i in range(n):
            env = factory()
            msgs = start_messages(row, env.reset(**row))
            episodes.append(Episode(row=row, sample=i, env=env, messages=msgs, start=len(msgs)))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(episodes), desc=f"episodes ({setting})", unit="episode")
    for _turn in range(max_turns):
        active = [e for e in episodes if not e.done]
        if not active:
            break
        reqs = [
            SampleRequest(e.messages, e.sample, sample_seed(sampling.seed, e.messages, e.sample))
            for e in active
        ]
        comps = generator.generate_samples(reqs, sampling)
        for e, comp in zip(active, comps, strict=True):
            e.turns += 1
            e.n_tokens += int(comp.n_tokens)
            e.finish_reason = comp.finish_reason
            content, calls, errors = parse_turn(comp.text)
            if not calls and not errors:
                e.messages.append({"role": "assistant", "content": comp.text})
                e.done = True
                continue
            e.messages.append(
                {
                    "role": "assistant",
                    "content": content,
                    "tool_calls": [{"type": "function", "function": c} for c in calls],
                }
            )
            tools = tool_methods(e.env)
            for err in errors:
                e.tool_calls += 1
                e.tool_errors += 1
                e.messages.append({"role": "tool", "name": "error", "content": f"error: {err}"})
            for c in calls:
                e.tool_calls += 1
                text, bad = call_tool(tools, c["name"], c["arguments"])
                e.tool_errors += bad
                e.messages.append({"role": "tool", "name": c["name"], "content": text})
            if getattr(e.env, "submission", None) is not None:
                e.done = True
        if bar is not None:
            bar.update(sum(e.done for e in active))
    for e in episodes:
        e.answer, e.no_answer = final_answer(setting, e.transcript, e.env)
        stats = getattr(e.env, "stats", None)
        if isinstance(stats, dict):
            e.statuses = list(stats.get("statuses", []))
        e.done = True
        e.env = None  # the environment (and a workspace's files) ends with it
    if bar is not None:
        bar.close()
    return episodes


def tool_options(setting: str) -> dict:
    """get_generator's options that make a backend render `setting`'s tools: the tools (TRL's
    rule, tool_methods, on a probe environment) and the tokenizer hook that gives it a tool
    template (recode_lib.environments.chat.prepare_tool_tokenizer)."""
    probe = environment_factory(check_setting(setting))()
    return {
        "tools": list(tool_methods(probe).values()),
        "prepare_tokenizer": prepare_tool_tokenizer,
    }


def tool_generator(backend: str, model, setting: str, **kwargs):
    """A generation backend whose prompts render the setting's tools (hf, vllm or vllm_standin):
    recode_lib.generation.get_generator with tool_options(setting); `kwargs` are its options."""
    return get_generator(backend, str(model), **tool_options(setting), **kwargs)
