"""CRPL synthesis: rewrite checks, rule rewriter, rewrites bookkeeping, pairs, split, ablation."""

from __future__ import annotations

import pytest
from crpl_helpers import CODE, REASONING, ScriptedGenerator, trace

from recode_lib.core.prompts import format_response
from recode_lib.process_reward.crpl import (
    CRPLConfig,
    GeneratorSpec,
    check_rewrite,
    synthesis_report,
    synthesize_rewrites,
)
from recode_lib.process_reward.pairs import PAIR_TYPES, build_pairs, heldout_pairs, split_problems
from recode_lib.process_reward.rewrite_prompts import DIMENSIONS, rewrite_messages, rule_rewrite


def test_check_rewrite_reasons():
    base = trace()
    assert check_rewrite(base, "   ")[0] == "empty"
    assert check_rewrite(base, "just prose, no code")[0] == "format"
    assert check_rewrite(base, format_response(REASONING + "  ", CODE))[0] == "unchanged"
    renamed = format_response("Different reasoning.", "def plus(a, b):\n    return a + b")
    assert check_rewrite(base, renamed)[0] == "changes_problem"
    arity = format_response("Different reasoning.", "def add(a, b, c):\n    return a + b")
    assert check_rewrite(base, arity)[0] == "changes_problem"
    ok, parsed = check_rewrite(base, format_response("Add with +.", CODE))
    assert ok == "" and parsed.reasoning == "Add with +."


def test_rule_rewriter_labels_and_changes():
    opt = rule_rewrite(REASONING, "logical_coherence", "optimize")
    assert opt[1] == "remove_redundancy" and opt[0].count("O(1)") == 1
    fact = rule_rewrite(REASONING, "factual_correctness", "degrade")
    assert fact[1] == "perturb_fact" and fact[0] != REASONING
    assert rule_rewrite(REASONING, "logical_rigor", "degrade")[1] == "drop_step"
    assert rule_rewrite("a single step", "logical_rigor", "degrade") is None
    assert rule_rewrite("no repeats here. none.", "logical_rigor", "optimize") is None
    with pytest.raises(ValueError, match="dimension"):
        rewrite_messages("p", "r", "style", "optimize")


def _cfg(**kw):
    return CRPLConfig(
        generators=[GeneratorSpec("g1", "scripted", n_candidates=2)], batch_size=4, **kw
    )


def test_rewrites_counted_fallback_and_resume(tmp_path):
    # first candidate breaks the format, the second is good only for "optimize" requests
    def reply(messages, j):
        if j == 0:
            return "no code at all"
        if "improve" in messages[1]["content"]:
            return format_response("Add the two numbers with + and return.", CODE)
        return format_response(REASONING, CODE)  # unchanged -> rejected

    gen = ScriptedGenerator(reply)
    traces = [trace(), trace("p/2#s0", "p/2"), trace("p/3#s0", "p/3", usable=False)]
    store = tmp_path / "rw.jsonl"
    rws = synthesize_rewrites(traces, _cfg(), store, generators={"g1": gen})
    assert len(rws) == 2 * len(DIMENSIONS) * 2  # unusable trace skipped
    opt = [r for r in rws if r["direction"] == "optimize"]
    deg = [r for r in rws if r["direction"] == "degrade"]
    assert all(r["accepted"] and r["source"] == "model" for r in opt)
    assert all(r["candidate_reasons"] == ["format"] for r in opt)
    # what the generator wrote is kept with each rejection, for inspection
    assert all(
        r["rejected_candidates"] == [{"reason": "format", "text": "no code at all"}] for r in opt
    )
    # degrade: both model candidates fail, the rule fallback is used and labelled
    assert all(r["candidate_reasons"][:2] == ["format", "unchanged"] for r in deg)
    assert all(r["source"] == "rule" and r["transformation"]["op"].startswith("rule:") for r in deg)
    rep = synthesis_report(traces, rws)["rewrites"]
    assert rep["candidate_rejections_by_reason"] == {"format": 12, "unchanged": 6}
    calls = gen.calls
    again = synthesize_rewrites(traces, _cfg(), store, generators={"g1": gen})
    assert gen.calls == calls and len(again) == len(rws)  # resumed: nothing redone


def test_rewrites_without_fallback_record_rejection(tmp_path):
    gen = ScriptedGenerator(lambda m, j: "")
    rws = synthesize_rewrites(
        [trace()], _cfg(rule_fallback=False), tmp_path / "rw.jsonl", generators={"g1": gen}
    )
    assert len(rws) == 6 and not any(r["accepted"] for r in rws)
    assert {r["reason"] for r in rws} == {"empty"}


def test_rewrites_with_tiny_model_are_all_accounted(tmp_path, tiny_model_dir):
    spec = GeneratorSpec("tiny", str(tiny_model_dir), max_new_tokens=8, n_candidates=1)
    cfg = CRPLConfig(generators=[spec], dimensions=("logical_rigor",), batch_size=4)
    rws = synthesize_rewrites([trace()], cfg, tmp_path / "rw.jsonl")
    assert len(rws) == 2
    for r in rws:  # gibberish never passes; the rule fallback decides
        assert r["candidate_reasons"][0] in ("empty", "format")
        assert r["accepted"] == (r["source"] == "rule")


def _rewrites_for(traces, gen="g1"):
    cfg = CRPLConfig(generators=[GeneratorSpec(gen, "rules")])
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        return synthesize_rewrites(traces, cfg, f"{d}/rw.jsonl")


def test_pairs_types_dedup_and_counts():
    traces = [trace(f"p/{i}#s0", f"p/{i}") for i in range(5)]
    rws = _rewrites_for(traces)
    pairs, rep = build_pairs(traces, rws, val_fraction=0.4, seed=1)
    assert {p["pair_type"] for p in pairs} == set(PAIR_TYPES)
    # the rule optimizer gives the same t+ for every dimension: later ones are duplicates
    assert rep["rejected_by_reason"]["duplicate"] > 0
    assert all(p["chosen"] != p["rejected"] for p in pairs)
    keys = {(p["prompt"], p["chosen"], p["rejected"]) for p in pairs}
    assert len(keys) == len(pairs)
    assert sum(sum(v.values()) for v in rep["by_type"].values()) == len(pairs)
    # split is by problem: no problem appears in both splits
    splits = {}
    for p in pairs:
        splits.setdefault(p["problem_id"], set()).add(p["split"])
    assert all(len(s) == 1 for s in splits.values())
    assert rep["problems"] == {"train": 3, "val": 2}


def test_identical_sides_and_missing_side_are_counted():
    t = trace(reasoning="single step without rules")  # no rule applies at all
    pairs, rep = build_pairs([t], _rewrites_for([t]))
    assert pairs == [] and rep["rejected_by_reason"] == {"missing_side": 9}
    rw = [
        {
            "trace_id": t["id"],
            "dimension": "logical_rigor",
            "direction": d,
            "generator": "g",
            "accepted": True,
            "source": "model",
            "transformation": {"op": "llm"},
            "trace": t["trace"],
            "id": d,
        }
        for d in ("optimize", "degrade")
    ]
    pairs, rep = build_pairs([t], rw)
    assert pairs == [] and rep["rejected_by_reason"]["identical_sides"] == 3


def test_split_problems_deterministic_and_nonempty():
    ids = [f"p/{i}" for i in range(10)]
    a, b = split_problems(ids, 0.2, seed=3), split_problems(list(reversed(ids)), 0.2, seed=3)
    assert a == b and sum(v == "val" for v in a.values()) == 2
    assert sum(v == "val" for v in split_problems(ids[:2], 0.1).values()) == 1
    with pytest.raises(ValueError):
        split_problems(ids, 1.0)


def test_single_vs_cross_generator_ablation():
    traces = [trace(f"p/{i}#s0", f"p/{i}") for i in range(6)]
    rws = _rewrites_for(traces, "g1") + _rewrites_for(traces, "g2")
    single, rep1 = build_pairs(traces, rws, mode="single", generator="g2")
    assert rep1["generator"] == "g2"
    assert all(p["chosen_meta"]["generator"] in (None, "g2") for p in single)
    cross, rep2 = build_pairs(traces, rws, mode="cross", seed=0)
    gens = {m["generator"] for p in cross for m in (p["chosen_meta"], p["rejected_meta"])}
    assert gens - {None} == {"g1", "g2"}
    with pytest.raises(ValueError, match="no rewrites"):
        build_pairs(traces, rws, mode="single", generator="nope")


def test_the_ablation_held_out_set_is_trained_on_by_neither_rm():
    traces = [trace(f"p/{i}#s0", f"p/{i}") for i in range(6)]
    rws = _rewrites_for(traces, "g1") + _rewrites_for(traces, "g2")
    single, _ = build_pairs(traces, rws, mode="single", generator="g1", val_fraction=0.34, seed=2)
    cross, _ = build_pairs(traces, rws, mode="cross", val_fraction=0.34, seed=2)
    held, rep = heldout_pairs({"single": single, "cross": cross})
    trained = {p["problem_id"] for p in single + cross if p["split"] == "train"}
    assert held and not {p["problem_id"] for p in held} & trained
    assert rep["problems"] == 2 and rep["pairs"] == len(held)
    # every val pair of either set is in the held-out set, each (prompt, chosen, rejected) once
    keys = {(p["prompt"], p["chosen"], p["rejected"]) for p in held}
    assert len(keys) == len(held)
    assert {
        (p["prompt"], p["chosen"], p["rejected"]) for p in single + cross if p["split"] == "val"
    } == keys
    assert all(set(p["heldout_from"]) <= {"single", "cross"} for p in held)
    # pair sets split differently would leak a training problem into the held-out set: refused
    other, _ = build_pairs(traces, rws, mode="cross", val_fraction=0.34, seed=5)
    with pytest.raises(ValueError, match="is held out in .* but trains"):
        heldout_pairs({"single": single, "cross": other})


def _problem(pid="t/add"):
    from recode_lib.data.schema import Problem

    return Problem(
        id=pid,
        source="t",
        prompt="Write add(a, b) returning the sum.",
        tests={"kind": "call", "fn_name": "add", "cases": [{"args": [1, 2], "expected": 3}]},
        entry_point="add",
        time_limit_s=5,
    )


def test_base_traces_with_sandbox_verdicts_and_resume(tmp_path):
    from recode_lib.process_reward.crpl import generate_base_traces

    answers = iter(
        [
            format_response("Use +.", CODE),
            format_response("Use -.", "def add(a, b):\n    return a - b"),
            "no code",
        ]
    )
    gen = ScriptedGenerator(lambda m, j: next(answers))
    problems = [_problem("t/a"), _problem("t/b"), _problem("t/c")]
    cfg = CRPLConfig(batch_size=2)
    out = generate_base_traces(problems, cfg, tmp_path / "tr.jsonl", generator=gen)
    assert [t["verdict"]["outcome"] for t in out] == [
        "correct",
        "correctness_failure",
        "format_error",
    ]
    assert [t["usable"] for t in out] == [True, True, False] and out[2]["reason"]
    assert out[0]["trace"].startswith("<think>") and out[0]["problem_id"] == "t/a"
    again = generate_base_traces(problems, cfg, tmp_path / "tr.jsonl", generator=gen)
    assert gen.calls == 3 and len(again) == 3


def test_trailing_explanation_becomes_reasoning_only_when_enabled(tmp_path):
    from recode_lib.data.schema import Problem
    from recode_lib.generation.base import Completion
    from recode_lib.process_reward.crpl import CRPLConfig, generate_base_traces

    class Scripted:
        def generate(self, prompts, sampling):
            text = "def f(x):\n    return x + 1\n```\nThis adds one to x."
            return [[Completion(text=text, n_tokens=12, finish_reason="stop")] for _ in prompts]

    prob = Problem(
        id="t/1",
        source="t",
        prompt="Write f.",
        entry_point="f",
        tests={"kind": "call", "fn_name": "f", "cases": [{"args": [1], "expected": 2}]},
    )

    def fake_exec(recs):
        return [
            {"id": r["id"], "status": "passed", "outcome": "correct", "passed": 1, "total": 1}
            for r in recs
        ]

    off = generate_base_traces(
        [prob], CRPLConfig(), tmp_path / "a.jsonl", generator=Scripted(), execute=fake_exec
    )
    assert not off[0]["usable"] and off[0]["reason"] == "no reasoning before the code"
    on = generate_base_traces(
        [prob],
        CRPLConfig(trailing_reasoning=True),
        tmp_path / "b.jsonl",
        generator=Scripted(),
        execute=fake_exec,
    )
    assert on[0]["usable"] and on[0]["reasoning_from"] == "explanation"
    assert on[0]["trace"].startswith("<think>\nThis adds one to x.\n</think>\n```python\ndef f")


def test_a_trace_whose_reasoning_holds_a_code_block_is_unusable_with_its_reason(tmp_path):
    from recode_lib.process_reward.crpl import generate_base_traces

    text = (
        "<think>Try:\n```python\nadd = lambda a, b: a + b\n```\nthen a def.</think>\n"
        "```python\n" + CODE + "\n```"
    )
    gen = ScriptedGenerator(lambda m, j: text)
    out = generate_base_traces([_problem()], CRPLConfig(), tmp_path / "tr.jsonl", generator=gen)
    assert not out[0]["usable"] and out[0]["trace"] is None
    assert "round-trip" in out[0]["reason"]


def test_accepted_rewrites_keep_the_base_code_so_pairs_differ_in_reasoning_only(tmp_path):
    other = "def add(a, b):\n    return b + a + 0"
    gen = ScriptedGenerator(lambda m, j: format_response("Sum them, order does not matter.", other))
    keep = synthesize_rewrites([trace()], _cfg(), tmp_path / "a.jsonl", generators={"g1": gen})
    assert all(
        r["accepted"]
        and r["code"] == CODE
        and r["generator_code"] == other
        and r["trace"].endswith(CODE + "\n```")
        for r in keep
    )
    use = synthesize_rewrites(
        [trace()], _cfg(keep_base_code=False), tmp_path / "b.jsonl", generators={"g1": gen}
    )
    assert all(r["code"] == other for r in use)


def test_the_ablation_compares_equal_numbers_of_training_pairs():
    """g1 (the single generator) has rewrites for 3 of 6 traces, g2 for all: the cross set has
    twice the training pairs; cut, both RMs learn from the same number, pair types in proportion."""
    from collections import Counter

    from recode_lib.process_reward.pairs import equal_training_pairs

    traces = [trace(f"p/{i}#s0", f"p/{i}") for i in range(6)]
    g1 = [
        r if r["trace_id"] in {"p/0#s0", "p/1#s0", "p/2#s0"} else {**r, "accepted": None}
        for r in _rewrites_for(traces, "g1")
    ]
    rws = g1 + _rewrites_for(traces, "g2")
    single, _ = build_pairs(traces, rws, mode="single", generator="g1", val_fraction=0.34, seed=2)
    cross, _ = build_pairs(traces, rws, mode="cross", val_fraction=0.34, seed=2)
    n_train = lambda ps: sum(p["split"] == "train" for p in ps)  # noqa: E731
    assert n_train(cross) > n_train(single) > 0  # unequal before
    s2, c2, rep = equal_training_pairs(single, cross, seed=0)
    assert n_train(s2) == n_train(c2) == n_train(single) == rep["train_pairs"]
    assert rep["cut"] == "cross" and rep["train_before"] == {
        "single": n_train(single),
        "cross": n_train(cross),
    }
    assert s2 == single  # the main RM's pairs untouched
    assert [p for p in c2 if p["split"] == "val"] == [p for p in cross if p["split"] == "val"]
    types = Counter(p["pair_type"] for p in c2 if p["split"] == "train")
    assert set(types) == {p["pair_type"] for p in cross if p["split"] == "train"}
    assert equal_training_pairs(single, cross, seed=0)[1] == c2  # seeded
    assert equal_training_pairs(single, single)[2]["cut"] is None


def test_crpl_pairs_come_from_a_training_source_not_an_evaluation_set():
    from recode_lib.process_reward.crpl import check_training_source
    from recode_lib.runner.pipeline import load_profile

    with pytest.raises(ValueError, match=r"'mbppplus'.*\['mbppplus', 'mbppplus_base'\].*'mbpp'"):
        check_training_source("mbppplus", "humaneval,mbppplus_base,mbppplus")
    with pytest.raises(ValueError, match="humanevalplus"):
        check_training_source("humaneval", ["humanevalplus"])
    rec = check_training_source("mbpp_train", "humaneval,mbppplus_base,mbppplus")
    assert rec == {
        "source": "mbpp_train",
        "family": "mbpp_train",
        "held_out": ["humaneval", "mbppplus_base", "mbppplus"],
    }
    for profile in ("paper", "smoke", "laptop"):
        p = load_profile(profile)
        held = p["01_crpl_synthesis"]["HELD_OUT_BENCHMARKS"].split(",")
        assert set(p["05_codegen_eval"]["BENCHMARKS"].split(",")) <= set(held), profile
        check_training_source(p["01_crpl_synthesis"]["SOURCE"], held)
    assert (
        load_profile("paper")["01_crpl_synthesis"]["SOURCE"]
        == load_profile("paper")["04_cg_grpo"]["BENCHMARK"]
    )


def test_mbpp_train_holds_no_task_of_mbppplus(shared_data_dir):
    from recode_lib.data import load_benchmark
    from recode_lib.data.mbpp import mbppplus_task_ids

    train = load_benchmark("mbpp_train")
    plus = mbppplus_task_ids()
    ids = {p.metadata["task_id"] for p in train}
    assert len(load_benchmark("mbpp", split="train")) == 374 and len(plus) == 378
    assert len(ids & set(range(601, 975)) & plus) == 0 and len(train) == 374 - len(
        plus & set(range(601, 975))
    )
    assert all(601 <= i <= 974 for i in ids)


def test_a_bigcodebench_trace_is_judged_on_the_record_evaluation_builds(tmp_path, monkeypatch):
    """CRPL's judge (judge_and_store, through generate_base_traces) sends the sandbox the same
    record as evaluation's row builder for the same response: a BigCodeBench problem keeps its
    extras ("requires": its libraries; "python": BigCodeBench's interpreter, here a fake built
    env) and its program its prelude (the task's imports), so a trace is not judged by an
    interpreter that lacks them, nor without the imports evaluation gives the answer."""
    import sys

    from recode_lib.core import bench_env
    from recode_lib.data.schema import Problem
    from recode_lib.evaluation.episodes import FinishedEpisode
    from recode_lib.evaluation.rows import episode_row
    from recode_lib.process_reward.crpl import generate_base_traces

    env = tmp_path / "bcb-env"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to(sys.executable)
    (env / bench_env.MARKER).write_text("numpy==0 (fake)\n")
    monkeypatch.setenv(bench_env.ENV_VAR, str(env))
    code = "def task_func(xs):\n    return float(np.mean(xs))"
    prob = Problem(
        id="bigcodebench/BigCodeBench/7",
        source="bigcodebench",
        prompt="Return the mean of xs.",
        entry_point="task_func",
        tests={"kind": "script", "script": "assert task_func([1, 3]) == 2.0\n"},
        time_limit_s=60.0,
        memory_mb=2048,
        metadata={"libs": ["numpy"], "prelude": "import numpy as np"},
    )
    response = format_response("Use numpy's mean.", code)
    sent = []

    def fake_exec(records):
        sent.extend(records)
        return [
            {"id": r["id"], "status": "passed", "outcome": "correct", "passed": 1, "total": 1}
            for r in records
        ]

    gen = ScriptedGenerator(lambda m, j: response)
    (traced,) = generate_base_traces(
        [prob], CRPLConfig(), tmp_path / "t.jsonl", generator=gen, execute=fake_exec
    )
    _, evaluated = episode_row(
        prob, FinishedEpisode(prob, 0, "single", response, n_tokens=9, finish_reason="stop")
    )
    (judged,) = sent
    assert {**judged, "id": None} == {**evaluated, "id": None}
    assert judged["code"].startswith("import numpy as np\n") and code in judged["code"]
    assert judged["requires"] == ["numpy"] and judged["python"] == str(env / "bin" / "python")
    assert traced["code"] == code and traced["verdict"]["outcome"] == "correct"
    assert "tests" not in traced
