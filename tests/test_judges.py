"""LLM judges: tolerant parsing, failures counted, both-order pairwise; rm_eval table."""

from __future__ import annotations

import pytest

from crpl_helpers import ScriptedGenerator
from recode_lib.process_reward.lcbrb.judges import ConsistencyJudge, PairwiseJudge, PointwiseJudge, parse_choice, \
    parse_score, parse_yes_no
from recode_lib.process_reward.lcbrb.scoring import evaluate_methods, length_method, pairwise_method, pointwise_method


@pytest.mark.parametrize("text,want", [("Score: 7", 7.0), ("I give it 8/10.", 8.0),
                                       ("**6**", 6.0), ("Rating - 6.5", 6.5), ("9", 9.0),
                                       ("Score: 15", 10.0), ("great job", None), ("", None)])
def test_parse_score(text, want):
    assert parse_score(text) == want


@pytest.mark.parametrize("text,want", [("Answer: A", "A"), ("[[B]]", "B"), ("B", "B"),
                                       ("Response A is better.", "A"),
                                       ("Response A and Response B", None), ("dunno", None)])
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
    cj = ConsistencyJudge(ScriptedGenerator(lambda m, j: "Answer: no" if "SLIP" in
                                            m[1]["content"] else "Answer: yes"))
    assert cj.check(["p", "p"], ["fine", "SLIP"]) == [True, False]


def test_evaluate_methods_table():
    pairs = [{"id": str(i), "prompt": "p", "chosen": "GOOD", "rejected": "BAD",
              "pair_type": t} for i, t in enumerate(["a", "a", "b", "b"])]
    gen = ScriptedGenerator(lambda m, j: "Score: 8" if "GOOD" in m[1]["content"] else
                            ("Score: 2" if "BAD" in m[1]["content"] else "?"))
    pj = PairwiseJudge(ScriptedGenerator(lambda m, j: "no idea"))
    rows = evaluate_methods(pairs, {"pointwise": pointwise_method(PointwiseJudge(gen)),
                                    "pairwise": pairwise_method(pj)}, n_boot=200)
    main = {r["method"]: r for r in rows if r["pair_type"] == "all"}
    assert main["pointwise"]["accuracy"] == 1.0 and main["pointwise"]["parse_failures"] == 0
    assert main["pairwise"]["accuracy"] == 0.5 and main["pairwise"]["ties"] == 4
    assert main["pairwise"]["parse_failures"] == 8
    assert main["pointwise"]["ci_low"] <= 1.0 <= main["pointwise"]["ci_high"]
    assert {(r["method"], r["pair_type"]) for r in rows} >= {("pointwise", "a"), ("pairwise", "b")}
    with pytest.raises(ValueError, match="chosen"):
        evaluate_methods([{"prompt": "p", "rejected": "r"}], {})


def test_length_baseline_prefers_the_longer_or_shorter_trace_and_ties_on_equal_length():
    pairs = [{"prompt": "p", "chosen": "a much longer trace", "rejected": "short"},
             {"prompt": "p", "chosen": "tiny", "rejected": "a longer rejected trace"},
             {"prompt": "p", "chosen": "same", "rejected": "size"}]
    rows = evaluate_methods(pairs, {"longer": length_method("longer"),
                                    "shorter": length_method("shorter")}, n_boot=50)
    acc = {r["method"]: (r["accuracy"], r["ties"]) for r in rows}
    assert acc == {"longer": (0.5, 1), "shorter": (0.5, 1)}
    out = length_method("longer")(["p"] * 3, [p["chosen"] for p in pairs],
                                  [p["rejected"] for p in pairs])
    assert out == [1.0, 0.0, 0.5]
    with pytest.raises(ValueError, match="prefer"):
        length_method("random")
