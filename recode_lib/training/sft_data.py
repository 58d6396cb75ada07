"""Supervised transcripts written by a program from reference solutions, in the three settings'
own chat and tool format: the data of the shared SFT start (recode_lib.training.sft_start).

    from recode_lib.training.sft_data import TranscriptConfig, build_transcripts
    built = build_transcripts(problems, TranscriptConfig(settings=("single", "tool", "agentic")))
    built.transcripts    # [{"id", "problem_id", "setting", "reasoning", "messages", "tool_calls"}]
    built.dropped        # [{"id", "problem_id", "setting", "reason"}]: not verified, left out
    assistant_texts(tok, t["messages"], setting_tools(t["setting"]))   # what the model emits

It does not train (sft_start does) and does not choose the problems (the caller drops held-out
tasks: recode_lib.data.overlap).
More: docs/modules/training.md (recode_lib.training.sft_data).
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import shlex
from dataclasses import dataclass, field

from recode_lib.core.assemble import assemble
from recode_lib.core.prompts import format_response
from recode_lib.environments.rollout import parse_turn, run_episodes, tool_methods
from recode_lib.environments.settings import check_setting, environment_factory, reset_row
from recode_lib.generation import Completion, Generator, SamplingConfig
from recode_lib.rewards.base import run_problems
from recode_lib.rewards.execution import SandboxRunner
from recode_lib.sandbox.tools import ToolLimits

FORMAT_VERSION = 3  # of the transcripts this module writes: caches of another version are stale
PASS_MARK = "all examples passed"
SOLUTION = "solution.py"
CLOSING = f"I submitted {SOLUTION}."
# the tool setting's answer turn: its reasoning says what the tool showed, so the task's
# reasoning ("I need to ...") is always followed by the tool call there
AFTER_TOOL = "The examples pass when I run my solution, so it is my answer."
STYLES = {"reasoning": True, "direct": False}  # prompt styles by name (prompts.build_messages)
STATEMENTS = ("shown", "hidden")  # how a multi-turn transcript poses its problem
_EXAMPLES_HEAD = re.compile(r"^\s*(your code should pass|assert |>>> |example)", re.I)


@dataclass
class TranscriptConfig:
    """What build_transcripts writes.

    settings:            which of single, tool, agentic to write transcripts for.
    reasoning_styles:    the prompt styles of the single-turn transcripts (True: the reasoning
                         system prompt, False: the direct one; or "reasoning,direct"); one
                         transcript each.
    multiturn_reasoning: the prompt style of the tool and agentic transcripts (their recipes'
                         `reasoning`).
    multiturn_statements: how the tool and agentic transcripts pose a problem: "shown" (its own
                         statement, examples included), "hidden" (examples_hidden: prose and a
                         signature; the check's asserts are the answer's own), or both (one
                         transcript each; or "shown,hidden").
    tool_max_calls:      the tool setting's budget the prompt states (PythonToolEnv's default).
    agentic_max_calls:   the agentic setting's budget (TerminalEnv's default); 3 calls are used.
    tool_time_limit_s:   one tool call's wall clock.
    n_examples:          tests run as examples when the statement shows none (smallest first).
    workers:             sandbox workers judging the final answers.
    """

    settings: tuple = ("single", "tool", "agentic")
    reasoning_styles: tuple = (True, False)
    multiturn_reasoning: bool = True
    multiturn_statements: tuple = ("shown",)
    tool_max_calls: int = 4
    agentic_max_calls: int = 8
    tool_time_limit_s: float = 5.0
    n_examples: int = 2
    workers: int | None = 2

    def __post_init__(self):
        if isinstance(self.settings, str):
            self.settings = tuple(s.strip() for s in self.settings.split(",") if s.strip())
        self.settings = tuple(self.settings)
        if isinstance(self.reasoning_styles, str):  # "reasoning,direct" (a notebook's string)
            names = [s.strip() for s in self.reasoning_styles.split(",") if s.strip()]
            bad = sorted(set(names) - set(STYLES))
            if bad:
                raise ValueError(
                    f"TranscriptConfig.reasoning_styles: unknown style(s) {bad}; "
                    f"choose from {list(STYLES)}"
                )
            self.reasoning_styles = tuple(STYLES[n] for n in names)
        self.reasoning_styles = tuple(bool(r) for r in self.reasoning_styles)
        if isinstance(self.multiturn_statements, str):
            self.multiturn_statements = tuple(
                x.strip() for x in self.multiturn_statements.split(",") if x.strip()
            )
        self.multiturn_statements = tuple(self.multiturn_statements)
        bad = sorted(set(self.multiturn_statements) - set(STATEMENTS))
        if bad or not self.multiturn_statements:
            raise ValueError(
                f"TranscriptConfig.multiturn_statements: {list(self.multiturn_statements)}"
                f" must name one or more of {list(STATEMENTS)}"
            )
        for s in self.settings:
            check_setting(s)
        if not self.settings:
            raise ValueError("TranscriptConfig.settings must name at least one setting")
        if "single" in self.settings and not self.reasoning_styles:
            raise ValueError(
                "TranscriptConfig.reasoning_styles is empty: no single-turn prompt style"
            )
        if self.agentic_max_calls < 3 or self.tool_max_calls < 1:
            raise ValueError(
                f"TranscriptConfig: the transcripts need tool_max_calls >= 1 and "
                f"agentic_max_calls >= 3, got {self.tool_max_calls}, "
                f"{self.agentic_max_calls}"
            )


@dataclass
class Examples:
    """What a transcript runs before answering: assert lines (function problems) or
    (stdin, expected stdout) pairs (programs)."""

    asserts: list = field(default_factory=list)
    stdio: list = field(default_factory=list)


@dataclass
class Built:
    transcripts: list
    dropped: list

    def counts(self) -> dict:
        out: dict = {}
        for t in self.transcripts:
            out[t["setting"]] = out.get(t["setting"], 0) + 1
        return out


# ---- what the problem shows -------------------------------------------------------------


def call_target(problem) -> str:
    fn = problem.tests["fn_name"]
    return f"Solution().{fn}" if "class Solution" in (problem.starter_code or "") else fn


def examples_of(problem, n: int = 2) -> Examples | None:
    """The examples a transcript runs (module docstring); None when there is nothing to run."""
    tests = problem.tests or {}
    kind = tests.get("kind")
    if kind == "script":
        script = tests.get("script") or ""
        lines = [ln.strip() for ln in (problem.prompt or "").splitlines()]
        asserts = [ln for ln in lines if ln.startswith("assert ") and ln in script]
        return Examples(asserts=asserts) if asserts else None
    cases = sorted(tests.get("cases") or [], key=lambda c: c.get("input_len", 0))[: max(1, n)]
    if kind == "call" and cases:
        target = call_target(problem)
        return Examples(
            asserts=[
                f"assert {target}({', '.join(repr(a) for a in c['args'])}) == {c['expected']!r}"
                for c in cases
            ]
        )
    if kind == "stdio":
        shown = (problem.metadata or {}).get("public_examples")
        pairs = (
            [
                (e["input"], str(e.get("output", "")))
                for e in shown
                if isinstance(e, dict) and isinstance(e.get("input"), str)
            ]
            if isinstance(shown, list)
            else []
        )
        pairs = pairs or [(c["input"], c["output"]) for c in cases]
        return Examples(stdio=pairs[: max(1, n)]) if pairs else None
    return None


def examples_hidden(problem, code: str):
    """`problem` posed without its examples, or None when it cannot be: the statement's prose
    up to the first example line ("Your code should pass these tests:", an assert, a doctest)
    and, as the starter code to complete, the signature of the entry function of `code` (its
    reference solution) with the helpers it needs above it kept out. The tests are unchanged.
    None when the statement shows no example (nothing to hide), has no prose, or `code` defines
    no entry function."""
    lines = (problem.prompt or "").splitlines()
    cut = next((i for i, ln in enumerate(lines) if _EXAMPLES_HEAD.match(ln)), None)
    if cut is None:
        return None
    prose = "\n".join(lines[:cut]).strip()
    entry = problem.entry_point or (problem.tests or {}).get("fn_name")
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None
    fn = next((d for d in tree.body if isinstance(d, ast.FunctionDef) and d.name == entry), None)
    if not prose or fn is None:
        return None
    return dataclasses.replace(
        problem, prompt=prose, starter_code=f"def {fn.name}({ast.unparse(fn.args)}):"
    )


# ---- the reasoning ----------------------------------------------------------------------

_TASK = re.compile(r"write an? (?:python )?(function|program)(?: `[^`]*`)?,? (to|that) (.+)", re.I)
MODULE_NOTES = {
    "re": "a regular expression (`re`)",
    "math": "the `math` module",
    "heapq": "a heap (`heapq`)",
    "collections": "`collections`",
    "itertools": "`itertools`",
    "bisect": "binary search (`bisect`)",
    "functools": "`functools`",
}


def task_sentence(problem) -> str:
    """The statement's first prose line as the reasoning's first sentence."""
    for line in (problem.prompt or "").splitlines():
        text = line.strip().strip("\"'").strip()
        if text and not text.startswith(("from ", "import ", "def ", "class ", "assert ", "```")):
            break
    else:
        return "I need to solve the task as stated."
    text = text.rstrip(". ")
    m = _TASK.match(text)
    if m and m.group(2).lower() == "to":
        return f"I need to {m.group(3)}."
    if m:
        return f"I need a {m.group(1).lower()} that {m.group(3)}."
    return f"The task: {text}."


def approach_sentences(code: str, entry: str | None) -> list[str]:
    """What the solution does, read off its syntax (loops, comprehensions, recursion, ...)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    nodes = list(ast.walk(tree))
    loops = [n for n in nodes if isinstance(n, (ast.For, ast.While))]
    nested = any(
        isinstance(m, (ast.For, ast.While)) for n in loops for m in ast.walk(n) if m is not n
    )
    names = {n.func.id for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    attrs = {
        n.func.attr for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
    }
    modules = sorted(
        {a.name.split(".")[0] for n in nodes if isinstance(n, ast.Import) for a in n.names}
        | {(n.module or "").split(".")[0] for n in nodes if isinstance(n, ast.ImportFrom)}
    )
    out = []
    if nested:
        out.append("It goes through the input with nested loops.")
    elif loops:
        out.append("It goes through the input with a loop.")
    if any(
        isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) for n in nodes
    ):
        out.append("It builds the result with a comprehension.")
    fn = next((n for n in nodes if isinstance(n, ast.FunctionDef) and n.name == entry), None)
    if fn is not None and any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == entry
        for n in ast.walk(fn)
    ):
        out.append("It calls itself recursively on a smaller input.")
    if "sorted" in names or "sort" in attrs:
        out.append("It sorts the values first.")
    if "dict" in names or any(isinstance(n, (ast.Dict, ast.DictComp)) for n in nodes):
        out.append("It keeps what it has seen in a dictionary.")
    elif "set" in names or any(isinstance(n, (ast.Set, ast.SetComp)) for n in nodes):
        out.append("It uses a set.")
    notes = [MODULE_NOTES[m] for m in modules if m in MODULE_NOTES]
    if notes:
        out.append(f"It uses {', '.join(notes)}.")
    return out or ["It computes the answer directly with Python's built-in operations."]


def reasoning_text(problem, code: str) -> str:
    """A short reasoning for `code` answering `problem`: the task, the definition, the approach."""
    parts = [task_sentence(problem)]
    entry = problem.entry_point or (problem.tests or {}).get("fn_name")
    try:
        tree = ast.parse(code)
        defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    except SyntaxError:
        defs = []
    fn = next((d for d in defs if isinstance(d, ast.FunctionDef) and d.name == entry), None)
    if (problem.tests or {}).get("kind") == "stdio":
        parts.append("The program reads the input from standard input and prints the answer.")
    elif fn is not None:
        sig = f"`{fn.name}({', '.join(a.arg for a in fn.args.args)})`"
        helpers = [d.name for d in defs if d is not fn]
        parts.append(
            f"I define {sig}"
            + (
                f" with the helper{'s' if len(helpers) > 1 else ''} "
                f"{', '.join(f'`{h}`' for h in helpers)}"
                if helpers
                else ""
            )
            + "."
        )
    parts += approach_sentences(code, entry)
    if fn is not None:
        parts.append("It returns the result.")
    return " ".join(parts)


# ---- the scripted turns -----------------------------------------------------------------


def tool_call_text(content: str, name: str, arguments: dict) -> str:
    """An assistant turn holding one tool call, as CHATML_TOOLS renders it (and the model emits)."""
    call = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"{content}\n<tool_call>\n{call}\n</tool_call>"


def check_program(code: str, ex: Examples) -> str:
    return f"{code.rstrip()}\n\n" + "\n".join(ex.asserts) + f"\nprint({PASS_MARK!r})\n"


def check_command(ex: Examples) -> str:
    if ex.asserts:
        body = "\n".join([f"from {SOLUTION[:-3]} import *", *ex.asserts, f"print({PASS_MARK!r})"])
        return f"python - <<'END_OF_CHECK'\n{body}\nEND_OF_CHECK"
    return f"printf '%s' {shlex.quote(ex.stdio[0][0])} | python {SOLUTION}"


def first_turn(text: str, reasoning: str, with_think: bool) -> str:
    """A multi-turn episode's first words: the reasoning first (as every answer under the
    reasoning prompt starts), then what the tool call is for."""
    return f"<think>\n{reasoning}\n</think>\n{text}" if with_think else text


def tool_turns(code: str, reasoning: str, ex: Examples, with_think: bool) -> list[str]:
    args = (
        {"code": check_program(code, ex)} if ex.asserts else {"code": code, "stdin": ex.stdio[0][0]}
    )
    first = first_turn("Let me run my solution on the examples first.", reasoning, with_think)
    return [tool_call_text(first, "run_python", args), format_response(AFTER_TOOL, code)]


def agentic_turns(code: str, reasoning: str, ex: Examples, with_think: bool) -> list[str]:
    first = first_turn(f"I write my solution to {SOLUTION}.", reasoning, with_think)
    return [
        tool_call_text(first, "write_file", {"path": SOLUTION, "text": code}),
        tool_call_text("Now I run it on the examples.", "run", {"command": check_command(ex)}),
        tool_call_text(f"The examples pass. I submit {SOLUTION}.", "submit", {"path": SOLUTION}),
    ]


class ScriptedPolicy(Generator):
    """Emits turns[k] for a conversation holding k assistant messages (one episode at a time)."""

    backend = model = "scripted"

    def __init__(self, turns: list[str]):
        self.turns = list(turns)

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        out = []
        for r in requests:
            k = sum(1 for m in r.messages if m.get("role") == "assistant")
            text = self.turns[k] if k < len(self.turns) else ""
            out.append(Completion(text, n_tokens=len(text.split()), finish_reason="stop"))
        for j, c in enumerate(out):
            if callback:
                callback(j, c)
        return out


def setting_tools(setting: str) -> list:
    """The setting's tools as callables (what rollout.tool_generator renders); [] for single."""
    factory = environment_factory(check_setting(setting))
    return [] if factory is None else list(tool_methods(factory()).values())


def run_scripted(setting: str, row: dict, turns: list[str], factory):
    """One episode of `turns` through run_episodes (the environments' parser and tools)."""
    [ep] = run_episodes(
        ScriptedPolicy(turns),
        [row],
        setting,
        SamplingConfig(max_new_tokens=1),
        n=1,
        max_turns=len(turns),
        factory=factory,
    )
    return ep


def tool_outputs(messages: list) -> list[str]:
    return [m.get("content") or "" for m in messages if m.get("role") == "tool"]


def examples_passed(output: str, ex: Examples) -> bool:
    if not output.startswith("status: ok"):
        return False
    if ex.asserts:
        return PASS_MARK in output
    out = output.split("stdout:\n", 1)[-1].split("\nstderr:\n", 1)[0]
    return out.strip() == ex.stdio[0][1].strip()


# ---- the builder ------------------------------------------------------------------------


def clean_code(code: str) -> str:
    """The reference solution as the answer shows it: ast.unparse of it (4-space indentation, no
    trailing spaces or comments) when it parses, else as written."""
    code = code.replace("\r\n", "\n").strip("\n")
    try:
        return ast.unparse(ast.parse(code))
    except (SyntaxError, ValueError, RecursionError):
        return code


def transcript_id(problem_id: str, setting: str, style=None, statement: str = "shown") -> str:
    """<problem>:<setting>[:reasoning|:direct][:hidden], a transcript's (or a dropped one's) id."""
    return (
        f"{problem_id}:{setting}"
        + ("" if style is None else f":{'reasoning' if style else 'direct'}")
        + (":hidden" if statement == "hidden" else "")
    )


def build_transcripts(problems, cfg: TranscriptConfig | None = None, runner=None) -> Built:
    """Transcripts of every problem with a reference solution in cfg.settings, each verified
    (module docstring); problems without a reference solution are dropped with that reason."""
    cfg = cfg or TranscriptConfig()
    limits = ToolLimits(time_limit_s=cfg.tool_time_limit_s)
    factories = {
        "tool": environment_factory("tool", max_calls=cfg.tool_max_calls, limits=limits),
        "agentic": environment_factory("agentic", max_calls=cfg.agentic_max_calls, limits=limits),
    }
    pending, dropped = [], []

    def drop(p, setting, reason, style=None, statement="shown"):
        tid = transcript_id(p.id, setting, style, statement)
        dropped.append({"id": tid, "problem_id": p.id, "setting": setting, "reason": reason})

    for p in problems:
        code = clean_code(p.reference_solution or "")
        if not code.strip():
            for s in cfg.settings:
                drop(p, s, "no reference solution")
            continue
        reasoning = reasoning_text(p, code)
        ex = examples_of(p, cfg.n_examples)
        hidden = examples_hidden(p, code) if ex is not None else None
        for setting in cfg.settings:
            single = setting == "single"
            styles = cfg.reasoning_styles if single else (cfg.multiturn_reasoning,)
            for style, statement in [
                (st, sm)
                for st in styles
                for sm in (("shown",) if single else cfg.multiturn_statements)
            ]:
                tid = transcript_id(p.id, setting, style, statement)
                if single:
                    msgs = [
                        *reset_row(p, style)["prompt"],
                        {"role": "assistant", "content": format_response(reasoning, code)},
                    ]
                    pending.append((p, tid, setting, style, msgs, 0, msgs[-1]["content"]))
                    continue
                if ex is None:
                    drop(p, setting, "no examples to run", style, statement)
                    continue
                posed = p if statement == "shown" else hidden
                if posed is None:
                    drop(
                        p,
                        setting,
                        "no statement without examples (examples_hidden)",
                        style,
                        statement,
                    )
                    continue
                row = reset_row(posed, style)
                turns = (
                    tool_turns(code, reasoning, ex, with_think=style)
                    if setting == "tool"
                    else agentic_turns(code, reasoning, ex, with_think=style)
                )
                planned = len(turns) - (setting == "tool")
                ep = run_scripted(setting, row, turns, factories[setting])
                outs = tool_outputs(ep.transcript)
                check_out = outs[0] if setting == "tool" else (outs[1] if len(outs) > 1 else "")
                if ep.tool_calls != planned or ep.tool_errors:
                    drop(
                        p,
                        setting,
                        f"{ep.tool_calls} tool calls ({ep.tool_errors} errors), {planned} planned",
                        style,
                        statement,
                    )
                elif not examples_passed(check_out, ex):
                    drop(
                        p,
                        setting,
                        f"the examples fail in the tool: {check_out[:200]!r}",
                        style,
                        statement,
                    )
                elif ep.no_answer or not ep.answer:
                    drop(p, setting, ep.no_answer or "no answer", style, statement)
                else:
                    msgs = list(ep.messages)
                    if setting == "agentic":
                        msgs.append({"role": "assistant", "content": CLOSING})
                    pending.append((posed, tid, setting, style, msgs, ep.tool_calls, ep.answer))
    kept = judge(pending, runner or SandboxRunner(workers=cfg.workers), drop)
    return Built(kept, dropped)


def judge(pending: list, runner, drop) -> list[dict]:
    """The pending transcripts whose final answer passes the problem's tests in the sandbox."""
    if not pending:
        return []
    progs = [assemble(p, answer).code for p, *_, answer in pending]
    results = run_problems(runner, [p for p, *_ in pending], progs, [tid for _, tid, *_ in pending])
    kept = []
    for (p, tid, setting, style, msgs, calls, _), res in zip(pending, results, strict=True):
        if res.get("status") != "passed":
            drop(
                p,
                setting,
                f"the final answer does not pass: {res.get('status')} "
                f"{res.get('reason', '')}".strip(),
                style,
                "hidden" if tid.endswith(":hidden") else "shown",
            )
            continue
        kept.append(
            {
                "id": tid,
                "problem_id": p.id,
                "setting": setting,
                "reasoning": style,
                "messages": msgs,
                "tool_calls": calls,
            }
        )
    return kept


# ---- the rendered text ------------------------------------------------------------------


def render(tok, messages, tools, chat_template=None, add_generation_prompt=False) -> str:
    return tok.apply_chat_template(
        messages,
        tools=tools or None,
        tokenize=False,
        add_generation_prompt=add_generation_prompt,
        chat_template=chat_template,
    )


def assistant_texts(tok, messages: list, tools: list, chat_template=None) -> list[str]:
    """Each assistant message's text as the model generates it under `tok`'s template (the
    rendered turn after the generation prompt, up to the end-of-turn token). ValueError when the
    template is not prefix-preserving there (the training text would not be what it sees)."""
    eos = tok.eos_token
    out = []
    for i, m in enumerate(messages):
        if m.get("role") != "assistant":
            continue
        prefix = render(tok, messages[:i], tools, chat_template, add_generation_prompt=True)
        full = render(tok, messages[: i + 1], tools, chat_template)
        if not full.startswith(prefix):
            raise ValueError(
                f"the chat template renders assistant message {i} after a prompt it "
                f"does not preserve: {prefix[-80:]!r} vs {full[len(prefix) - 80 : len(prefix)]!r}"
            )
        seg = full[len(prefix) :]
        cut = seg.find(eos) if eos else -1
        out.append(seg[:cut] if cut >= 0 else seg)
    return out


def check_parses_back(tok, transcript: dict, chat_template=None) -> None:
    """ValueError unless every assistant turn of `transcript`, rendered under `tok`'s template,
    parses back (rollout.parse_turn) to the message's own content and tool calls."""
    msgs = [m for m in transcript["messages"]]
    texts = assistant_texts(tok, msgs, setting_tools(transcript["setting"]), chat_template)
    turns = [m for m in msgs if m.get("role") == "assistant"]
    for k, (m, text) in enumerate(zip(turns, texts, strict=True)):
        content, calls, errors = parse_turn(text)
        want = [c.get("function", c) for c in m.get("tool_calls") or []]
        if errors or calls != want or content.strip() != (m.get("content") or "").strip():
            raise ValueError(
                f"transcript {transcript['id']!r}, assistant turn {k}: the rendered "
                f"text does not parse back ({errors or 'calls or content differ'}): "
                f"{text[:200]!r}"
            )
