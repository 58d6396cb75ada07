"""ReCode's headline table: average pass@1, gain over outcome-only, token change, writer, figure."""

import csv
import json
import os

import pytest

from recode_lib.evaluation.headline import headline_table, relative_change, write_headline


def _s(p, tokens, correct=None):
    return {"pass@1": p, "pass@1_ci": [max(0.0, p - 0.1), min(1.0, p + 0.1)],
            "tokens": {"mean": tokens, "mean_correct": correct}, "n_problems": 4, "n_samples": 4}


SUMMARIES = {"start": {"a": _s(0.2, 300), "b": _s(0.4, 500)},
             "outcome_only": {"a": _s(0.4, 400, 350), "b": _s(0.6, 600)},
             "gated": {"a": _s(0.5, 300), "b": _s(0.7, 450)}}


def test_average_gain_and_token_change_follow_the_papers_definitions():
    h = headline_table(SUMMARIES)
    assert h["benchmarks"] == ["a", "b"] and h["policies"] == ["start", "outcome_only", "gated"]
    s = h["summary"]
    assert s["outcome_only"]["average_pass@1"] == pytest.approx(0.5)
    assert s["gated"]["average_pass@1"] == pytest.approx(0.6)
    assert s["gated"]["gain_vs_baseline"] == pytest.approx(0.2)             # (0.6 - 0.5) / 0.5
    assert s["gated"]["token_change_vs_baseline"] == pytest.approx(375 / 500 - 1)   # -25%
    assert s["start"]["gain_vs_baseline"] == pytest.approx(-0.4)
    assert s["outcome_only"]["gain_vs_baseline"] == 0.0
    cell = h["table"]["outcome_only"]["a"]
    assert cell["pass@1"] == 0.4 and cell["ci"] == pytest.approx([0.3, 0.5])
    assert cell["mean_tokens"] == 400 and cell["mean_tokens_correct"] == 350


def test_the_papers_numbers_give_the_papers_gain():
    # 50.4 -> 58.5 is start -> gated; +6.7% is over outcome-only (58.5 / 1.067 = 54.8)
    assert relative_change(58.5, 54.83) == pytest.approx(0.067, abs=1e-3)
    assert relative_change(1.0, 0) is None and relative_change(None, 1.0) is None


def test_a_missing_benchmark_for_one_policy_raises_naming_it():
    bad = {**SUMMARIES, "gated": {"a": _s(0.5, 300)}}
    with pytest.raises(KeyError, match=r"'gated'.*\['b'\]"):
        headline_table(bad)


def test_without_outcome_only_the_gain_is_none():
    h = headline_table({"start": SUMMARIES["start"]})
    assert h["summary"]["start"]["gain_vs_baseline"] is None
    assert h["summary"]["start"]["token_change_vs_baseline"] is None


def test_writer_and_figure(tmp_path):
    from recode_lib.analysis import plots
    h = headline_table(SUMMARIES)
    js, cs = write_headline(h, tmp_path, extra={"model": "m"})
    back = json.loads(js.read_text())
    assert back["model"] == "m" and back["table"]["gated"]["b"]["pass@1"] == 0.7
    rows = list(csv.DictReader(open(cs)))
    assert [r["policy"] for r in rows] == ["start", "outcome_only", "gated"]
    assert float(rows[2]["b/pass@1"]) == 0.7 and float(rows[2]["gain_vs_baseline"]) == pytest.approx(0.2)
    files = plots.fig_headline(js, out_dir=tmp_path / "fig")
    assert [p.suffix for p in files] == [".pdf", ".png"] and all(os.path.getsize(p) > 0 for p in files)
    with pytest.raises(plots.NoData):
        plots.fig_headline({"policies": [], "benchmarks": []})
    built = plots.rebuild_all(tmp_path / "run_missing", out_dir=tmp_path / "f")
    assert "headline" in built["skipped"]


def test_policy_models_finds_04_finals_and_names_a_missing_one(tmp_path):
    from recode_lib.evaluation.headline import evaluate_policies, policy_models
    (tmp_path / "04_cg_grpo" / "gated" / "final").mkdir(parents=True)
    assert policy_models(tmp_path, "") == {}
    assert policy_models(tmp_path, "gated") == {"gated": str(tmp_path / "04_cg_grpo" / "gated" / "final")}
    with pytest.raises(FileNotFoundError, match=r"additive.*04_cg_grpo/additive/final.*run 04 first"):
        policy_models(tmp_path, "gated, additive")
    with pytest.raises(KeyError, match="gated"):
        evaluate_policies({"gated": "x"}, ["a"], spec=None, out_dirs={})
