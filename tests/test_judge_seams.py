"""No completion can crash the judge: one failing sample is that sample's verdict, never the
batch's.

The seams (issue 39, item 1): recode_lib.core.prompts.parse_response,
recode_lib.core.assemble.assemble,
every reward function (recode_lib.rewards.base.RewardFunction), the evaluation row builder
(recode_lib.evaluation.rows.episode_row) and the agentic final answer
(recode_lib.environments.settings.final_answer). A property test fuzzes completions through all
of them with a seeded generator (hypothesis is not installed) and a stand-in runner that never
executes anything, so it stays fast enough for `make test`.
"""

from __future__ import annotations

import json
import random
from types import SimpleNamespace

import pytest

from recode_lib.core.assemble import assemble
from recode_lib.core.jsonl import JsonlStore
from recode_lib.core.prompts import format_response, parse_response
from recode_lib.data.schema import Problem
from recode_lib.environments.settings import final_answer, setting_reward
from recode_lib.evaluation.episodes import FinishedEpisode
from recode_lib.evaluation.rows import episode_row
from recode_lib.rewards import get_reward
from recode_lib.rewards.base import RewardFunction
from recode_lib.rewards.execution import SandboxRunner

ADD = {
    "kind": "call",
    "fn_name": "add",
    "cases": [{"args": [1, 2], "expected": 3}, {"args": [5, 5], "expected": 10}],
}
GOOD_CODE = "def add(a, b):\n    return a + b"
GOOD = format_response("Add the two numbers.", GOOD_CODE)
P_ADD = Problem(id="t/add", source="t", prompt="Add.", tests=ADD)  # no starter code
# past what CPython's parser takes on every version this project runs on: ~3,000 levels on
# 3.11 and 3.12; 3.13 compiles `~` and `1+` chains 5,000 deep (its C recursion limit is higher)
DEPTH = 20_000


def deep(kind: str, n: int = DEPTH) -> str:
    """An expression nested n levels deep, of one kind (the nesting ones raise RecursionError
    or MemoryError in CPython's parser well below DEPTH)."""
    return {
        "invert": "~" * n + "1",
        "neg": "-" * n + "1",
        "pos": "+" * n + "1",
        "not": "not " * n + "1",
        "add": "1+" * n + "1",
        "mul": "2*" * n + "2",
        "pow": "2**" * n + "2",
        "or": "a or " * n + "a",
        "and": "a and " * n + "a",
        "cmp": "a<" * n + "a",
        "shift": "1<<" * n + "1",
        "bitor": "1|" * n + "1",
        "attr": "a" + ".b" * n,
        "subscript": "a" + "[0]" * n,
        "call": "f" + "()" * n,
        "lambda": "lambda: " * n + "1",
        "ifexp": "1 if a else " * n + "1",
        "await": "await " * n + "a",
        "walrus": "(a := " * 150 + "1" + ")" * 150,
        "star": "f(" + "*" * n + "a)",
        "fstring": 'f"{' * 40 + "1" + '}"' * 40,
        "slice": "a[" + "1:" * n + "]",
        "starred_tuple": "(" * 199 + ")" * 199,
        "string_concat": '"a" ' * n,
        "comprehension": "[x for x in " * 150 + "a" + "]" * 150,
    }[kind]


DEEP_KINDS = (
    "invert",
    "neg",
    "pos",
    "not",
    "add",
    "mul",
    "pow",
    "or",
    "and",
    "cmp",
    "shift",
    "bitor",
    "attr",
    "subscript",
    "call",
    "lambda",
    "ifexp",
    "await",
    "walrus",
    "star",
    "fstring",
    "slice",
    "starred_tuple",
    "string_concat",
    "comprehension",
)


def deep_texts(kind: str) -> list[str]:
    """The deep expression in every place the judge reads code: a whole block, a function's
    return, a body-only (indented) block, a stdio program, unfenced code."""
    e = deep(kind)
    return [
        f"<think>x</think>\n```python\nx = {e}\n```",
        f"<think>x</think>\n```python\ndef add(a, b):\n    return {e}\n```",
        f"<think>x</think>\n```python\n    return {e}\n```",
        f"```\nprint({e})\n```",
        f"x = {e}\ny = 1\n```\nThis was the code.",
    ]


def call_problem(pid="t/add", starter="def add(a, b):\n", prelude=""):
    return Problem(
        id=pid,
        source="t",
        prompt="Add.",
        tests=ADD,
        starter_code=starter,
        entry_point="add",
        metadata={"prelude": prelude} if prelude else {},
    )


def stdio_problem():
    return Problem(
        id="t/io",
        source="t",
        prompt="Echo.",
        tests={"kind": "stdio", "cases": [{"input": "1\n", "output": "1\n"}]},
    )


# ---- the seams, one deep expression kind at a time (each raised on the code before) ----


@pytest.mark.parametrize("kind", DEEP_KINDS)
def test_deep_nesting_is_a_format_error_of_that_sample_in_assemble(kind):
    for text in deep_texts(kind):
        for p in (call_problem(), call_problem(prelude="from typing import *"), stdio_problem()):
            prog = assemble(p, text)
            assert prog.code is None or isinstance(prog.code, str)
            if prog.code is None:
                assert not prog.parsed.format_ok and prog.parsed.reason


@pytest.mark.parametrize("kind", DEEP_KINDS)
def test_parse_response_never_raises_on_deep_nesting(kind):
    for text in deep_texts(kind):
        p = parse_response(text)
        assert p.code is None or isinstance(p.code, str)


class Boom(str):
    """A completion whose text cannot even be read (a codec error on any method)."""

    def find(self, *a, **k):
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")


def test_an_unreadable_completion_is_a_format_error_not_an_exception():
    p = parse_response(Boom("```python\nx = 1\n```"))
    assert p.code is None and not p.format_ok and "UnicodeDecodeError" in p.reason
    prog = assemble(call_problem(), Boom("```python\nx = 1\n```"))
    assert prog.code is None and prog.how == "none" and "UnicodeDecodeError" in prog.parsed.reason


def test_a_deeply_nested_completion_leaves_the_batchs_right_answer_its_reward():
    """The issue's case: outcome_reward on [right, ~~~...~1] raised RecursionError, so the
    right answer got nothing. Now: [1.0, 0.0], the deep one a format error."""
    runner = SandboxRunner(workers=2, batch_timeout_s=120)
    bad = [t for k in ("invert", "add", "attr", "subscript", "pow") for t in deep_texts(k)[:3]]
    texts = [GOOD] + bad + [GOOD]
    fn = get_reward("outcome", runner=runner)
    r = fn(["p"] * len(texts), texts, problem=[P_ADD] * len(texts))
    assert r == [1.0] + [0.0] * len(bad) + [1.0]
    rows = fn.details(["p"] * len(texts), texts, problem=[P_ADD] * len(texts))
    assert all(row["status"] == "no_code" for row in rows[1:-1])


class Raising:
    """A reward column value whose use raises for one sample only (anything may fail)."""


def test_a_reward_whose_computation_raises_for_one_sample_isolates_that_sample():
    """The shared guard of every reward function: a compute that raises (for a reason no
    seam foresaw) is redone sample by sample; the failing sample gets a logged None, the
    others their rewards."""

    def compute(prompts, completions, kwargs):
        out = []
        for c in completions:
            if "explode" in c:
                raise MemoryError
            out.append({"reward": 1.0, "fmt": 1.0, "reason": ""})
        return out

    fn = RewardFunction("fragile", compute, ("fmt",))
    extra = {}
    r = fn(["p"] * 3, ["a", "explode", "b"], log_extra=lambda k, v: extra.__setitem__(k, v))
    assert r == [1.0, None, 1.0]
    assert "MemoryError" in extra["fragile/reason"][1]


def test_configuration_errors_are_still_raised_not_swallowed():
    fn = get_reward("outcome", runner=SandboxRunner(workers=1))
    with pytest.raises(ValueError, match="no 'problem' column"):
        fn(["p"], [GOOD])
    no_tests = {"id": "mbpp/9", "source": "mbpp", "prompt": "p"}
    with pytest.raises(ValueError, match=r"row 1 \(problem 'mbpp/9'\): missing field 'tests'"):
        fn(["p"] * 2, [GOOD, GOOD], problem=[P_ADD, json.dumps(no_tests)])


def test_episode_row_of_a_deep_or_unencodable_response_is_a_stored_format_error(tmp_path):
    p = call_problem()
    store = JsonlStore(tmp_path / "samples.jsonl")
    for i, text in enumerate(
        deep_texts("invert") + ["<think>\udc80</think>```python\nx='\ud800'\n```"]
    ):
        ep = FinishedEpisode(
            problem=p, sample=i, setting="single", response=text, n_tokens=1, finish_reason="stop"
        )
        row, record = episode_row(p, ep)
        assert row["code"] is None and record["code"] is None and not row["format_ok"]
        store.append({**row, **{"status": "no_code"}})  # the row is storable as JSON text
    assert len(list(store.records())) == 6


class Env:
    def __init__(self, submission, path="solution.py"):
        self.submission, self.submitted_path = submission, path


def test_agentic_final_answer_of_a_deep_file_is_judged_zero_next_to_a_right_one():
    runner = SandboxRunner(workers=2, batch_timeout_s=120)
    envs = [Env(GOOD_CODE), Env("x = " + deep("invert")), Env(GOOD_CODE)]
    fn = setting_reward(get_reward("outcome", runner=runner), "agentic")
    assert fn(["p"] * 3, ["", "", ""], environments=envs, problem=[P_ADD] * 3) == [1.0, 0.0, 1.0]


def test_agentic_final_answer_of_an_odd_submission_is_no_answer_not_an_exception():
    for sub in (b"def add(a, b): return a + b", 12, ["x"], "\udc80"):
        text, why = final_answer("agentic", None, Env(sub))
        assert isinstance(text, str) and (why or parse_response(text).code is None)


# ---- the property: fuzzed completions, one result per sample, never an exception ----

ALPHABET = [
    "<think>",
    "</think>",
    "```",
    "```python",
    "```py\n",
    "\n",
    " ",
    "\t",
    "    ",
    "def add(a, b):",
    "return",
    "a + b",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    '"""',
    "'",
    "#",
    "\\",
    "\u2028",
    "\x85",
    "\x0c",
    "\r",
    "\r\n",
    "\x00",
    "\udc80",
    "\ud83d",
    "~",
    "**",
    ".",
    "lambda:",
    "x",
    "1",
    "if __name__ == '__main__':",
    "class Solution:",
    "\\boxed{",
    "<tool_call>",
    "\ufeff",
    "é",
    "🙂",
]


def fuzz_texts(seed: int, n: int) -> list[str]:
    """n hostile completions: token soup, random bytes, deep nesting of every kind, huge and
    degenerate inputs, unbalanced fences and think tags."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        pick = i % 8
        if pick == 0:  # token soup
            out.append("".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 120))))
        elif pick == 1:  # random bytes, decoded as a backend might (lone surrogates included)
            raw = bytes(rng.randrange(256) for _ in range(rng.randint(0, 400)))
            out.append(raw.decode("utf-8", rng.choice(["replace", "surrogateescape", "ignore"])))
        elif pick == 2:  # deep nesting, in any of the places code is read
            out.append(rng.choice(deep_texts(rng.choice(DEEP_KINDS))))
        elif pick == 3:  # unbalanced think tags and fences, many of them
            k = rng.randint(1, 3000)
            out.append(
                rng.choice(
                    [
                        "<think>" * k,
                        "</think>" * k + "<think>",
                        "```\n" * k,
                        "```python\n" * k + "x = 1",
                        ("<think>```python\n" * k) + GOOD_CODE,
                        "```" + " " * k * 10 + "x\n" + GOOD_CODE,
                    ]
                )
            )
        elif pick == 4:  # a right answer wrapped in junk
            junk = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 30)))
            out.append(rng.choice([junk + GOOD, GOOD + junk, junk + GOOD + junk]))
        elif pick == 5:  # huge inputs
            out.append(
                rng.choice(
                    [
                        "a" * 300_000,
                        "\n" * 100_000,
                        "x = [" + "1," * 100_000 + "]",
                        "<think>" + "r" * 200_000 + "</think>```python\n" + GOOD_CODE,
                    ]
                )
            )
        elif pick == 6:  # degenerate
            out.append(
                rng.choice(
                    [
                        "",
                        " ",
                        "```",
                        "```\n```",
                        "<think></think>",
                        "\x00",
                        "\ufeff```python\n\ufeffx=1\n```",
                        "```python\n\n```",
                    ]
                )
            )
        else:  # deep nesting of statements (indentation, brackets)
            k = rng.randint(90, 1200)
            out.append(
                rng.choice(
                    [
                        "```python\n"
                        + "".join(" " * j + "if 1:\n" for j in range(k))
                        + " " * k
                        + "x\n```",
                        "```python\nx = " + "[" * k + "]" * k + "\n```",
                        "```python\ndef add(a, b):\n"
                        + "".join("    " * (j + 1) + "for _ in a:\n" for j in range(k // 10))
                        + "    pass\n```",
                    ]
                )
            )
    return out


class EchoRunner:
    """A stand-in sandbox runner: judges nothing, answers each code with a result (passed for
    the right program), and records what it was handed."""

    def __init__(self, right: str):
        self.right, self.seen = right, []

    def check_tests(self, tests, where):
        pass

    def run(self, codes, tests, *, ids=None, time_limit_s=None, memory_mb=None, step=None):
        self.seen.extend(codes)
        out = []
        for code, _t in zip(codes, tests, strict=True):
            if code is None:
                out.append(
                    {
                        "status": "no_code",
                        "outcome": "format_error",
                        "passed": 0,
                        "total": 2,
                        "time_s": 0.0,
                        "memory_mb": None,
                        "tests": [],
                    }
                )
            else:
                ok = code == self.right
                out.append(
                    {
                        "status": "passed" if ok else "wrong_answer",
                        "outcome": "correct" if ok else "correctness_failure",
                        "passed": 2 * ok,
                        "total": 2,
                        "time_s": 0.0,
                        "memory_mb": 0.0,
                        "tests": [{"status": "passed" if ok else "wrong_answer", "input_len": 1}],
                    }
                )
        return out


class ConstScorer:
    def score(self, prompts, traces):
        return [0.0] * len(traces)


@pytest.mark.parametrize("seed", [0, 1])
def test_fuzzed_completions_get_one_reward_each_and_never_raise(seed):
    texts = fuzz_texts(seed, 64)
    n = len(texts)
    right = assemble(call_problem(), GOOD).code
    batch = [GOOD] + texts + [GOOD]
    cols = {"problem": [call_problem(pid=f"t/{i}").to_json() for i in range(n + 2)]}
    for name in (
        "format",
        "outcome",
        "gated",
        "additive",
        "outcome_only",
        "strict_inf",
        "strict_2",
        "partial_discrete",
        "partial_continuous",
        "process",
    ):
        runner = EchoRunner(right)
        options = {}
        if name != "format":
            options = {"runner": runner} if name != "process" else {}
        if name in ("gated", "additive", "process"):
            options["scorer"] = ConstScorer()
        fn = get_reward(name, **options)
        r = fn(["p"] * (n + 2), batch, **cols)
        assert len(r) == n + 2, name
        assert all(v is None or isinstance(v, float) for v in r), name
        if name not in ("process",):
            assert r[0] == r[-1] and r[0] is not None and r[0] >= 1.0, (name, r[0])
        assert all(c is None or isinstance(c, str) for c in runner.seen), name
        # the agentic setting: each text as the submitted file
        if name in ("outcome", "format"):
            envs = [Env(t) for t in batch]
            ra = setting_reward(fn, "agentic")(["p"] * (n + 2), batch, environments=envs, **cols)
            assert len(ra) == n + 2 and all(v is None or isinstance(v, float) for v in ra)


@pytest.mark.parametrize("seed", [2])
def test_fuzzed_completions_get_one_stored_evaluation_row_each(seed, tmp_path):
    store = JsonlStore(tmp_path / "samples.jsonl")
    problems = [
        call_problem(),
        call_problem(prelude="from typing import *"),
        stdio_problem(),
        Problem(
            id="t/s",
            source="t",
            prompt="S.",
            tests={"kind": "script", "script": "assert add(1, 2) == 3"},
            starter_code="def add(a, b):\n",
            entry_point="add",
        ),
    ]
    texts = fuzz_texts(seed, 48)
    for i, text in enumerate(texts):
        p = problems[i % len(problems)]
        for setting in ("single", "agentic"):
            response = text if setting == "single" else final_answer("agentic", None, Env(text))[0]
            ep = FinishedEpisode(
                problem=p,
                sample=i,
                setting=setting,
                response=response,
                n_tokens=1,
                finish_reason="stop",
            )
            row, record = episode_row(p, ep)
            assert row["id"] == record["id"] and row["code"] == record["code"]
            assert record["code"] is None or isinstance(record["code"], str)
            store.append({**row, "id": f"{row['id']}/{setting}", "status": "no_code"})
    assert len(list(store.records())) == 2 * len(texts)


def test_math_rewards_survive_fuzzed_completions():
    pytest.importorskip("math_verify")
    texts = fuzz_texts(3, 16)
    texts = [t[:2000] for t in texts]  # math-verify parses the text itself: keep it small
    batch = ["<think>2+2</think> \\boxed{4}"] + texts
    for name in ("math_format", "math_answer", "math_outcome_only"):
        r = get_reward(name)(["p"] * len(batch), batch, answer=["4"] * len(batch))
        assert len(r) == len(batch) and r[0] is not None and r[0] >= 1.0


def test_a_completion_given_as_bytes_or_objects_is_a_format_error():
    fn = get_reward("outcome", runner=EchoRunner(assemble(call_problem(), GOOD).code))
    batch = [GOOD, b"```python\nx=1\n```", SimpleNamespace(content=1), 12, GOOD]
    r = fn(
        ["p"] * 5,
        batch,
        problem=[call_problem()] * 5,
    )
    assert r[0] == r[-1] == 1.0 and len(r) == 5 and all(v in (0.0, None) for v in r[1:-1])


# ---- the agentic final answer is the file, judged as code (issue 39, item 6) ----

FENCED_DOC = 'HELP = """\nUsage:\n```\nadd(1, 2)\n```\n"""\n\n\ndef add(a, b):\n    return a + b\n'
# a wrong file whose string holds a right fenced answer: re-fenced, the parser judged that
# one (outcome 1 for a wrong file); judged as the file it is, it is wrong
DECOY = (
    'DOC = """\n```\n"""\nEX = """\n```python\ndef add(a, b):\n    return a + b\n```\n"""\n\n\n'
    "def add(a, b):\n    return a - b\n"
)


def test_a_submitted_file_with_a_fence_line_inside_a_string_is_judged_whole():
    from recode_lib.environments.terminal import TerminalEnv
    from recode_lib.sandbox.tools import ToolLimits

    envs = []
    for src in (FENCED_DOC, DECOY):
        env = TerminalEnv(limits=ToolLimits(time_limit_s=5))
        env.reset(prompt="Add.", starter_code="def add(a, b):\n")
        env.write_file("solution.py", src)
        env.submit("solution.py")
        envs.append(env)
    texts = [final_answer("agentic", None, e)[0] for e in envs]
    assert [parse_response(t).code for t in texts] == [FENCED_DOC.strip("\n"), DECOY.strip("\n")]
    assert parse_response(texts[0]).format_ok
    fn = setting_reward(get_reward("outcome", runner=SandboxRunner(workers=2)), "agentic")
    assert fn(["p"] * 2, ["", ""], environments=envs, problem=[P_ADD] * 2) == [1.0, 0.0]
    p = call_problem()
    rows = [
        episode_row(
            p,
            FinishedEpisode(
                problem=p, sample=i, setting="agentic", response=t, n_tokens=1, finish_reason="stop"
            ),
        )[0]
        for i, t in enumerate(texts)
    ]
    assert "return a + b" in rows[0]["code"] and "return a - b" in rows[1]["code"]
    assert rows[0]["format_ok"] and rows[0]["assembly"] == "function"
