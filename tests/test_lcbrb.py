"""LCB-RB: candidate pairs, dual consistency filter, adjudication store, benchmark schema."""

from __future__ import annotations

import json

from crpl_helpers import ScriptedGenerator, trace

from recode_lib.process_reward.lcbrb.adjudication import (
    DecisionStore,
    adjudication_widget,
    auto_decide,
)
from recode_lib.process_reward.lcbrb.benchmark import (
    as_pairs,
    benchmark_rows,
    candidate_pairs,
    dual_consistency,
    load_benchmark_file,
    write_benchmark,
)
from recode_lib.process_reward.lcbrb.judges import ConsistencyJudge


def _traces():
    return [
        trace("lc/1#s0", "lc/1", reasoning="Use + to add.", outcome="correct"),
        trace(
            "lc/1#s1",
            "lc/1",
            reasoning="Subtract. SLIP",
            code="def add(a, b):\n    return a - b",
            outcome="correctness_failure",
        ),
        trace(
            "lc/1#s2",
            "lc/1",
            reasoning="Multiply.",
            code="def add(a, b):\n    return a * b",
            outcome="correctness_failure",
        ),
        trace("lc/2#s0", "lc/2", outcome="correct"),  # no failing trace
        trace("lc/3#s0", "lc/3", usable=False, outcome="format_error"),
    ]


def test_candidates_need_pass_and_fail():
    pairs, rep = candidate_pairs(_traces(), max_pairs_per_problem=5)
    assert len(pairs) == 2 and {p["problem_id"] for p in pairs} == {"lc/1"}
    assert rep["problems_without_pass_and_fail"] == 2 and rep["unusable_traces"] == 1
    capped, rep = candidate_pairs(_traces(), max_pairs_per_problem=1)
    assert len(capped) == 1 and rep["over_per_problem_cap"] == 1


def test_dual_consistency_filters_slips_and_resumes(tmp_path):
    pairs, _ = candidate_pairs(_traces(), max_pairs_per_problem=5)
    gen = ScriptedGenerator(
        lambda m, j: "Answer: no" if "SLIP" in m[1]["content"] else "Answer: yes"
    )
    store = tmp_path / "cons.jsonl"
    out = dual_consistency(pairs, ConsistencyJudge(gen), store)
    by_reason = {r["reason"] for r in out}
    assert by_reason == {"", "worse_inconsistent"}
    calls = gen.calls
    assert len(dual_consistency(pairs, ConsistencyJudge(gen), store)) == 2
    assert gen.calls == calls
    mute = ScriptedGenerator(lambda m, j: "???")
    rej = dual_consistency(pairs, ConsistencyJudge(mute), tmp_path / "c2.jsonl")
    assert {r["reason"] for r in rej} == {"judge_unparsable"}
    keep = dual_consistency(
        pairs, ConsistencyJudge(mute), tmp_path / "c3.jsonl", on_unparsable="keep"
    )
    assert all(r["status"] == "kept" and not r["consistency"]["verified"] for r in keep)


def test_adjudication_store_auto_and_widget(tmp_path):
    pairs, _ = candidate_pairs(_traces(), max_pairs_per_problem=5)
    store = DecisionStore(tmp_path / "adj.jsonl")
    store.record(pairs[0]["id"], "swap", "human")
    assert auto_decide(pairs, store, policy="pending") == 1
    again = DecisionStore(tmp_path / "adj.jsonl")  # resumed from disk
    d = again.decisions()
    assert d[pairs[0]["id"]]["decision"] == "swap" and d[pairs[1]["id"]]["by"] == "auto"
    assert auto_decide(pairs, again, policy="accept") == 1
    assert again.decisions()[pairs[1]["id"]]["decision"] == "accept"
    kept = [dict(p, consistency={}) for p in pairs]
    widget = adjudication_widget(kept, again)
    reject = widget.children[2].children[1]
    reject.click()  # the first undecided-by-human pair
    assert again.decisions()[pairs[1]["id"]] == {
        **again.decisions()[pairs[1]["id"]],
        "decision": "reject",
        "by": "human",
    }


def test_benchmark_rows_write_and_schema(tmp_path):
    pairs, _ = candidate_pairs(_traces(), max_pairs_per_problem=5)
    gen = ScriptedGenerator(lambda m, j: "Answer: yes")
    checked = dual_consistency(pairs, ConsistencyJudge(gen), tmp_path / "c.jsonl")
    decisions = {
        pairs[0]["id"]: {"decision": "swap", "by": "human"},
        pairs[1]["id"]: {"decision": "pending", "by": "auto"},
    }
    rows, counts = benchmark_rows(checked, decisions)
    assert counts == {"adjudication:swap:human": 1, "adjudication:pending:auto": 1}
    swapped = next(r for r in rows if r["id"] == pairs[0]["id"])
    assert swapped["better"] == pairs[0]["worse"] and swapped["human_verified"]
    assert swapped["verification"] == "human"
    assert next(r for r in rows if r["id"] == pairs[1]["id"])["verification"] == "consistency"
    path, meta = write_benchmark(rows, tmp_path, version="1")
    # one pending pair: the whole benchmark is labelled unverified, in its name and its meta
    assert path.name == "lcb_rb-v1-unverified.jsonl" and meta["n_pairs"] == 2
    assert meta["human_verified"] == 1 and meta["consistency_only"] == 1
    assert meta["verified"] is False and meta["verification"].startswith("unverified")
    assert (
        json.loads((tmp_path / "lcb_rb-v1-unverified.meta.json").read_text())["verified"] is False
    )
    assert [p["verification"] for p in as_pairs(rows, "human")] == ["human"]
    assert len(as_pairs(rows, "not_human")) == 1 and len(as_pairs(rows)) == 2
    # once a person has decided every pair, the verified name replaces the unverified one
    all_human = {p["id"]: {"decision": "accept", "by": "human"} for p in pairs}
    vpath, vmeta = write_benchmark(benchmark_rows(checked, all_human)[0], tmp_path, version="1")
    assert vpath.name == "lcb_rb-v1.jsonl" and vmeta["verified"] and vmeta["name"] == "LCB-RB"
    assert not (tmp_path / "lcb_rb-v1-unverified.jsonl").exists()
    assert not (tmp_path / "lcb_rb-v1-unverified.meta.json").exists()
    # an auto "accept" is still not a human verification
    auto = {p["id"]: {"decision": "accept", "by": "auto"} for p in pairs}
    apath, ameta = write_benchmark(benchmark_rows(checked, auto)[0], tmp_path, version="2")
    assert apath.name == "lcb_rb-v2-unverified.jsonl" and ameta["human_verified"] == 0
    path = tmp_path / "lcb_rb-v1-unverified.jsonl"
    write_benchmark(rows, tmp_path, version="1")
    # a record with a missing field is excluded with the reason, not raised or dropped silently
    lines = path.read_text().splitlines()
    broken = json.loads(lines[0])
    del broken["worse"]
    path.write_text(json.dumps(broken) + "\n" + lines[1] + "\n")
    valid, excluded = load_benchmark_file(path)
    assert len(valid) == 1 and "missing field 'worse'" in excluded[0]["reason"]
    assert as_pairs(valid)[0]["chosen"] == valid[0]["better"]
