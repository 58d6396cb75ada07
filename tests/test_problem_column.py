"""The one conversion of a Problem to and from a dataset column (Problem.to_json / from_json):
a GRPO training row carries the problem itself, and the code rewards judge a completion
against that very Problem (recode_lib.rewards.base.row_problems), not a stand-in."""

from __future__ import annotations

import pytest

from recode_lib.core.prompts import format_response
from recode_lib.data import load_benchmark
from recode_lib.data.schema import Problem, ProblemError
from recode_lib.rewards import base, get_reward
from recode_lib.training.grpo import code_row

P = Problem(
    id="t/add",
    source="t",
    prompt="Add a and b.",
    tests={"kind": "call", "fn_name": "add", "cases": [{"args": [1, 2], "expected": 3}]},
    starter_code="def add(a, b):\n",
    entry_point="add",
    time_limit_s=3.0,
    memory_mb=256,
    metadata={"prelude": "from typing import *", "public_examples": []},
)


@pytest.mark.parametrize("name", ["microbench", "easy"])
def test_a_loaded_problem_round_trips_through_its_column(name):
    for p in load_benchmark(name, limit=3):
        assert Problem.from_json(p.to_json()) == p


def test_from_json_takes_text_a_mapping_or_a_problem():
    assert Problem.from_json(P.to_json()) == Problem.from_json(P.to_dict()) == P
    assert Problem.from_json(P) is P


@pytest.mark.parametrize("bad", ["{not json", "[1]", 7, {"id": "t/x", "source": "t"}])
def test_a_value_that_is_no_problem_is_refused_naming_where(bad):
    with pytest.raises(ProblemError, match="^row 4"):
        Problem.from_json(bad, "row 4")


def test_the_reward_assembles_the_rows_very_problem(monkeypatch):
    """What assemble receives in the reward is the Problem evaluation has (type and every
    field), read from the training row's column."""
    seen = []
    real = base.assemble

    def recording(problem, text):
        seen.append(problem)
        return real(problem, text)

    monkeypatch.setattr(base, "assemble", recording)

    class Runner:
        def check_tests(self, tests, where):
            pass

        def run(self, codes, tests, *, ids=None, time_limit_s=None, memory_mb=None, step=None):
            self.limits = (time_limit_s, memory_mb)
            return [{"status": "passed", "outcome": "correct"} for _ in codes]

    row = code_row(P, "t/add")
    runner = Runner()
    text = format_response("Add.", "def add(a, b):\n    return a + b")
    cols = {k: [v] for k, v in row.items() if k != "prompt"}
    assert get_reward("outcome", runner=runner)([row["prompt"]], [text], **cols) == [1.0]
    assert len(seen) == 1 and type(seen[0]) is Problem and seen[0] == P
    assert runner.limits == ([3.0], [256])  # the problem's own limits
