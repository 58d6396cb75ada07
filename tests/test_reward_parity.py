"""Training reward and evaluation verdict agree: the reward builds the program exactly
as evaluation does — prelude included — so a LeetCode/LiveCodeBench answer annotated with
`List[int]` (which needs the problem's `from typing import *` prelude) that evaluation counts
correct gets reward 1, and a wrong one gets 0 on both. Real sandbox, real dataset rows."""

from __future__ import annotations

import pytest
from parity_helpers import Recording, Scripted

from recode_lib.core.jsonl import read_jsonl
from recode_lib.core.prompts import format_response
from recode_lib.data.schema import Problem
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.rewards import get_reward
from recode_lib.training.grpo import build_dataset

PRELUDE = "from typing import *\nfrom collections import *\n"
STUB = "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        "
GOOD = (
    "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
    "        seen = {}\n        for i, x in enumerate(nums):\n"
    "            if target - x in seen:\n                return [seen[target - x], i]\n"
    "            seen[x] = i\n"
)
WRONG = (
    "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
    "        return [0, 1]\n"
)
CALL = {
    "kind": "call",
    "fn_name": "twoSum",
    "cases": [
        {"args": [[2, 7, 11, 15], 9], "expected": [0, 1]},
        {"args": [[3, 2, 4], 6], "expected": [1, 2]},
    ],
}
SCRIPT = {
    "kind": "script",
    "script": "my_solution = Solution()\n"
    "assert my_solution.twoSum([2, 7, 11, 15], 9) == [0, 1]\n"
    "assert my_solution.twoSum([3, 2, 4], 6) == [1, 2]\n",
}


def problem(tests):
    return Problem(
        id="leetcode/two-sum",
        source="leetcode",
        prompt="Return the two indices.",
        starter_code=STUB,
        entry_point="twoSum",
        tests=tests,
        metadata={"prelude": PRELUDE},
    )


@pytest.mark.parametrize("tests", [CALL, SCRIPT], ids=["livecodebench_call", "leetcode_script"])
def test_evaluation_verdict_and_outcome_reward_agree_with_a_prelude(tests, tmp_path):
    p = problem(tests)
    responses = [
        format_response("A hash map of seen values.", GOOD),
        format_response("Guess.", WRONG),
    ]
    spec = EvalSpec(temperature=0.8, n=2, workers=1, progress=False)
    spec.evaluate("scripted", [p], tmp_path / "ev", generator=Scripted(responses))
    rows = sorted(read_jsonl(tmp_path / "ev" / "samples.jsonl"), key=lambda r: r["sample"])
    assert [r["outcome"] for r in rows] == ["correct", "correctness_failure"]

    row = build_dataset([p]).to_list()[0]  # the training row, as TRL hands its columns over
    cols = {k: [v, v] for k, v in row.items() if k != "prompt"}
    runner = Recording()
    rewards = get_reward("outcome", runner=runner)([row["prompt"]] * 2, responses, **cols)
    assert rewards == [1.0, 0.0]
    assert runner.codes == [r["code"] for r in rows]  # the very programs evaluation judged
