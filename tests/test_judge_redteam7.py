"""Red team, round 7: issue 39's round-4 fixes attacked as a policy would, and the holes found
next to them.

Each test names one property that failed before its fix (the report of the redteam branch
lists them).
"""

from __future__ import annotations

import time

import pytest

CALL = '<tool_call>\n{"name": "run_python", "arguments": {"code": "print(1)"}}\n</tool_call>'
DEEP_CALL = "<tool_call>\n" + "[" * 5000 + "]" * 5000 + "\n</tool_call>"


@pytest.fixture(scope="module")
def tool_tok(tiny_model_dir):
    from transformers import AutoTokenizer

    from recode_lib.environments import PythonToolEnv, prepare_tool_tokenizer

    tok = prepare_tool_tokenizer(AutoTokenizer.from_pretrained(tiny_model_dir))
    prefix = tok.apply_chat_template(
        [{"role": "user", "content": "add"}],
        tools=[PythonToolEnv().run_python],
        tokenize=False,
        add_generation_prompt=True,
    )
    return tok, tok(prefix, add_special_tokens=False)["input_ids"]


def ids_of(tok, text: str) -> list[int]:
    """A generated turn: ordinary tokens, then the EOS."""
    return tok(text, add_special_tokens=False, split_special_tokens=True)["input_ids"] + [
        tok.eos_token_id
    ]


# ---- training's parse of a turn (TRL's GRPOTrainer tool loop) ------------------------------


def test_a_deeply_nested_tool_call_does_not_raise_out_of_trls_parse(tool_tok):
    """The template's JSON parser raised RecursionError on a tool call nested ~1,000 deep (a
    few hundred tokens); TRL's parse_response falls back to text only on ValueError/TypeError,
    so one completion ended the GRPO run in the tool settings. Now: a plain answer."""
    from trl.chat_template_utils import parse_response as trl_parse

    tok, prefix = tool_tok
    msg = trl_parse(tok, ids_of(tok, "<think>p</think>\n" + DEEP_CALL), prefix=prefix)
    assert not msg.get("tool_calls") and msg["role"] == "assistant"


def test_a_deep_tool_call_in_a_batch_leaves_the_other_turns_their_calls(tool_tok):
    tok, prefix = tool_tok
    rows = [ids_of(tok, CALL), ids_of(tok, DEEP_CALL), ids_of(tok, CALL)]
    parsed = tok.parse_response(rows, prefix=[prefix] * 3)
    assert [len(m.get("tool_calls") or []) for m in parsed] == [1, 0, 1]
    assert parsed[1]["generated_text"].startswith("<tool_call>")


def deep_call(depth: int) -> str:
    """A run_python call with an extra argument nested `depth` deep."""
    return (
        '<tool_call>\n{"name": "run_python", "arguments": {"code": "print(1)", "z": '
        + "[" * depth
        + "]" * depth
        + "}}\n</tool_call>"
    )


def render_deeper(tok, msgs, frames: int = 60):
    """The chat template's rendering of msgs from `frames` frames deeper in the stack (a
    generation backend renders the next turn from deeper than the turn was parsed)."""
    from recode_lib.environments import PythonToolEnv

    if frames:
        return render_deeper(tok, msgs, frames - 1)
    return tok.apply_chat_template(
        msgs, tools=[PythonToolEnv().run_python], tokenize=False, add_generation_prompt=True
    )


def test_a_tool_call_evaluation_accepts_can_be_rendered_in_the_next_turn(tool_tok):
    """parse_turn accepted a call nested ~950-990 deep (json's limit where it ran); the next
    turn's chat template rendered it from deeper in the stack and raised RecursionError,
    which ended the whole evaluation (run_episodes) for every problem."""
    from recode_lib.environments.rollout import parse_turn

    tok, _ = tool_tok
    for depth in range(850, 1000, 5):
        content, calls, _ = parse_turn(deep_call(depth))
        if calls:
            tool_calls = [{"type": "function", "function": c} for c in calls]
            msgs = [
                {"role": "user", "content": "add"},
                {"role": "assistant", "content": content, "tool_calls": tool_calls},
                {"role": "tool", "name": "run_python", "content": "error"},
            ]
            render_deeper(tok, msgs)  # raised RecursionError


def test_a_tool_call_training_accepts_can_be_rendered_again(tool_tok):
    """The same on training's side: a call TRL's parse accepts is one the chat template can
    render again from deeper in the stack."""
    from trl.chat_template_utils import parse_response as trl_parse

    tok, prefix = tool_tok
    for depth in range(850, 1000, 5):
        msg = trl_parse(tok, ids_of(tok, deep_call(depth)), prefix=prefix)
        if msg.get("tool_calls"):
            msgs = [{"role": "user", "content": "add"}, {**msg, "content": ""}]
            msgs.append({"role": "tool", "name": "run_python", "content": "error"})
            render_deeper(tok, msgs)


# ---- a batch timeout (issue 39 item 2): what the abandoned batch goes on doing ---------------


def test_a_timed_out_batch_starts_none_of_its_queued_records(monkeypatch):
    """On a batch timeout the reward returned (the pending records None) but the sandbox went
    on judging every queued record of that batch in the background, on as many workers,
    while the next step's batch ran: each slow completion left a step's queue running, so
    the next steps' right answers competed for the CPUs with work nobody would read."""
    from recode_lib.rewards import execution

    judged, real = [], execution.sandbox.execute_many

    def spy(records, **kw):
        inner = kw["on_result"]

        def on_result(res):
            judged.append(res["id"])
            inner(res)

        return real(records, **{**kw, "on_result": on_result})

    monkeypatch.setattr(execution.sandbox, "execute_many", spy)
    slow = "import time\ndef f(x):\n    time.sleep(3)\n    return x\n"
    fast = "def f(x):\n    return x + {k} - {k}\n"
    codes = [slow] + [fast.format(k=k) for k in range(4)]
    tests = {"kind": "call", "fn_name": "f", "cases": [{"args": [1], "expected": 1}]}
    runner = execution.SandboxRunner(workers=1, batch_timeout_s=1.0)
    out = runner.run(codes, [tests] * len(codes), time_limit_s=10)
    assert [r["status"] for r in out] == ["reward_error"] * 5
    time.sleep(6)  # the slow record ends (3 s), then the queue would run (a few ms each)
    assert len(judged) <= 1, judged


def test_a_timed_out_batch_does_not_run_its_slow_record_to_the_end(monkeypatch):
    """After a batch timeout the record still running is killed with its worker
    (sandbox.Cancel): it used to go on to its own limits, so a slow answer that keeps each
    test just under its limit held a worker for tests x limit seconds (HumanEval+: ~1,000
    tests) beside the next steps' batches."""
    from recode_lib.rewards import execution

    finished, real = [], execution.sandbox.execute_many

    def spy(records, **kw):
        inner = kw["on_result"]

        def on_result(res):
            finished.append(res["status"])
            inner(res)

        return real(records, **{**kw, "on_result": on_result})

    monkeypatch.setattr(execution.sandbox, "execute_many", spy)
    slow = "import time\ndef f(x):\n    time.sleep(0.3)\n    return x\n"
    tests = {
        "kind": "call",
        "fn_name": "f",
        "cases": [{"args": [i], "expected": i} for i in range(20)],
    }
    runner = execution.SandboxRunner(workers=1, batch_timeout_s=1.0)
    assert runner.run([slow], [tests], time_limit_s=2)[0]["status"] == "reward_error"
    time.sleep(7)  # the record needs ~6 s to pass all 20 tests
    assert "passed" not in finished


# ---- linear parsing (issue 39 item 4): statements sharing one line --------------------------


def _cpu(fn, *args):
    """CPU seconds of this process for fn(*args) (a busy machine does not inflate them)."""
    t0 = time.process_time()
    out = fn(*args)
    return time.process_time() - t0, out


def function_problem():
    from recode_lib.data.schema import Problem

    return Problem(
        id="t/1",
        source="t",
        prompt="p",
        tests={"kind": "call", "fn_name": "f", "cases": []},
        starter_code='def f(x):\n    """F."""\n',
        entry_point="f",
    )


def right_f_then(line: str) -> str:
    return "<think>r</think>\n```python\ndef f(x):\n    return x\n" + line + "\n```"


def test_many_assignments_on_one_line_assemble_in_linear_time():
    """sanitize copied the whole line once per statement kept on it: 32,000 `a=1;` after a
    right function (128 KB) cost 18 s of CPU, 1 MB about 20 minutes."""
    from recode_lib.core.assemble import assemble

    dt, prog = _cpu(assemble, function_problem(), right_f_then("a=1;" * 32_000))
    assert prog.how == "function" and dt < 2.0, dt


def test_many_dropped_statements_on_one_line_are_read_in_linear_time():
    """Each dropped statement's first words were read by encoding its whole line again:
    110,000 `print(1);` on one line (1 MB) cost assemble 10 s of CPU, 60,000 sanitize ~2.5 s."""
    import ast

    from recode_lib.core.assemble import sanitize

    code = "def f(x):\n    return x\n" + "print(1);" * 60_000
    dt, (_, dropped) = _cpu(sanitize, code, ast.parse(code))
    assert len(dropped) == 60_000 and dropped[0] == ("print(1);" * 9)[:80]
    assert dt < 1.0, dt


def test_a_line_holding_several_kept_statements_is_kept_once():
    from recode_lib.core.assemble import assemble

    prog = assemble(function_problem(), right_f_then("A = 1; B = [A,\n  2]; print(B)"))
    assert prog.code.count("A = 1") == 1 and prog.code.count("2]") == 1, prog.code
    assert prog.dropped == ["print(B)"]


# ---- `recode sandbox` records (issue 39 item 7) ---------------------------------------------


def test_an_id_nested_near_the_recursion_limit_is_one_invalid_record(tmp_path):
    """An id ~970 deep passed the CLI's reading of its line and failed the same check deeper
    in the stack (execute_many's validation): the whole file stopped with an error, nothing
    judged, every re-run alike. The depths span the window wherever the caller's stack is."""
    import json

    from recode_lib.cli import main

    def rec(rid):
        return json.dumps(
            {
                "id": rid,
                "code": "def f():\n    return 1\n",
                "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": 1}]},
            }
        )

    deep = [rec("x").replace('"x"', "[" * d + "1" + "]" * d) for d in range(700, 1000, 2)]
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("\n".join([rec("a")] + deep) + "\n", encoding="utf-8")
    code = main(["sandbox", str(src), "--out", str(out), "--workers", "1", "--no-progress"])
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert code == 0 and len(rows) == 1 + len(deep)
    assert [r["status"] for r in rows if r["id"] == "a"] == ["passed"]
    assert all(r["status"] == "invalid_record" for r in rows if r["id"] != "a")
