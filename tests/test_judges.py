"""LLM judges: tolerant parsing, failures counted, both-order pairwise; rm_eval table."""

from __future__ import annotations

import pytest
from crpl_helpers import ScriptedGenerator

from recode_lib.process_reward.lcbrb.judges import (
    ConsistencyJudge,
    PairwiseJudge,
    PointwiseJudge,
    parse_choice,
    parse_score,
    parse_yes_no,
)
from recode_lib.process_reward.lcbrb.scoring import (
    evaluate_methods,
    length_method,
    pairwise_method,
    pointwise_method,
)


@pytest.mark.parametrize(
    "text,want",
    [
        ("Score: 7", 7.0),
        ("I give it 8/10.", 8.0),
        ("**6**", 6.0),
        ("Rating - 6.5", 6.5),
        ("9", 9.0),
        ("Score: 15", 10.0),
        ("great job", None),
        ("", None),
    ],
)
def test_parse_score(text, want):
    assert parse_score(text) == want


@pytest.mark.parametrize(
    "text,want",
    [
        ("Answer: A", "A"),
        ("[[B]]", "B"),
        ("B", "B"),
        ("Response A is better.", "A"),
        ("Response A and Response B", None),
        ("dunno", None),
    ],
)
def test_parse_choice(text, want):
    assert parse_choice(text) == want


def test_parse_yes_no():
    assert parse_yes_no("Answer: yes") is True and parse_yes_no("No, it is not.") is False
    assert parse_yes_no("maybe") is None


def test_pointwise_counts_parse_failures():
    gen = ScriptedGenerator(lambda m, j: "Score: 9" if "GOOD" in m[1]["content"] else "hmm")
    judge = PointwiseJudge(gen)
    assert judge.score(["p", "p"], ["GOOD trace", "other"]) == [9.0, None]
    assert judge.parse_failures == 1 and judge.failures == ["hmm"]


def test_pairwise_both_orders_position_bias_is_a_tie():
    always_a = PairwiseJudge(ScriptedGenerator(lambda m, j: "Answer: A"))
    assert always_a.compare(["p"], ["x"], ["y"]) == [0.5]

    def content_aware(m, j):
        text = m[1]["content"]
        return "Answer: A" if text.index("GOOD") < text.index("BAD") else "Answer: B"

    judge = PairwiseJudge(ScriptedGenerator(content_aware))
    assert judge.compare(["p", "p"], ["GOOD", "BAD"], ["BAD", "GOOD"]) == [1.0, 0.0]


def test_consistency_judge():
    cj = ConsistencyJudge(
        ScriptedGenerator(lambda m, j: "Answer: no" if "SLIP" in m[1]["content"] else "Answer: yes")
    )
    assert cj.check(["p", "p"], ["fine", "SLIP"]) == [True, False]


def test_evaluate_methods_table():
    pairs = [
        {"id": str(i), "prompt": "p", "chosen": "GOOD", "rejected": "BAD", "pair_type": t}
        for i, t in enumerate(["a", "a", "b", "b"])
    ]
    gen = ScriptedGenerator(
        lambda m, j: (
            "Score: 8"
            if "GOOD" in m[1]["content"]
            else ("Score: 2" if "BAD" in m[1]["content"] else "?")
        )
    )
    pj = PairwiseJudge(ScriptedGenerator(lambda m, j: "no idea"))
    rows = evaluate_methods(
        pairs,
        {"pointwise": pointwise_method(PointwiseJudge(gen)), "pairwise": pairwise_method(pj)},
        n_boot=200,
    )
    main = {r["method"]: r for r in rows if r["pair_type"] == "all"}
    assert main["pointwise"]["accuracy"] == 1.0 and main["pointwise"]["parse_failures"] == 0
    assert main["pairwise"]["accuracy"] == 0.0 and main["pairwise"]["ties"] == 4  # ties count 0
    assert main["pairwise"]["parse_failures"] == 8
    assert main["pointwise"]["ci_low"] <= 1.0 <= main["pointwise"]["ci_high"]
    assert {(r["method"], r["pair_type"]) for r in rows} >= {("pointwise", "a"), ("pairwise", "b")}
    with pytest.raises(ValueError, match="chosen"):
        evaluate_methods([{"prompt": "p", "rejected": "r"}], {})


def test_length_baseline_prefers_the_longer_or_shorter_trace_and_ties_on_equal_length():
    pairs = [
        {"prompt": "p", "chosen": "a much longer trace", "rejected": "short"},
        {"prompt": "p", "chosen": "tiny", "rejected": "a longer rejected trace"},
        {"prompt": "p", "chosen": "same", "rejected": "size"},
    ]
    rows = evaluate_methods(
        pairs, {"longer": length_method("longer"), "shorter": length_method("shorter")}, n_boot=50
    )
    acc = {r["method"]: (r["accuracy"], r["ties"]) for r in rows}
    assert acc == {"longer": (1 / 3, 1), "shorter": (1 / 3, 1)}  # the tie counts 0
    out = length_method("longer")(
        ["p"] * 3, [p["chosen"] for p in pairs], [p["rejected"] for p in pairs]
    )
    assert out == [1.0, 0.0, 0.5]
    with pytest.raises(ValueError, match="prefer"):
        length_method("random")


def test_every_method_scores_a_tie_the_same_way():
    """One rule (recode_lib.metrics.preference_outcome): a pair counts only when the better trace
    is scored strictly higher; a tie counts 0 for the RM, both judges and the length baseline."""
    from recode_lib.metrics import preference_outcome
    from recode_lib.process_reward.lcbrb.scoring import rm_method
    from recode_lib.process_reward.model import pairwise_accuracy

    class Scorer:  # scores = the number in the trace; a tie on "5" vs "5"
        def score(self, prompts, traces):
            return [float(t.split()[-1]) for t in traces]

    pairs = [
        {"id": "1", "prompt": "p", "chosen": "aa 9", "rejected": "bb 1"},
        {"id": "2", "prompt": "p", "chosen": "cc 5", "rejected": "dd 5"},
        {"id": "3", "prompt": "p", "chosen": "ee 2", "rejected": "ff 7"},
    ]
    scores = {
        "aa 9": "Score: 9",
        "bb 1": "Score: 1",
        "cc 5": "Score: 5",
        "dd 5": "Score: 5",
        "ee 2": "Score: 2",
        "ff 7": "Score: 7",
    }

    def point(m, j):
        return next(v for k, v in scores.items() if k in m[1]["content"])

    def pair_vote(m, j):  # prefers the higher number; undecided on equal numbers
        text = m[1]["content"]
        a, b = (next(k for k in scores if k in text.split("Response B:")[i]) for i in (0, 1))
        a, b = float(a.split()[-1]), float(b.split()[-1])
        return "Answer: A" if a > b else ("Answer: B" if b > a else "no idea")

    methods = {
        "rm": rm_method(Scorer()),
        "pointwise": pointwise_method(PointwiseJudge(ScriptedGenerator(point))),
        "pairwise": pairwise_method(PairwiseJudge(ScriptedGenerator(pair_vote))),
        "longer": length_method("longer"),
    }  # all traces have the same length
    rows = {r["method"]: r for r in evaluate_methods(pairs, methods, n_boot=50)}
    for name in ("rm", "pointwise", "pairwise"):
        assert (rows[name]["accuracy"], rows[name]["ties"]) == (pytest.approx(1 / 3), 1), name
    assert (rows["longer"]["accuracy"], rows["longer"]["ties"]) == (0.0, 3)
    acc = pairwise_accuracy(Scorer(), pairs)  # notebook 02's RM accuracy: same rule
    assert acc["overall"] == pytest.approx(1 / 3) and acc["ties"] == 1
    assert (
        acc["correct"]
        == [preference_outcome(9, 1), preference_outcome(5, 5), preference_outcome(2, 7)]
        == [1, 0, 0]
    )
    assert preference_outcome(None, 3) == 0


# --- ties as 0 and as 0.5; the judge roles (consistency filter vs baselines) and their fallback --


def test_ties_are_reported_as_zero_and_as_a_half():
    """Votes 1, tie, tie, 0: accuracy 0.25 with ties as 0 (the RM's strict >), 0.5 with ties
    as 0.5 (what guessing on the ties would score)."""
    from recode_lib.metrics import TIE
    from recode_lib.process_reward.lcbrb.scoring import tie_half

    def votes(prompts, chosen, rejected):
        return [1.0, TIE, None, 0.0]

    pairs = [{"id": str(i), "prompt": "p", "chosen": "a", "rejected": "b"} for i in range(4)]
    row = evaluate_methods(pairs, {"m": votes}, n_boot=50, by_type=False)[0]
    assert row["accuracy"] == 0.25 and row["accuracy_ties_half"] == 0.5 and row["ties"] == 2
    assert row["ci_low_ties_half"] <= 0.5 <= row["ci_high_ties_half"]
    assert [tie_half(v) for v in (1.0, TIE, None, 0.0)] == [1.0, 0.5, 0.5, 0.0]


def test_the_headline_counts_a_tie_as_half_after_rewardbench_with_strict_beside():
    """LCB-RB's headline tie rule: 0.5 (RewardBench's rule for generative judges; its RMs'
    strict `>` gives the same on continuous scores), the strict rule in its own column."""
    from recode_lib.metrics import TIE
    from recode_lib.process_reward.lcbrb.scoring import TIE_RULE

    def judge(prompts, chosen, rejected):  # an integer-scoring judge: ties often
        return [1.0, TIE, TIE, TIE]

    def rm(prompts, chosen, rejected):  # a continuous RM: no tie
        return [1.0, 1.0, 0.0, 0.0]

    pairs = [{"id": str(i), "prompt": "p", "chosen": "a", "rejected": "b"} for i in range(4)]
    rows = {
        r["method"]: r
        for r in evaluate_methods(pairs, {"judge": judge, "rm": rm}, n_boot=50, by_type=False)
    }
    assert TIE_RULE["headline"] == "half" and "run_generative.py" in TIE_RULE["anchor"]
    assert rows["judge"]["accuracy_headline"] == 0.625 and rows["judge"]["accuracy"] == 0.25
    assert rows["rm"]["accuracy_headline"] == rows["rm"]["accuracy"] == 0.5  # rules agree
    for r in rows.values():
        assert r["tie_rule"] == "half"
        assert r["accuracy_headline"] == r[TIE_RULE["headline_key"]]
        assert r["ci_low_headline"] <= r["accuracy_headline"] <= r["ci_high_headline"]


def _roles(**kw):
    from recode_lib.process_reward.lcbrb.judge_roles import JudgeRoles

    base = dict(
        open_model="open-32b",
        open_backend="vllm",
        consistency_model="gpt-4o",
        base_url="https://api.openai.com/v1",
        api_key_env="RECODE_TEST_KEY",
        api_judges="gpt-4-turbo",
        classifiers="Skywork/Skywork-Reward-Llama-3.1-8B-v0.2",
    )
    return JudgeRoles(**{**base, **kw})


def test_the_consistency_judge_is_the_endpoint_model_when_it_is_configured(monkeypatch):
    monkeypatch.setenv("RECODE_TEST_KEY", "sk-test")
    roles = _roles()
    c = roles.consistency()
    assert (c.requested, c.used, c.backend, c.fallback) == ("gpt-4o", "gpt-4o", "openai", None)
    gen = c.generator(open_generator=object())
    assert type(gen).__name__ == "OpenAIGenerator" and gen.api_key == "sk-test"
    assert gen.url == "https://api.openai.com/v1/chat/completions"
    [api] = roles.baseline_api()
    assert api.used == "gpt-4-turbo" and api.backend == "openai"
    assert not roles.any_fallback()


@pytest.mark.parametrize(
    "kw, missing",
    [({"base_url": ""}, "JUDGE_BASE_URL is empty"), ({}, r"\$RECODE_TEST_KEY is not set")],
)
def test_a_missing_endpoint_or_key_is_named(monkeypatch, kw, missing):
    from recode_lib.process_reward.lcbrb.judge_roles import JudgeEndpointError

    monkeypatch.delenv("RECODE_TEST_KEY", raising=False)
    with pytest.raises(JudgeEndpointError, match=f"consistency judge 'gpt-4o'.*{missing}"):
        _roles(**kw).consistency()


def test_a_local_endpoint_needs_no_key(monkeypatch):
    monkeypatch.delenv("RECODE_TEST_KEY", raising=False)
    assert _roles(base_url="http://localhost:8000/v1").consistency().backend == "openai"


def test_a_fallback_to_the_open_judge_is_recorded_and_shown_in_every_row(monkeypatch):
    """What the dry run does (no network): the open model stands in, and the results say so."""
    from recode_lib.process_reward.lcbrb.judge_roles import annotate_rows

    monkeypatch.delenv("RECODE_TEST_KEY", raising=False)
    roles = _roles(base_url="", on_missing="fallback")
    c = roles.consistency()
    opened = object()
    assert c.used == "open-32b" and c.backend == "vllm" and c.generator(opened) is opened
    assert "JUDGE_BASE_URL is empty" in c.fallback and "open-32b" in c.fallback
    [api] = roles.baseline_api()
    assert api.requested == "gpt-4-turbo" and api.used == "open-32b" and api.fallback
    paths = roles.classifier_paths("/run")
    assert paths == {
        "rm:Skywork/Skywork-Reward-Llama-3.1-8B-v0.2": "Skywork/Skywork-Reward-Llama-3.1-8B-v0.2"
    }
    rec = roles.record()
    assert (
        rec["consistency"]["fallback"]
        and rec["open"]["used"] == "open-32b"
        and roles.any_fallback()
    )
    rows = annotate_rows(
        [
            {"method": m}
            for m in (
                "crpl_rm",
                "judge_pairwise",
                "pairwise:gpt-4-turbo",
                "rm:Skywork/Skywork-Reward-Llama-3.1-8B-v0.2",
            )
        ],
        roles,
        [
            "crpl_rm",
            "judge_pairwise",
            "pairwise:gpt-4-turbo",
            "rm:Skywork/Skywork-Reward-Llama-3.1-8B-v0.2",
        ],
    )
    assert [r["model_used"] for r in rows] == [
        None,
        "open-32b",
        "open-32b",
        "Skywork/Skywork-Reward-Llama-3.1-8B-v0.2",
    ]
    assert rows[2]["fallback"] and rows[1]["fallback"] is None


def test_a_run_classifier_entry_is_a_stand_in_under_the_run():
    roles = _roles(classifiers="run:02_reward_model/rm")
    assert roles.classifier_paths("/r") == {"rm:run:02_reward_model/rm": "/r/02_reward_model/rm"}
    assert "stand-in" in roles.record()["rm:run:02_reward_model/rm"]["fallback"]


def test_without_a_consistency_model_the_open_judge_filters():
    c = _roles(consistency_model="").consistency()
    assert c.used == "open-32b" and c.fallback is None


def test_profiles_separate_the_consistency_judge_from_the_baselines():
    from recode_lib.runner.dryrun import dryrun_profile
    from recode_lib.runner.pipeline import load_profile

    paper = load_profile("paper")["03_lcb_rb"]
    assert paper["CONSISTENCY_JUDGE_MODEL"].startswith("gpt-4o")
    assert paper["JUDGE_BASE_URL"].startswith("https://") and paper["ON_MISSING_JUDGE"] == "error"
    assert any("gpt-4-turbo" in m for m in paper["API_JUDGES"].split(","))
    assert (
        paper["BASELINE_CLASSIFIERS"] and paper["JUDGE_MODEL"] != paper["CONSISTENCY_JUDGE_MODEL"]
    )
    dry = dryrun_profile("/tiny")["03_lcb_rb"]  # no network: the open stand-in, recorded
    assert dry["JUDGE_BASE_URL"] == "" and dry["ON_MISSING_JUDGE"] == "fallback"
    assert dry["CONSISTENCY_JUDGE_MODEL"] == paper["CONSISTENCY_JUDGE_MODEL"]
    assert all(c.startswith("run:") for c in dry["BASELINE_CLASSIFIERS"].split(","))
