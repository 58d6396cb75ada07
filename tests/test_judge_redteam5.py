"""Red team, round 5: the path from a completion to a reward or a verdict, attacked as a policy
would.

Each test names one property that failed before its fix (the report of the redteam branch
lists them): the reasoning a chat template's response parser splits off a message is part of
what the judge reads (training and evaluation read the same text); the format reward asks for
the reasoning *before* the answer, never an answer hidden inside the think block.
Nothing here runs the sandbox.
"""

from __future__ import annotations

import json

import pytest

from recode_lib.core.math_answers import parse_math_response
from recode_lib.core.prompts import format_response, parse_response
from recode_lib.environments.settings import final_answer
from recode_lib.generation.openai_backend import parse_chat_response
from recode_lib.rewards import format_reward, math_format_reward

CODE = "def add(a, b):\n    return a + b"
GOOD = format_response("Add the two numbers.", CODE)  # <think>..</think>```python..```


# ---- the reasoning a response parser split off is still read --------------------------------
def parsed_message(reasoning: str, content: str) -> dict:
    """What TRL's parse_response makes of "<think>reasoning</think>content" (a tokenizer with a
    response template: the tool and agentic settings' templates)."""
    return {"role": "assistant", "reasoning_content": reasoning, "content": content}


def test_tool_setting_reads_the_reasoning_trl_moved_out_of_the_final_message():
    msg = parsed_message("Add the two numbers.", "```python\n" + CODE + "\n```")
    text, why = final_answer("tool", [msg])
    assert why == "" and parse_response(text).format_ok


def test_a_parsed_single_turn_completion_keeps_its_format_reward():
    msg = parsed_message("Add the two numbers.", "```python\n" + CODE + "\n```")
    assert format_reward(["p"], [[msg]]) == [1.0]


def test_an_empty_split_off_reasoning_is_still_no_reasoning():
    msg = parsed_message("", "Some prose.\n```python\n" + CODE + "\n```")
    raw = "<think></think>Some prose.\n```python\n" + CODE + "\n```"
    assert (
        parse_response(final_answer("tool", [msg])[0]).format_ok
        is parse_response(raw).format_ok
        is False
    )


def test_an_openai_server_with_a_reasoning_parser_gives_the_whole_answer():
    data = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "```python\n" + CODE + "\n```",
                    "reasoning_content": "Add the two numbers.",
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {"completion_tokens": 20},
    }
    assert parse_response(parse_chat_response(data, "test").text).format_ok


@pytest.mark.parametrize(
    "raw",
    [
        GOOD,
        "Prose first.\n```python\n" + CODE + "\n```",
        "<think>\n\n</think>\n```python\n" + CODE + "\n```",
        "<think>a</think>\n```python\n" + CODE + "\n```\n```python\nx = 1\n```",
        "<think>Add them.\n```python\n" + CODE + "\n```",
        "```python\n" + CODE + "\n```\n<think>Added.</think>",
        "```python\n" + CODE + "\n```\n<think>Added.",
        "<think>\n```python\n" + CODE + "\n```\n</think>",
        "Add them.</think>\n```python\n" + CODE + "\n```",
    ],
)
def test_trl_parsed_tool_answers_get_the_format_verdict_of_their_raw_text(tiny_model_dir, raw):
    """Training (TRL parses the tool setting's completions with the template's response
    parser) and evaluation (the raw text) give the same R_fmt."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import parse_response as trl_parse

    from recode_lib.environments import PythonToolEnv, prepare_tool_tokenizer

    tok = prepare_tool_tokenizer(AutoTokenizer.from_pretrained(tiny_model_dir))
    prefix = tok.apply_chat_template(
        [{"role": "user", "content": "add"}],
        tools=[PythonToolEnv().run_python],
        tokenize=False,
        add_generation_prompt=True,
    )
    ids = tok(raw + "<|im_end|>", add_special_tokens=False)["input_ids"]
    msg = trl_parse(tok, ids, prefix=tok(prefix, add_special_tokens=False)["input_ids"])
    training = parse_response(final_answer("tool", [msg])[0])
    assert training.format_ok == parse_response(raw).format_ok, json.dumps(msg)


# ---- the answer comes after the reasoning, not inside it -------------------------------------
def test_code_hidden_inside_the_think_block_gets_no_format_reward():
    assert format_reward(["p"], ["<think>\n```python\n" + CODE + "\n```\n</think>"]) == [0.0]


def test_code_inside_a_later_think_block_gets_no_format_reward():
    text = "<think>Add.</think>\n<think>\n```python\n" + CODE + "\n```\n</think>"
    assert format_reward(["p"], [text]) == [0.0]


def test_code_after_the_think_block_keeps_its_format_reward():
    assert format_reward(["p"], [GOOD]) == [1.0]


def test_a_math_answer_boxed_inside_the_think_block_gets_no_format_reward():
    assert math_format_reward(["p"], ["<think>\\boxed{25}</think>"]) == [0.0]


def test_a_math_answer_boxed_after_the_think_block_keeps_its_format_reward():
    assert parse_math_response("<think>5 squared.</think> \\boxed{25}").format_ok


# ---- an agentic submission is complete whatever the rollout did after it ---------------------
def test_a_submission_followed_by_a_truncated_turn_keeps_its_reward():
    """Evaluation judges the submitted file even when the last turn hit the token limit
    (episodes.MultiTurn); training read the rollout's last id and blanked it (R = 0)."""
    from types import SimpleNamespace

    from recode_lib.environments.settings import SettingReward
    from recode_lib.rewards.base import RewardFunction
    from recode_lib.rewards.code import format_rows

    fn = RewardFunction("format", format_rows, ("fmt",))
    fn.stop_token_ids = [0]
    env = SimpleNamespace(submission=CODE, submitted_path="solution.py")
    rollout = [{"role": "assistant", "content": "submitting"}]
    assert SettingReward(fn, "agentic")(
        ["p"], [rollout], environments=[env], completion_ids=[[5, 6, 7]]
    ) == [1.0]


def test_a_truncated_tool_setting_answer_is_still_a_format_error():
    from recode_lib.environments.settings import SettingReward
    from recode_lib.rewards.base import RewardFunction
    from recode_lib.rewards.code import format_rows

    fn = RewardFunction("format", format_rows, ("fmt",))
    fn.stop_token_ids = [0]
    rollout = [{"role": "assistant", "content": GOOD}]
    assert SettingReward(fn, "tool")(["p"], [rollout], completion_ids=[[5, 6, 7]]) == [0.0]


def test_code_before_a_lone_think_closer_gets_no_format_reward():
    """A template that prefills <think> (Qwen3/R1-style): the generated text holds only the
    closer, and code before it is inside the reasoning."""
    assert format_reward(["p"], ["Plan: ```python\n" + CODE + "\n```\n</think>\nDone."]) == [0.0]


def test_code_after_a_lone_think_closer_keeps_its_format_reward():
    assert format_reward(["p"], ["Add them.\n</think>\n```python\n" + CODE + "\n```"]) == [1.0]


def test_a_math_answer_before_a_lone_think_closer_gets_no_format_reward():
    assert math_format_reward(["p"], ["It is \\boxed{25}</think> done"]) == [0.0]


def test_code_after_a_think_never_closed_gets_no_format_reward():
    """The model never ended its reasoning: the code is inside it (TRL files the whole turn
    as reasoning_content, so training must read it so too)."""
    assert format_reward(["p"], ["<think>Add them.\n```python\n" + CODE + "\n```"]) == [0.0]


def test_a_math_answer_after_a_think_never_closed_gets_no_format_reward():
    assert math_format_reward(["p"], ["<think>5 squared is \\boxed{25}"]) == [0.0]


# ---- the agentic workspace of training is the one of evaluation ------------------------------
def test_the_agentic_training_workspace_holds_the_examples_evaluation_gives():
    from recode_lib.data.schema import Problem
    from recode_lib.environments import TerminalEnv, reset_row
    from recode_lib.training.grpo import code_row

    p = Problem(
        id="t/1",
        source="t",
        prompt="Add a and b.",
        tests={"kind": "stdio", "cases": [{"input": "1 2\n", "output": "3\n"}]},
        metadata={"public_examples": [{"input": "2 2\n", "output": "4\n"}]},
    )
    workspaces = []
    for row in (code_row(p, "t/1"), reset_row(p)):
        env = TerminalEnv()
        env.reset(**row)
        workspaces.append(env.workspace.files())
        env.workspace.close()
    assert workspaces[0] == workspaces[1] and "examples/1.in" in workspaces[0]


# ---- the truncation rule reaches the rewards of every setting --------------------------------
def test_a_truncated_tool_setting_answer_gets_no_reward_in_training():
    """GRPO gives the trainer's stop ids to its reward functions; the tool and agentic
    settings' wrappers hid the attribute, so a tool answer cut at the token limit (a format
    error in evaluation) was judged as if complete."""
    from recode_lib.environments.settings import setting_reward
    from recode_lib.rewards.base import RewardFunction
    from recode_lib.rewards.code import format_rows
    from recode_lib.training.grpo import give_stop_ids

    funcs = [setting_reward(RewardFunction("format", format_rows, ("fmt",)), "tool")]
    give_stop_ids(funcs, [0])
    rollout = [{"role": "assistant", "content": GOOD + "\nAnd then some more words"}]
    assert funcs[0](["p"], [rollout], completion_ids=[[5, 6, 7]]) == [0.0]


def test_trl_parsed_answer_with_a_think_tag_inside_its_code_keeps_its_code(tiny_model_dir):
    from transformers import AutoTokenizer
    from trl.chat_template_utils import parse_response as trl_parse

    from recode_lib.environments import PythonToolEnv, prepare_tool_tokenizer

    tok = prepare_tool_tokenizer(AutoTokenizer.from_pretrained(tiny_model_dir))
    prefix = tok.apply_chat_template(
        [{"role": "user", "content": "add"}],
        tools=[PythonToolEnv().run_python],
        tokenize=False,
        add_generation_prompt=True,
    )
    raw = "<think>r</think>\n```python\ns = '<think>'\n" + CODE + "\n```"
    ids = tok(raw + "<|im_end|>", add_special_tokens=False)["input_ids"]
    msg = trl_parse(tok, ids, prefix=tok(prefix, add_special_tokens=False)["input_ids"])
    assert parse_response(final_answer("tool", [msg])[0]).code == parse_response(raw).code


def test_tool_tokenizer_still_files_a_leading_think_block_as_reasoning(tiny_model_dir):
    """The anchored reasoning opener (environments.chat.anchor_reasoning) keeps TRL's reading of
    a normal turn: the think block goes to reasoning_content, a tool call to tool_calls."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import parse_response as trl_parse

    from recode_lib.environments import PythonToolEnv, prepare_tool_tokenizer

    tok = prepare_tool_tokenizer(AutoTokenizer.from_pretrained(tiny_model_dir))
    prefix = tok.apply_chat_template(
        [{"role": "user", "content": "add"}],
        tools=[PythonToolEnv().run_python],
        tokenize=False,
        add_generation_prompt=True,
    )
    call = '<tool_call>\n{"name": "run_python", "arguments": {"code": "print(1)"}}\n</tool_call>'
    raw = "<think>plan</think>\nlet me run it\n" + call
    ids = tok(raw + "<|im_end|>", add_special_tokens=False)["input_ids"]
    msg = trl_parse(tok, ids, prefix=tok(prefix, add_special_tokens=False)["input_ids"])
    assert msg["reasoning_content"] == "plan"
    assert msg["content"].strip() == "let me run it"
    assert msg["tool_calls"][0]["function"]["name"] == "run_python"
