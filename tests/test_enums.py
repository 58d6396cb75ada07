"""The modes recode switches on are StrEnums defined once at their concept's home (sandbox
status and outcome, generation backend and finish reason, setting, launcher): members equal the
contract's strings, records written and read back as JSON compare equal to them, and the tuples
error messages print are plain strings."""

from __future__ import annotations

import json

import pytest

from recode_lib.environments.settings import SETTINGS, Setting, check_setting
from recode_lib.generation import BACKENDS, Backend, FinishReason, get_generator
from recode_lib.sandbox.result import OUTCOMES, STATUSES, Outcome, Status, outcome_of
from recode_lib.training.launch import LAUNCHERS
from recode_lib.training.launch_configs import Launcher
from recode_lib.training.rm_launch import LAUNCHERS as RM_LAUNCHERS


def test_members_are_the_contract_strings():
    assert STATUSES == (
        "passed",
        "wrong_answer",
        "runtime_error",
        "time_limit",
        "memory_limit",
        "syntax_error",
        "no_code",
    )
    assert OUTCOMES == ("correct", "optimization_failure", "correctness_failure", "format_error")
    assert SETTINGS == ("single", "tool", "agentic")
    assert BACKENDS == ("hf", "vllm", "openai", "vllm_standin")
    assert LAUNCHERS == ("inprocess", "accelerate", "slurm", "dryrun", "dryrun_vllm")
    assert RM_LAUNCHERS == ("inprocess", "accelerate", "dryrun")
    assert {FinishReason.STOP, FinishReason.LENGTH} == {"stop", "length"}


@pytest.mark.parametrize("names", [STATUSES, OUTCOMES, SETTINGS, BACKENDS, LAUNCHERS])
def test_tuples_print_as_plain_strings(names):
    assert all(type(n) is str for n in names)
    assert "<" not in str(names)


def test_json_round_trip_compares_equal():
    rec = {"status": Status.TIME_LIMIT, "outcome": outcome_of("passed", [])}
    back = json.loads(json.dumps(rec))
    assert back == {"status": "time_limit", "outcome": "correct"}
    assert back["outcome"] == Outcome.CORRECT and back["status"] == Status.TIME_LIMIT


def test_check_setting_normalises_and_refuses():
    assert check_setting("tool") is Setting.TOOL
    with pytest.raises(ValueError, match=r"\('single', 'tool', 'agentic'\)"):
        check_setting("multi")


def test_unknown_backend_names_the_choices():
    with pytest.raises(ValueError, match="'hf', 'vllm'"):
        get_generator("tgi", "m")
    assert Backend("vllm_standin") is Backend.VLLM_STANDIN and Launcher("slurm") is Launcher.SLURM
