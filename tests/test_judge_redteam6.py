"""Red team, round 6: the text training judges in the tool settings (TRL's parse of a turn with
the tokenizer's response template) against the text evaluation judges (the generation
backend's decode of the same ids), attacked as a policy would; and the sandbox's cheaper judge.

Each test names one property that failed before its fix (the report of the redteam6 branch
lists them). A turn is built from ids as a model writes it: a literal like '<|im_end|>' may come
in ordinary tokens (generation goes on after it), or a special token may sit inside the code.
Training's side is trl.chat_template_utils.parse_response (what GRPOTrainer calls) then
settings.final_answer; evaluation's is the backends' decode (generation/hf.py:
skip_special_tokens=True, clean_up_tokenization_spaces=False) then rollout.parse_turn and
final_answer, as run_episodes does. Nothing here runs the sandbox.
"""

from __future__ import annotations

import json

import pytest

from recode_lib.core.prompts import parse_response
from recode_lib.environments.settings import final_answer

CODE = "```python\ndef add(a, b):\n    return a + b\n```"


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


def turn_ids(tok, parts) -> list[int]:
    """A generated turn: (text, special) pieces; special pieces are the special token itself,
    the others ordinary tokens (even when they spell a special token's text), then the EOS."""
    ids = []
    for text, special in parts:
        ids += tok(text, add_special_tokens=False, split_special_tokens=not special)["input_ids"]
    return ids + [tok.eos_token_id]


def judged(tok, prefix, ids):
    """(training's parsed answer, evaluation's parsed answer) for one final turn."""
    from trl.chat_template_utils import parse_response as trl_parse

    from recode_lib.environments.rollout import parse_turn

    msg = trl_parse(tok, ids, prefix=prefix)
    training = parse_response(final_answer("tool", [msg])[0])
    raw = tok.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)
    _, calls, errors = parse_turn(raw)
    assert not calls and not errors  # a final turn in evaluation too
    evaluation = parse_response(final_answer("tool", [{"role": "assistant", "content": raw}])[0])
    return training, evaluation, msg


def test_a_literal_end_of_turn_inside_the_answer_does_not_hide_what_came_before(tool_tok):
    """The template closed the content at any '<|im_end|>' and the text after it replaced the
    content: training read one clean code block (R_fmt 1) where evaluation reads two (0)."""
    tok, prefix = tool_tok
    ids = turn_ids(
        tok,
        [
            ("<think>plan</think>\n" + CODE + "\n", False),
            ("<|im_end|>", False),  # ordinary tokens: the model goes on
            ("\n```python\ndef add(a, b):\n    return 0\n```", False),
        ],
    )
    training, evaluation, msg = judged(tok, prefix, ids)
    assert (training.format_ok, training.code) == (evaluation.format_ok, evaluation.code), (
        json.dumps(msg)
    )


def test_a_literal_end_of_turn_after_a_right_answer_keeps_its_code(tool_tok):
    """The reverse: a right answer followed by '<|im_end|>' and a remark had no code at all in
    training (reward 0) while evaluation runs it."""
    tok, prefix = tool_tok
    ids = turn_ids(
        tok,
        [("<think>plan</think>\n" + CODE + "\n", False), ("<|im_end|>", False), ("\nDone.", False)],
    )
    training, evaluation, msg = judged(tok, prefix, ids)
    assert evaluation.code is not None and training.code == evaluation.code, json.dumps(msg)


def test_a_special_token_inside_the_code_means_the_same_program_in_both(tool_tok):
    """TRL decoded the turn with its special tokens, evaluation without: `len('<|im_start|>')`
    is 12 in training and 0 in evaluation, so a program tuned to the training text passed
    there and fails in evaluation."""
    tok, prefix = tool_tok
    ids = turn_ids(
        tok,
        [
            ("<think>plan</think>\n```python\ndef add(a, b):\n    return a + b + len('", False),
            ("<|im_start|>", True),
            ("') - 12\n```", False),
        ],
    )
    training, evaluation, msg = judged(tok, prefix, ids)
    assert training.code == evaluation.code, json.dumps(msg)


def test_a_special_token_closing_the_code_does_not_break_a_right_answer(tool_tok):
    """A special token at the end of a code line: a syntax error in training (reward 0), the
    right program in evaluation."""
    tok, prefix = tool_tok
    ids = turn_ids(
        tok,
        [
            ("<think>plan</think>\n```python\ndef add(a, b):\n    return a + b", False),
            ("<|im_start|>", True),
            ("\n```", False),
        ],
    )
    training, evaluation, msg = judged(tok, prefix, ids)
    assert (training.format_ok, training.code) == (evaluation.format_ok, evaluation.code), (
        json.dumps(msg)
    )


def test_the_judged_parse_keeps_tool_calls_and_reasoning(tool_tok):
    """The parse that reads evaluation's text still files a think block and a tool call."""
    tok, prefix = tool_tok
    from trl.chat_template_utils import parse_response as trl_parse

    call = '<tool_call>\n{"name": "run_python", "arguments": {"code": "print(1)"}}\n</tool_call>'
    msg = trl_parse(tok, turn_ids(tok, [("<think>plan</think>\nrun it\n" + call, False)]), prefix)
    assert msg["reasoning_content"] == "plan" and msg["content"].strip() == "run it"
    assert msg["tool_calls"][0]["function"]["name"] == "run_python"


def test_the_judged_parse_survives_pickling(tool_tok):
    """A guard for the fix (not a hole): the tokenizer's parse still reads evaluation's text
    after a pickle round trip (the trainer may copy its processing class)."""
    import pickle

    from trl.chat_template_utils import parse_response as trl_parse

    tok, prefix = tool_tok
    again = pickle.loads(pickle.dumps(tok))
    ids = turn_ids(tok, [("<think>p</think>\nx", False), ("<|im_start|>", True), ("y", False)])
    assert trl_parse(again, ids, prefix) == trl_parse(tok, ids, prefix)


def test_an_empty_think_block_then_prose_gets_the_format_verdict_of_evaluation(tool_tok):
    """The parser drops an empty reasoning_content, so training read "prose + code" (the
    prose counts as reasoning: R_fmt 1) where evaluation reads an empty think block (0)."""
    tok, prefix = tool_tok
    ids = turn_ids(tok, [("<think></think>Add them.\n" + CODE, False)])
    training, evaluation, msg = judged(tok, prefix, ids)
    assert training.format_ok == evaluation.format_ok, json.dumps(msg)


def test_a_think_block_ending_in_backticks_keeps_the_answer_after_it(tool_tok):
    """The parser strips the reasoning and message_text put it back between newlines: a
    reasoning ending in ``` became an opening fence that swallowed the answer (reward 0 in
    training for an answer evaluation passes)."""
    tok, prefix = tool_tok
    ids = turn_ids(tok, [("<think>plan\n```</think>\n" + CODE, False)])
    training, evaluation, msg = judged(tok, prefix, ids)
    assert (training.format_ok, training.code) == (evaluation.format_ok, evaluation.code), (
        json.dumps(msg)
    )


CALL = '<tool_call>\n{"name": "run_python", "arguments": {"code": "print(1)"}}\n</tool_call>'


def calls_read(tok, prefix, text) -> tuple[int, int]:
    """(tool calls training reads, tool calls evaluation reads) in one generated turn."""
    from trl.chat_template_utils import parse_response as trl_parse

    from recode_lib.environments.rollout import parse_turn

    ids = turn_ids(tok, [(text, False)])
    msg = trl_parse(tok, ids, prefix=prefix)
    raw = tok.decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)
    return len(msg.get("tool_calls") or []), len(parse_turn(raw)[1])


def test_a_tool_call_inside_the_think_block_is_not_a_call_in_evaluation_either(tool_tok):
    """Training (TRL's template) reads a call written inside the think block as reasoning;
    evaluation ran it as a tool call, so the same turn ended the episode in training and went
    on in evaluation."""
    tok, prefix = tool_tok
    assert calls_read(tok, prefix, "<think>maybe " + CALL + "</think>\n" + CODE) == (0, 0)


def test_a_tool_call_inside_an_unclosed_think_block_is_not_a_call(tool_tok):
    """An unclosed think block is reasoning to the end of the turn in training."""
    tok, prefix = tool_tok
    assert calls_read(tok, prefix, "<think>maybe " + CALL) == (0, 0)


@pytest.mark.parametrize(
    "text",
    [
        "<think>plan</think>\n" + CALL,  # after the block
        "  <think>plan " + CALL + "</think>",  # not at the turn's start: no reasoning field
        "<think>a</think>b<think>" + CALL + "</think>",  # a second block is content
    ],
)
def test_a_tool_call_outside_the_leading_think_block_counts_in_both(tool_tok, text):
    tok, prefix = tool_tok
    assert calls_read(tok, prefix, text) == (1, 1)
