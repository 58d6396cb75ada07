"""The laptop report reads result files and states each laptop-profile claim honestly (fixtures)."""

from __future__ import annotations

import json

import pytest

from recode_lib.orchestration.laptop_report import build_report, thirds_rise, wilson, write_report


def _jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _json(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


def make_run(root, *, learn=True, hack=True, rm_acc=0.8, fmt_beyond=0.6):
    d = root / "04_cg_grpo"
    for v in ("outcome_only", "gated", "additive"):
        rows = []
        for s in range(1, 10):
            out = 0.2 + (0.05 * s if learn and v != "additive" else 0.0)
            proc = 0.1 + (0.08 * s if hack and v == "additive" else 0.0)
            rows.append({"step": s, "reward": out + proc, f"{v}/out": out, f"{v}/proc": proc})
        _jsonl(d / v / "metrics.jsonl", rows)
        p = 0.5 if learn and v != "additive" else 0.3
        _json(
            d / "eval" / v / "summary.json",
            {"pass@1": p, "pass@1_ci": [p - 0.1, p + 0.1], "n_problems": 10, "n_samples": 40},
        )
    _json(
        d / "eval" / "start" / "summary.json",
        {"pass@1": 0.3, "pass@1_ci": [0.2, 0.4], "n_problems": 10, "n_samples": 40},
    )
    _json(root / "02_reward_model" / "headline.json", {"accuracy": rm_acc, "n_eval": 20})
    rows = [
        {
            "alpha": a,
            "format_error": (fmt_beyond if abs(a) > 2 else 0.05),
            "n_samples": 40,
            "pass@1": 0.3,
        }
        for a in (-3.0, 0.0, 0.5, 1.0, 3.0)
    ]
    _json(
        root / "07_weight_averaging" / "frontier.json",
        {"rows": rows, "format_error_rise": {"threshold": 2.0}, "endpoints": {"source": "sweep"}},
    )


def test_claims_observed_when_the_files_show_them(tmp_path):
    make_run(tmp_path)
    _jsonl(tmp_path / "04_cg_grpo" / "gated.stale-0" / "metrics.jsonl", [{"step": 1, "reward": 9}])
    rep = write_report(tmp_path)
    c = rep["claims"]
    assert c["learning"]["observed"] and c["learning"]["variants"]["gated"]["ci_separated"]
    assert not c["learning"]["variants"]["additive"]["observed"]
    assert set(c["learning"]["variants"]) == {"gated", "outcome_only", "additive"}  # no stale runs
    assert c["gate_signature"]["observed"] and c["gate_signature"]["rm_signal"]
    assert c["extrapolation"]["observed"]
    md = (tmp_path / "99_paper_figures" / "laptop_report.md").read_text()
    assert md.count("**observed**") == 3
    assert json.loads((tmp_path / "99_paper_figures" / "laptop_report.json").read_text()) == rep


def test_claims_not_observed_are_said_so(tmp_path):
    make_run(tmp_path, learn=False, hack=False, rm_acc=0.5, fmt_beyond=0.05)
    c = build_report(tmp_path)["claims"]
    assert c["learning"]["observed"] is False
    assert c["gate_signature"]["observed"] is False and c["gate_signature"]["rm_signal"] is False
    assert "chance" in c["gate_signature"]["why"]
    assert c["extrapolation"]["observed"] is False and c["extrapolation"]["observed_point"] is False


def _held_out(root, start=(0.0, 0.3), additive=(0.5, 0.3), gated=(0.0, 0.5), spread=0.1):
    """04's held-out RM scores: per model name=(raw score shift, pass rate) on 10 problems x 4
    samples (score = problem effect + shift + noise of size `spread`), and its metrics.json."""
    import random

    rng = random.Random(0)
    models = {}
    for name, (shift, rate) in {"start": start, "additive": additive, "gated": gated}.items():
        rows = [
            {
                "id": f"p/{i}#{j}",
                "problem_id": f"p/{i}",
                "passed": j < round(rate * 4),
                "outcome": "x",
                "score": 1.6 + 0.3 * (i % 3) + shift + rng.uniform(-spread, spread),
            }
            for i in range(10)
            for j in range(4)
        ]
        _jsonl(root / "04_cg_grpo" / "eval" / name / "rm_scores.jsonl", rows)
        from recode_lib.process_reward.scale import proc_summary

        models[name] = proc_summary(rows, 1.6, 0.4)
    _json(
        root / "04_cg_grpo" / "metrics.json",
        {
            "proc_scale": {"proc_center": 1.6, "proc_temperature": 0.4},
            "held_out_proc": {"scale": {"center": 1.6, "temperature": 0.4}, "models": models},
        },
    )


def test_held_out_scores_decide_the_gate_signature_over_the_training_curves(tmp_path):
    make_run(tmp_path, hack=False)  # the curves alone show no hacking
    _held_out(tmp_path)  # held out: additive's RM scores up, R_out not above gated's
    rep = write_report(tmp_path)
    g = rep["claims"]["gate_signature"]
    assert g["basis"] == "held_out" and g["observed"] is True and g["observed_literal"] is True
    assert g["paired"]["additive-start"]["proc"]["ci"][0] > 0
    assert g["paired"]["additive-gated"]["out"]["mean"] == pytest.approx(-0.25)
    md = (tmp_path / "99_paper_figures" / "laptop_report.md").read_text()
    assert "judged on: held out" in md and "sigmoid((score - 1.600) / 0.400)" in md
    assert "paired by problem, additive - gated: R_proc +" in md


def test_both_variants_learning_r_out_is_the_comparative_reading_not_the_literal_one(tmp_path):
    make_run(tmp_path)
    _held_out(
        tmp_path, additive=(0.5, 0.75), gated=(0.0, 0.75)
    )  # both learn; additive also inflates R_proc
    g = build_report(tmp_path)["claims"]["gate_signature"]
    assert g["observed"] is True and g["observed_literal"] is False


@pytest.mark.parametrize(
    "additive, gated, spread",
    [
        (
            (0.5, 0.75),
            (0.0, 0.3),
            0.1,
        ),  # additive's R_out rose above gated's with its R_proc: learning
        ((0.5, 0.3), (0.5, 0.3), 0.1),  # gated's R_proc rose as much: nothing the gate changed
        ((0.05, 0.3), (0.0, 0.5), 1.5),  # a rise lost in the noise: its CI reaches below 0
    ],
)
def test_held_out_gate_signature_is_not_observed_when_it_is_not_there(
    tmp_path, additive, gated, spread
):
    make_run(tmp_path, hack=True)  # the curves alone would say observed
    _held_out(tmp_path, additive=additive, gated=gated, spread=spread)
    g = build_report(tmp_path)["claims"]["gate_signature"]
    assert g["basis"] == "held_out" and g["observed"] is False


def test_without_held_out_scores_the_training_curves_decide(tmp_path):
    make_run(tmp_path)
    assert build_report(tmp_path)["claims"]["gate_signature"]["basis"] == "training_curves"


def test_missing_results_are_not_measured(tmp_path):
    c = build_report(tmp_path)["claims"]
    assert all(v["observed"] is None for v in c.values())
    write_report(tmp_path)
    assert "not measured" in (tmp_path / "99_paper_figures" / "laptop_report.md").read_text()


def test_rise_and_interval_helpers():
    r = thirds_rise([0, 0, 0, 1, 1, 1])
    assert r["rise"] == 1.0 and r["ci"] == [1.0, 1.0] and r["window"] == 2
    assert thirds_rise([1.0]) is None
    lo, hi = wilson(5, 10)
    assert lo < 0.5 < hi and wilson(0, 0) == [None, None]


def test_identical_endpoints_are_named_as_why_extrapolation_shows_nothing(tmp_path):
    make_run(tmp_path, fmt_beyond=0.05)
    low, high = tmp_path / "ends" / "low", tmp_path / "ends" / "high"
    for d in (low, high):
        d.mkdir(parents=True)
        (d / "model.safetensors").write_bytes(b"same weights")
    front = tmp_path / "07_weight_averaging" / "frontier.json"
    obj = json.loads(front.read_text())
    obj["endpoints"] = {"source": "sweep", "low": str(low), "high": str(high)}
    front.write_text(json.dumps(obj))
    c = build_report(tmp_path)["claims"]["extrapolation"]
    assert c["endpoints_identical"] and c["observed"] is False and "identical" in c["why"]
    (high / "model.safetensors").write_bytes(b"other weights")
    c = build_report(tmp_path)["claims"]["extrapolation"]
    assert c["endpoints_identical"] is False and "why" not in c


def make_settings(root, calls: dict):
    """11_settings_sweep with 8 rollouts per (setting, run): `calls[setting]` tool calls in the
    first half of each run's rollouts, one of them an error."""
    for setting, n in calls.items():
        folder = root / "11_settings_sweep" / setting
        for sub in ("eval/k1", "eval/kinf", "alpha/eval/alpha_2.0"):
            _jsonl(
                folder / sub / "samples.jsonl",
                [
                    {
                        "id": f"p{i}#0",
                        "tool_calls": n if i < 4 else 0,
                        "tool_errors": int(n > 0 and i == 0),
                    }
                    for i in range(8)
                ],
            )
        _json(
            folder / "frontier.json",
            {"rows": [{"run": "k1", "pass@1": 0.25}, {"run": "kinf", "pass@1": 0.5}]},
        )
        _json(
            folder / "alpha" / "frontier.json",
            {"rows": [{"alpha": 2.0, "pass@1": 0.125, "format_error": 0.5}]},
        )


def test_tool_use_is_observed_with_tool_calls_in_every_multi_turn_setting(tmp_path):
    make_settings(tmp_path, {"single": 0, "tool": 1, "agentic": 3})
    t = write_report(tmp_path)["claims"]["tool_use"]
    assert t["observed"] is True and set(t["settings"]) == {"single", "tool", "agentic"}
    tool = t["settings"]["tool"]
    assert tool["n_rollouts"] == 24 and tool["tool_calls"]["mean"] == pytest.approx(0.5)
    lo, hi = tool["tool_calls"]["ci"]
    assert 0 < lo <= 0.5 <= hi
    assert tool["tool_errors"]["mean"] == pytest.approx(3 / 24)
    assert tool["with_tool_call"]["share"] == pytest.approx(0.5)
    # 12 calls, 3 of them errors: 9 ran; the erroring rollouts made one call each (none ran)
    assert tool["tool_calls_ran"]["mean"] == pytest.approx(9 / 24)
    assert tool["with_tool_call_ran"]["share"] == pytest.approx(9 / 24)
    agentic = t["settings"]["agentic"]
    assert agentic["tool_calls_ran"]["mean"] == pytest.approx((36 - 3) / 24)
    assert agentic["with_tool_call_ran"]["share"] == pytest.approx(0.5)
    assert t["settings"]["agentic"]["tool_calls"]["mean"] == pytest.approx(1.5)
    assert [r["run"] for r in tool["runs"]] == ["k1", "kinf"] and tool["alphas"][0]["alpha"] == 2.0
    md = (tmp_path / "99_paper_figures" / "laptop_report.md").read_text()
    assert "## (d)" in md and "tool calls per rollout 0.500" in md
    assert "calls that ran (parsed, a known tool, no tool error) per rollout 0.375" in md


def test_tool_use_is_not_observed_when_a_multi_turn_setting_makes_no_call(tmp_path):
    make_settings(tmp_path, {"tool": 1, "agentic": 0})
    t = build_report(tmp_path)["claims"]["tool_use"]
    assert (
        t["observed"] is False and "agentic" in t["why"] and "tool" not in t["why"].split(":")[-1]
    )


def test_tool_use_reads_no_set_aside_evaluation(tmp_path):
    make_settings(tmp_path, {"tool": 0})
    _jsonl(
        tmp_path / "11_settings_sweep" / "tool" / "eval" / "k1.stale-0" / "samples.jsonl",
        [{"id": "p0#0", "tool_calls": 5, "tool_errors": 0}],
    )
    t = build_report(tmp_path)["claims"]["tool_use"]
    assert t["settings"]["tool"]["n_rollouts"] == 24 and t["observed"] is False


def test_tool_use_without_notebook_11_is_not_measured(tmp_path):
    make_settings(tmp_path, {"single": 0})
    t = build_report(tmp_path)["claims"]["tool_use"]
    assert t["observed"] is None and "no tool or agentic" in t["why"]


@pytest.mark.parametrize(
    "acc, n, signal", [(0.8, 20, True), (0.6, 10, False), (0.6, 400, True), (0.5, 1000, False)]
)
def test_the_rm_has_signal_only_when_its_accuracy_interval_excludes_chance(
    tmp_path, acc, n, signal
):
    make_run(tmp_path)
    _json(tmp_path / "02_reward_model" / "headline.json", {"accuracy": acc, "n_eval": n})
    g = build_report(tmp_path)["claims"]["gate_signature"]
    assert g["rm_signal"] is signal and g["rm_ci"][0] < acc < g["rm_ci"][1]
    assert (g["observed"] is not None) and (
        ("does not exclude chance" in g.get("why", "")) == (not signal)
    )


def make_seeded_run(root, hack_by_seed=(True, False), fmt_beyond_seed2=0.6):
    """04 with two seeds (runs <variant>_seed<s>, metrics.json seed_runs, held-out RM scores per
    run) and 07 with a replica grid of the sweep's second seed (seed2/frontier.json)."""
    import shutil

    make_run(root)
    d = root / "04_cg_grpo"
    seed_runs, models = {"gated": {}, "additive": {}}, {}
    for s, hack in zip((1, 2), hack_by_seed, strict=True):
        _held_out(root, additive=(0.5 if hack else -0.5, 0.3))
        held = json.loads((d / "metrics.json").read_text())["held_out_proc"]
        models["start"] = held["models"]["start"]
        for v in ("gated", "additive"):
            run = f"{v}_seed{s}"
            seed_runs[v][str(s)] = run
            shutil.copytree(d / v, d / run)
            shutil.copytree(d / "eval" / v, d / "eval" / run)
            models[run] = held["models"][v]
    for v in ("gated", "additive", "outcome_only"):
        shutil.rmtree(d / v)
        shutil.rmtree(d / "eval" / v)
    _json(
        d / "metrics.json",
        {
            "proc_scale": {"proc_center": 1.6, "proc_temperature": 0.4},
            "seed_runs": seed_runs,
            "held_out_proc": {"scale": held["scale"], "models": models},
        },
    )
    rows = [
        {
            "alpha": a,
            "format_error": (fmt_beyond_seed2 if abs(a) > 2 else 0.05),
            "n_samples": 40,
            "pass@1": 0.3,
        }
        for a in (-3.0, 0.0, 0.5, 1.0, 3.0)
    ]
    _json(
        root / "07_weight_averaging" / "seed2" / "frontier.json",
        {"rows": rows, "format_error_rise": {"threshold": 2.0}, "endpoints": {"source": "sweep"}},
    )


def test_two_seeds_each_seed_is_judged_and_the_claim_needs_both(tmp_path):
    make_seeded_run(tmp_path, hack_by_seed=(True, False))
    rep = write_report(tmp_path)
    g = rep["claims"]["gate_signature"]
    assert set(g["seeds"]) == {"1", "2"}
    assert g["seeds"]["1"]["observed"] is True and g["seeds"]["2"]["observed"] is False
    assert g["seeds"]["2"]["runs"] == {"additive": "additive_seed2", "gated": "gated_seed2"}
    assert g["observed"] is False and g["observed_seeds"] == 1
    a = rep["claims"]["learning"]
    assert set(a["observed_per_seed"]) == {"1", "2"} and a["replicated"] is True
    e = rep["claims"]["extrapolation"]
    assert e["seeds"]["2"]["observed"] is True and e["replicated"] is True
    md = (tmp_path / "99_paper_figures" / "laptop_report.md").read_text()
    assert "### seed 1 (additive_seed1 vs gated_seed1): **observed**" in md
    assert "### seed 2 (additive_seed2 vs gated_seed2): **NOT observed**" in md
    assert "observed on 1 of 2 seeds" in md
    assert "### seed 2 (07's grid between that seed's endpoints): **observed**" in md


def test_a_replica_grid_that_does_not_show_the_rise_is_not_replicated(tmp_path):
    make_seeded_run(tmp_path, hack_by_seed=(True, True), fmt_beyond_seed2=0.05)
    rep = build_report(tmp_path)["claims"]
    assert (
        rep["gate_signature"]["observed"] is True and rep["gate_signature"]["observed_seeds"] == 2
    )
    assert rep["extrapolation"]["observed"] is True
    assert rep["extrapolation"]["seeds"]["2"]["observed"] is False
    assert rep["extrapolation"]["replicated"] is False


def test_with_a_usable_rm_a_missing_signature_is_explained_with_the_numbers(tmp_path):
    make_seeded_run(tmp_path, hack_by_seed=(False, False))
    _jsonl(
        tmp_path / "04_cg_grpo" / "gated" / "metrics.jsonl", [{"step": 1, "reward": 9}]
    )  # an earlier SEEDS
    c = build_report(tmp_path)["claims"]
    g = c["gate_signature"]
    assert g["rm_signal"] and g["observed"] is False
    assert "seed 1: additive's R_proc - " in g["why"] and "seed 2:" in g["why"]
    assert "(not above 0)" in g["why"]
    for seed in ("1", "2"):  # only a condition that failed is named, with its numbers
        d = g["seeds"][seed]["paired"]["additive-gated"]["proc"]
        assert (f"R_proc - gated's {d['mean']:+.3f}" in g["why"]) == (not d["ci"][0] > 0)
    assert set(g["seeds"]["1"]["rm_prefers_passing"]) == {"start", "additive", "gated"}
    assert set(c["learning"]["variants"]) == {
        "gated_seed1",
        "gated_seed2",
        "additive_seed1",
        "additive_seed2",
    }  # 04's declared runs only
    md = write_report(tmp_path) and (tmp_path / "99_paper_figures" / "laptop_report.md").read_text()
    assert "what the RM prefers: R_proc of passing minus failing held-out samples, start " in md


def test_why_names_the_condition_that_failed_and_an_rm_that_prefers_failing_samples():
    from recode_lib.orchestration.laptop_report import gate_why

    seed = {
        "paired": {
            "additive-start": {
                "proc": {"mean": 0.074, "ci": [-0.039, 0.192]},
                "out": {"mean": 0.125, "ci": [0.03, 0.25]},
            },
            "additive-gated": {
                "proc": {"mean": 0.100, "ci": [0.033, 0.167]},
                "out": {"mean": -0.156, "ci": [-0.375, 0.094]},
            },
        },
        "rm_prefers_passing": {"start": -0.09, "additive": -0.092, "gated": -0.085},
    }
    why = gate_why({"1": seed})
    assert "seed 1: additive's R_proc - the start's +0.074 CI [-0.039, 0.192] (not above 0)" in why
    assert "gated's +0.100" not in why  # that condition held: additive above gated
    assert "failing held-out samples above their passing ones" in why
