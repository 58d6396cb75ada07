"""Reward functions: one property per test, on the real sandbox and a real (tiny, random) RM."""

from __future__ import annotations

import dataclasses
import json
import math
import time

import pytest

from recode_lib.core.prompts import format_response
from recode_lib.data.schema import Problem
from recode_lib.rewards import (
    REGISTRY,
    Need,
    RewardConfigError,
    RewardResources,
    build_reward,
    get_reward,
    reward_needs,
)
from recode_lib.rewards.execution import SandboxRunner

ADD = {
    "kind": "call",
    "fn_name": "add",
    "cases": [{"args": [1, 2], "expected": 3}, {"args": [5, 5], "expected": 10}],
}
P_ADD = Problem(id="t/add", source="t", prompt="Add the two numbers.", tests=ADD)
GOOD = format_response("Add the two numbers.", "def add(a, b):\n    return a + b")
WRONG = format_response("Subtract them.", "def add(a, b):\n    return a - b")
NO_CODE = "I think the answer is to add them."


def chat(text):
    return [{"role": "assistant", "content": text}]


class Log:
    def __init__(self):
        self.metrics, self.extra = {}, {}

    def metric(self, name, value):
        self.metrics[name] = value

    def extra_col(self, name, values):
        self.extra[name] = values


@pytest.fixture(scope="module")
def rm_dir(tiny_model_dir, tmp_path_factory):
    """A real Bradley-Terry-shaped RM folder (random head) on the tiny backbone."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    out = tmp_path_factory.mktemp("rm")
    model = AutoModelForSequenceClassification.from_pretrained(tiny_model_dir, num_labels=1)
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    model.config.pad_token_id = tok.pad_token_id
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


class FixedScorer:
    """An RM stand-in returning given raw scores (to check gating arithmetic exactly)."""

    def __init__(self, value):
        self.value, self.calls = value, []

    def score(self, prompts, traces):
        self.calls.append(list(traces))
        return [self.value] * len(traces)


def test_registry_names_and_unknown():
    for name in (
        "format",
        "outcome",
        "process",
        "gated",
        "additive",
        "outcome_only",
        "strict",
        "partial_discrete",
        "partial_continuous",
        "math_answer",
        "math_gated",
    ):
        assert name in REGISTRY
    with pytest.raises(RewardConfigError, match="unknown reward 'nope'"):
        get_reward("nope")
    with pytest.raises(RewardConfigError, match=r"'outcome_only': unknown option\(s\) \['typo'\]"):
        get_reward("outcome_only", typo=1)


def test_entries_declare_what_they_need():
    sandbox, rm = {Need.SANDBOX}, {Need.REWARD_MODEL}
    assert reward_needs("format") == set() and reward_needs("math_answer") == set()
    assert reward_needs("outcome") == sandbox and reward_needs("strict_3") == sandbox
    assert reward_needs("partial_continuous") == sandbox
    assert reward_needs("gated") == sandbox | rm and reward_needs("additive") == sandbox | rm
    assert reward_needs("process") == rm and reward_needs("math_gated") == rm
    assert reward_needs("outcome_only") == sandbox and reward_needs("math_outcome_only") == set()
    for name, entry in REGISTRY.items():  # a need arrives as the factory keyword it names
        assert {n.value for n in entry.needs} <= entry.options(), name


def test_build_reward_makes_each_resource_once_and_only_when_needed():
    made = {"runner": 0, "scorer": 0}

    def runner():
        made["runner"] += 1
        return SandboxRunner(workers=1)

    def scorer():
        made["scorer"] += 1
        return FixedScorer(0.0)

    res = RewardResources({Need.SANDBOX: runner, Need.REWARD_MODEL: scorer})
    build_reward("format", res)
    build_reward("outcome_only", res)
    assert made == {"runner": 1, "scorer": 0}  # no RM loaded for rewards without one
    gated, proc = build_reward("gated", res), build_reward("process", res, proc_temperature=2.0)
    assert made == {"runner": 1, "scorer": 1}  # one RM shared by both
    assert gated(["p"], [GOOD], problem=[P_ADD]) == [2.5]
    assert proc(["p"], [GOOD]) == [0.5]
    with pytest.raises(RewardConfigError, match="no reward model provided"):
        build_reward("gated", RewardResources({Need.SANDBOX: runner}))


def test_process_options_are_checked():
    with pytest.raises(RewardConfigError, match="either scorer or rm_path, not both"):
        get_reward("gated", scorer=FixedScorer(0.0), rm_path="x")
    with pytest.raises(RewardConfigError, match="proc_trace must be one of"):
        get_reward("process", scorer=FixedScorer(0.0), proc_trace="code")
    with pytest.raises(RewardConfigError, match="proc_temperature must be > 0"):
        get_reward("process", scorer=FixedScorer(0.0), proc_temperature=0)


def test_process_reward_scales_and_reads_the_chosen_trace():
    from recode_lib.rewards import process_reward

    s = FixedScorer(2.0)
    fn = process_reward(scorer=s, proc_center=1.0, proc_temperature=0.5, proc_trace="reasoning")
    assert fn(["p"], [GOOD]) == [pytest.approx(1 / (1 + math.exp(-2.0)))]  # sigmoid((2-1)/.5)
    assert s.calls[-1] == ["Add the two numbers."]  # the reasoning, not the code block
    process_reward(scorer=s)(["p"], [GOOD])
    assert s.calls[-1] == [GOOD]  # default: the whole response


def test_a_collective_scorer_scores_every_sample_and_the_gate_still_applies():
    runner, scorer = SandboxRunner(workers=2), FixedScorer(0.0)
    scorer.collective = True  # a ZeRO-3-sharded RM
    r = get_reward("gated", runner=runner, scorer=scorer)(
        ["p"] * 3, [GOOD, WRONG, NO_CODE], problem=[P_ADD] * 3
    )
    assert r == [2.5, 1.0, 0.0] and len(scorer.calls[-1]) == 3


def test_format_reward_strings_and_messages():
    from recode_lib.rewards import format_reward

    fn = get_reward("format")
    assert fn is format_reward
    texts = [GOOD, NO_CODE, GOOD + "\n```python\nx = 1\n```"]
    assert fn([""] * 3, texts) == [1.0, 0.0, 0.0]
    assert fn([""] * 3, [chat(t) for t in texts]) == [1.0, 0.0, 0.0]


def test_outcome_runs_tests_and_never_executes_missing_code():
    runner = SandboxRunner(workers=2)
    fn = get_reward("outcome", runner=runner)
    log = Log()
    r = fn(
        ["p"] * 3,
        [GOOD, WRONG, NO_CODE],
        problem=[P_ADD.to_json()] * 3,
        log_metric=log.metric,
        log_extra=log.extra_col,
    )
    assert r == [1.0, 0.0, 0.0]
    assert runner.stats.executed == 2  # the no-code answer never reached the sandbox
    assert log.metrics["outcome/out"] == pytest.approx(1 / 3)
    assert log.extra["outcome/reason"][2] == "no code block"
    # its result is the sandbox's one no-code result, the one evaluation rows carry
    res = runner.run([None], [ADD], ids=["x"])[0]
    assert (res["status"], res["outcome"], res["total"]) == ("no_code", "format_error", 2)
    assert res["strictness"]["inf"] == 0 and runner.stats.executed == 2


def test_compositions_gate_the_process_reward():
    runner, scorer = SandboxRunner(workers=2), FixedScorer(0.0)  # sigmoid(0) = 0.5
    comps = ["p"] * 3, [GOOD, WRONG, NO_CODE]
    cols = {"problem": [P_ADD] * 3}
    gated = get_reward("gated", runner=runner, scorer=scorer)(*comps, **cols)
    assert gated == [2.5, 1.0, 0.0]  # fmt + out + proc only where out == 1
    assert len(scorer.calls[-1]) == 1  # the RM scored only the correct answer
    additive = get_reward("additive", runner=runner, scorer=scorer)(*comps, **cols)
    assert additive == [2.5, 1.5, 0.5]
    assert get_reward("outcome_only", runner=runner)(*comps, **cols) == [2.0, 1.0, 0.0]


def test_composed_rewards_share_one_execution_per_step():
    runner, scorer = SandboxRunner(workers=2), FixedScorer(1.0)
    state = type("S", (), {"global_step": 7})()
    kw = {"problem": [P_ADD] * 2, "trainer_state": state}
    get_reward("gated", runner=runner, scorer=scorer)(["p"] * 2, [GOOD, WRONG], **kw)
    get_reward("outcome", runner=runner)(["p"] * 2, [GOOD, WRONG], **kw)
    assert runner.stats.executed == 2 and runner.stats.cache_hits == 2
    state.global_step = 8  # a new step: the cache is cleared
    get_reward("outcome", runner=runner)(["p"] * 2, [GOOD, WRONG], **kw)
    assert runner.stats.executed == 4


def test_process_reward_from_a_real_rm_is_bounded(rm_dir):
    fn = get_reward("process", rm_path=str(rm_dir))
    r = fn(["Add two numbers."] * 2, [GOOD, chat(WRONG)])
    assert all(0.0 < x < 1.0 and math.isfinite(x) for x in r)


def test_rm_path_that_does_not_load_is_named(tmp_path):
    missing = tmp_path / "no_rm"
    with pytest.raises(RewardConfigError, match=f"reward model path {missing} does not load"):
        get_reward("gated", rm_path=str(missing))
    bad = tmp_path / "bad_rm"
    bad.mkdir()
    (bad / "config.json").write_text("{not json")
    with pytest.raises(RewardConfigError, match=f"reward model path {bad} does not load"):
        get_reward("process", rm_path=str(bad))
    with pytest.raises(RewardConfigError, match="needs rm_path"):
        get_reward("gated")


def test_nan_rm_score_is_a_recorded_none():
    runner = SandboxRunner(workers=1)
    fn = get_reward("gated", runner=runner, scorer=FixedScorer(float("nan")))
    rows = fn.details(["p"], [GOOD], problem=[P_ADD])
    assert rows[0]["proc"] == 0.0 and "rm returned nan" in rows[0]["reason"]
    # the RM failed: the sample is left out of its group (None), not scored as if proc were 0
    assert fn(["p"], [GOOD], problem=[P_ADD]) == [None]


def test_dataset_without_problems_names_the_row():
    fn = get_reward("outcome", runner=SandboxRunner(workers=1))
    with pytest.raises(ValueError, match="no 'problem' column"):
        fn(["p"], [GOOD])
    no_tests = {"id": "mbpp/9", "source": "mbpp", "prompt": "p"}
    with pytest.raises(ValueError, match=r"row 1 \(problem 'mbpp/9'\): missing field 'tests'"):
        fn(["p"] * 2, [GOOD, GOOD], problem=[P_ADD, json.dumps(no_tests)])
    with pytest.raises(ValueError, match=r"row 0: not JSON"):
        fn(["p"], [GOOD], problem=["{not json"])


def test_sandbox_batch_timeout_is_a_recorded_none_not_a_zero_nor_a_hang():
    runner = SandboxRunner(workers=1, batch_timeout_s=1.0)
    spin = format_response("Loop.", "def add(a, b):\n    while True:\n        pass")
    fn = get_reward("outcome", runner=runner)
    log = Log()
    t0 = time.perf_counter()
    r = fn(
        ["p"],
        [spin],
        problem=[dataclasses.replace(P_ADD, time_limit_s=30.0)],
        log_metric=log.metric,
        log_extra=log.extra_col,
    )
    assert time.perf_counter() - t0 < 5.0
    assert r == [None]  # an infrastructure failure: TRL leaves it out of the group
    assert "timed out" in log.extra["outcome/reason"][0]
    assert log.metrics["outcome/error_rate"] == 1.0


ADD8 = dict(ADD, cases=[{"args": [i, 1], "expected": i + 1} for i in range(8)])
P_ADD8 = dataclasses.replace(P_ADD, tests=ADD8)
SLOW = format_response(
    "Add slowly.", "import time\ndef add(a, b):\n    time.sleep(1.0)\n    return a + b"
)


def test_sandbox_batch_timeout_keeps_the_rewards_of_finished_submissions():
    runner = SandboxRunner(workers=2, batch_timeout_s=4.0)
    fn = get_reward("outcome", runner=runner)
    assert fn(["p"] * 2, [GOOD, WRONG], problem=[P_ADD8] * 2) == [1.0, 0.0]  # warm workers
    runner.clear()
    log = Log()
    t0 = time.perf_counter()
    r = fn(
        ["p"] * 3,
        [GOOD, SLOW, WRONG],
        problem=[dataclasses.replace(P_ADD8, time_limit_s=5.0)] * 3,
        log_metric=log.metric,
        log_extra=log.extra_col,
    )
    assert time.perf_counter() - t0 < 7.0  # 8 tests of 1 s: still running at the bound
    assert r == [1.0, None, 0.0]  # the right and the wrong one keep their rewards
    reasons = log.extra["outcome/reason"]
    assert "timed out" in reasons[1] and "still running" in reasons[1]
    assert "not started" in reasons[1]  # it may never have started: the reason says so
    assert "timed out" not in reasons[0] + reasons[2]
    assert runner.stats.timeouts == 1


SIZED = {
    "kind": "call",
    "fn_name": "f",
    "cases": [
        {"args": [[1] * 3], "expected": 3, "input_len": 5},
        {"args": [[1] * 30], "expected": 30, "input_len": 50},
        {"args": [[1] * 300], "expected": 300, "input_len": 500},
    ],
}
P_SIZED = Problem(id="t/count", source="t", prompt="Count.", tests=SIZED)
# correct on small inputs only: wrong for lists longer than 40
SMALL_ONLY = format_response("Count.", "def f(x):\n    return len(x) if len(x) < 40 else 0")
ALL_OK = format_response("Count.", "def f(x):\n    return len(x)")


def test_strictness_levels_from_one_execution():
    runner = SandboxRunner(workers=2)
    kw = {"problem": [P_SIZED] * 2}
    comps = [SMALL_ONLY, ALL_OK]
    assert get_reward("strict_1", runner=runner)(["p"] * 2, comps, **kw) == [1.0, 1.0]
    assert get_reward("strict_2", runner=runner)(["p"] * 2, comps, **kw) == [1.0, 1.0]
    assert get_reward("strict", k=3, runner=runner)(["p"] * 2, comps, **kw) == [0.0, 1.0]
    assert get_reward("strict_inf", runner=runner)(["p"] * 2, comps, **kw) == [0.0, 1.0]
    assert runner.stats.executed == 2  # every k answered by the cached execution
    with pytest.raises(RewardConfigError, match="integer or 'inf'"):
        get_reward("strict_x")
    with pytest.raises(RewardConfigError, match=r"'strict_2': unknown option\(s\) \['k'\]"):
        get_reward("strict_2", k=3)  # the name already says k
    from recode_lib.rewards import strict_reward

    assert (
        strict_reward(k="inf").__name__ == "strict_inf"
        and strict_reward(k=3).__name__ == "strict_3"
    )


def test_partial_credit_discrete_and_continuous():
    runner = SandboxRunner(workers=2)
    kw = {"problem": [P_SIZED] * 3}
    comps = [SMALL_ONLY, ALL_OK, NO_CODE]
    disc = get_reward("partial_discrete", ks=[1, 2, 3], runner=runner)(["p"] * 3, comps, **kw)
    assert disc == [pytest.approx(2 / 4), 1.0, 0.0]  # R_1, R_2 pass; R_3, R_inf fail
    cont = get_reward("partial_continuous", runner=runner)(["p"] * 3, comps, **kw)
    assert cont == [pytest.approx(2 / 3), 1.0, 0.0]


def _sweep_profiles():
    """{profile: notebook 06's resolved parameters} for every profile and the tiny test one."""
    from pathlib import Path

    from recode_lib.runner.pipeline import (
        available_profiles,
        declared_parameters,
        load_profile,
        notebooks_dir,
        resolve_parameters,
    )

    nb = notebooks_dir() / "06_strictness_sweep.ipynb"
    tiny = Path(__file__).parent / "notebook_params_tiny.yaml"
    defaults = declared_parameters(nb)  # what papermill leaves as the cell has it
    out = {p: defaults | resolve_parameters(nb, p, load_profile(p)) for p in available_profiles()}
    out["tiny"] = defaults | resolve_parameters(nb, "tiny", load_profile("tiny", tiny))
    return out


def test_partial_discrete_averages_the_sweeps_own_levels_in_every_profile():
    """Paper B: static partial credit for "passing smaller tests" next to the R_k runs: the
    discrete credit averages exactly the sweep's levels (was a fixed k = 1..5 whatever KS)."""
    from recode_lib.rewards import sweep_rewards
    from recode_lib.runner.pipeline import parse_list

    profiles = _sweep_profiles()
    assert {"smoke", "laptop", "paper", "tiny"} <= set(profiles)
    for profile, params in profiles.items():
        specs = sweep_rewards(
            parse_list(params["KS"], int), parse_list(params["PARTIAL_CREDIT"]) or ["discrete"]
        )
        strict = [
            s["name"].removeprefix("strict_")
            for s in specs.values()
            if s["name"].startswith("strict_")
        ]
        assert strict[-1] == "inf" and specs["kinf"] == {"name": "strict_inf"}
        disc = get_reward(**specs["partial_discrete"])
        assert disc.levels == sorted(strict[:-1], key=int) + ["inf"], profile
    # the same execution scored at a sweep's levels (KS = 1,3): R_1 = 1, R_3 = R_inf = 0
    runner = SandboxRunner(workers=1)
    sweep = sweep_rewards([1, 3], ["discrete"])
    got = get_reward(**sweep["partial_discrete"], runner=runner)(
        ["p"], [SMALL_ONLY], problem=[P_SIZED]
    )
    assert sweep["partial_discrete"]["ks"] == [1, 3] and got == [pytest.approx(1 / 3)]  # was 2/6
    with pytest.raises(RewardConfigError, match="partial credit must be one of"):
        sweep_rewards([1], ["stepwise"])


def test_partial_discrete_default_levels_are_the_paper_sweeps():
    from recode_lib.rewards.strict import PAPER_SWEEP_KS
    from recode_lib.runner.pipeline import parse_list

    paper = _sweep_profiles()["paper"]
    assert list(PAPER_SWEEP_KS) == parse_list(paper["KS"], int) == [1, 2, 3, 4]
    runner = SandboxRunner(workers=1)
    got = get_reward("partial_discrete", runner=runner)(["p"], [SMALL_ONLY], problem=[P_SIZED])
    assert got == [pytest.approx(2 / 5)]  # R_1, R_2 of R_1..R_4, R_inf (was 2/6 over k = 1..5)


def test_math_answer_and_gated_math():
    good = "<think>\n7 * 3 + 4 = 25\n</think>\nThe answer is \\boxed{25}."
    bad = "<think>\nguess\n</think>\n\\boxed{24}"
    nobox = "It is 25."
    fn = get_reward("math_answer")
    assert fn(["q"] * 3, [good, chat(bad), nobox], answer=["025"] * 3) == [1.0, 0.0, 1.0]
    gated = get_reward("math_gated", scorer=FixedScorer(0.0))
    assert gated(["q"] * 3, [good, bad, nobox], answer=["025"] * 3) == [2.5, 1.0, 1.5]
    with pytest.raises(ValueError, match="row 0 .*no gold answer"):
        fn(["q"], [good], answer=[None], problem_id=["aime24/1"])


def test_math_format_additive_and_outcome_only():
    from recode_lib.rewards import (
        math_additive_reward,
        math_format_reward,
        math_outcome_only_reward,
    )

    good = "<think>\n7 * 3 + 4 = 25\n</think>\nThe answer is \\boxed{25}."
    two = "<think>\nx\n</think>\n\\boxed{25} or \\boxed{24}"
    assert math_format_reward(["q"] * 3, [good, two, "25"]) == [1.0, 0.0, 0.0]
    ans = {"answer": ["25"] * 2}
    assert math_outcome_only_reward()(
        ["q"] * 2, [good, "<think>\ny\n</think>\\boxed{3}"], **ans
    ) == [2.0, 1.0]
    add = math_additive_reward(scorer=FixedScorer(0.0))
    assert add(["q"] * 2, [good, "<think>\ny\n</think>\\boxed{3}"], **ans) == [2.5, 1.5]


def test_the_missing_rm_path_error_says_how_to_pass_it():
    from recode_lib.process_reward.placement import RMLoadError, load_checked_scorer

    with pytest.raises(RMLoadError, match=r"--set rm_path=DIR.*recode grpo") as err:
        load_checked_scorer(None)
    assert "02_reward_model/rm" in str(err.value) and "\n" not in str(err.value)
