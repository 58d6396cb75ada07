"""ReCode's headline table: average pass@1, gain over outcome-only, token change, writer, figure."""

import csv
import json
import os

import pytest

from recode_lib.evaluation.headline import headline_table, relative_change, write_headline


def _s(p, tokens, correct=None):
    return {
        "pass@1": p,
        "pass@1_ci": [max(0.0, p - 0.1), min(1.0, p + 0.1)],
        "tokens": {"mean": tokens, "mean_correct": correct},
        "n_problems": 4,
        "n_samples": 4,
    }


SUMMARIES = {
    "start": {"a": _s(0.2, 300), "b": _s(0.4, 500)},
    "outcome_only": {"a": _s(0.4, 400, 350), "b": _s(0.6, 600)},
    "gated": {"a": _s(0.5, 300), "b": _s(0.7, 450)},
}


def test_average_gain_and_token_change_follow_the_papers_definitions():
    h = headline_table(SUMMARIES)
    assert h["benchmarks"] == ["a", "b"] and h["policies"] == ["start", "outcome_only", "gated"]
    s = h["summary"]
    assert s["outcome_only"]["average_pass@1"] == pytest.approx(0.5)
    assert s["gated"]["average_pass@1"] == pytest.approx(0.6)
    assert s["gated"]["gain_vs_baseline"] == pytest.approx(0.2)  # (0.6 - 0.5) / 0.5
    assert s["gated"]["token_change_vs_baseline"] == pytest.approx(375 / 500 - 1)  # -25%
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
    assert float(rows[2]["b/pass@1"]) == 0.7 and float(
        rows[2]["gain_vs_baseline"]
    ) == pytest.approx(0.2)
    files = plots.fig_headline(js, out_dir=tmp_path / "fig")
    assert [p.suffix for p in files] == [".pdf", ".png"] and all(
        os.path.getsize(p) > 0 for p in files
    )
    with pytest.raises(plots.NoData):
        plots.fig_headline({"policies": [], "benchmarks": []})
    built = plots.rebuild_all(tmp_path / "run_missing", out_dir=tmp_path / "f")
    assert "headline" in built["skipped"]


def test_policy_models_finds_04_finals_and_names_a_missing_one(tmp_path):
    from recode_lib.evaluation.headline import evaluate_policies, policy_models

    (tmp_path / "04_cg_grpo" / "gated" / "final").mkdir(parents=True)
    assert policy_models(tmp_path, "") == {}
    assert policy_models(tmp_path, "gated") == {
        "gated": str(tmp_path / "04_cg_grpo" / "gated" / "final")
    }
    with pytest.raises(
        FileNotFoundError, match=r"additive.*04_cg_grpo/additive/final.*run 04 first"
    ):
        policy_models(tmp_path, "gated, additive")
    with pytest.raises(KeyError, match="gated"):
        evaluate_policies({"gated": "x"}, ["a"], spec=None, out_dirs={})


# --- relative gains with paired CIs, seeds, greedy (ReCode: "50.4% -> 58.5% (+16.1% relative)",
# "+6.7% over outcome-only GRPO") ---------------------------------------------------------------


def _pp(n_correct, n=1000, extra=None):
    """A summary whose per-problem pass@1 is 1 on the first n_correct of n problems."""
    per = {f"p{i:04d}": float(i < n_correct) for i in range(n)}
    s = _s(n_correct / n, 300)
    return {**s, "per_problem": per, **(extra or {})}


PAPERLIKE = {
    "start": {"a": _pp(504), "b": _pp(504)},
    "outcome_only": {"a": _pp(548), "b": _pp(549)},
    "gated": {"a": _pp(585), "b": _pp(585)},
}


def test_the_headline_carries_both_relative_gains_with_paired_intervals():
    h = headline_table(PAPERLIKE, n_boot=500)
    over_start = h["relative_gain_over_start"]["gated"]
    assert over_start["value"] == pytest.approx(0.585 / 0.504 - 1) == pytest.approx(0.161, abs=1e-3)
    lo, hi = over_start["ci"]
    assert 0 < lo < over_start["value"] < hi  # gated solves a superset: paired, never <= 0
    over_oo = h["relative_gain_over_outcome_only"]["gated"]
    assert over_oo["value"] == pytest.approx(0.585 / 0.5485 - 1, abs=1e-4)  # +6.7%
    assert over_oo["ci"][0] > 0 and over_oo["n_problems"] == 2000
    assert "start" not in h["relative_gain_over_start"]
    assert set(h["relative_gain_over_outcome_only"]) == {"gated"}  # not start, not itself
    assert h["paper"]["relative_gain_over_start"] == 0.161


def test_without_per_problem_values_the_gain_has_no_interval():
    h = headline_table(SUMMARIES)
    g = h["relative_gain_over_outcome_only"]["gated"]
    assert g["value"] == pytest.approx(0.2) and g["ci"] is None


def test_a_gain_pairs_problems_not_just_means():
    """Same means, but the policy fails where the reference passes on half the problems:
    an unpaired view would see no difference in spread; the paired interval widens."""
    ref = {"a": _pp(500)}
    same = {"a": _pp(500)}
    shifted = {
        "a": {**_pp(500), "per_problem": {f"p{i:04d}": float(i >= 500) for i in range(1000)}}
    }
    tight = headline_table({"start": ref, "gated": same}, n_boot=300)["relative_gain_over_start"][
        "gated"
    ]
    wide = headline_table({"start": ref, "gated": shifted}, n_boot=300)["relative_gain_over_start"][
        "gated"
    ]
    assert tight["ci"] == [0.0, 0.0] and wide["ci"][0] < -0.05 < 0.05 < wide["ci"][1]


def test_seeds_average_and_report_their_spread_beside_every_gain():
    runs = {
        "start": {"a": _pp(400)},
        "outcome_only_seed0": {"a": _pp(500)},
        "outcome_only_seed1": {"a": _pp(500)},
        "gated_seed0": {"a": _pp(550)},
        "gated_seed1": {"a": _pp(600)},
    }
    groups = {
        "outcome_only": ["outcome_only_seed0", "outcome_only_seed1"],
        "gated": ["gated_seed0", "gated_seed1"],
    }
    h = headline_table(runs, groups=groups, n_boot=300)
    assert h["policies"] == ["start", "outcome_only", "gated"]
    cell = h["table"]["gated"]["a"]
    assert cell["pass@1"] == pytest.approx(0.575) and cell["n_seeds"] == 2
    assert cell["per_seed"] == [0.55, 0.6] and cell["seed_std"] == pytest.approx(
        0.0353553, abs=1e-6
    )
    assert cell["ci"][0] < 0.575 < cell["ci"][1]
    g = h["relative_gain_over_outcome_only"]["gated"]
    assert g["per_seed"] == pytest.approx([0.1, 0.2]) and g["seed_std"] == pytest.approx(
        0.0707107, abs=1e-6
    )
    s = h["relative_gain_over_start"]["gated"]  # one start run: each seed against it
    assert s["per_seed"] == pytest.approx([0.375, 0.5]) and s["value"] == pytest.approx(0.4375)
    assert h["summary"]["gated"]["gain_vs_baseline_seed_std"] == pytest.approx(g["seed_std"])
    assert h["summary"]["gated"]["average_seed_std"] == pytest.approx(cell["seed_std"])


def test_greedy_pass1_is_reported_beside_sampled_pass1(tmp_path):
    runs = {
        "start": {"a": _pp(400, extra={"greedy_pass@1": 0.45})},
        "gated": {"a": _pp(500, extra={"greedy_pass@1": 0.54})},
    }
    h = headline_table(runs, n_boot=100)
    assert h["table"]["gated"]["a"]["greedy_pass@1"] == 0.54
    assert h["summary"]["gated"]["greedy_average_pass@1"] == 0.54
    assert h["relative_gain_over_start"]["gated"]["greedy_value"] == pytest.approx(0.2)
    _, cs = write_headline(h, tmp_path)
    row = list(csv.DictReader(open(cs)))[1]
    assert float(row["a/greedy_pass@1"]) == 0.54 and float(
        row["relative_gain_over_start"]
    ) == pytest.approx(0.25)


def test_the_transfer_gain_is_over_its_own_start_and_outcome_only_run():
    runs = {
        "start": {"a": _pp(400)},
        "outcome_only": {"a": _pp(500)},
        "gated": {"a": _pp(550)},
        "transfer_start": {"a": _pp(200)},
        "transfer": {"a": _pp(300)},
        "transfer_outcome_only": {"a": _pp(250)},
    }
    h = headline_table(runs, n_boot=100)
    assert h["relative_gain_over_start"]["transfer"]["reference"] == "transfer_start"
    assert h["relative_gain_over_start"]["transfer"]["value"] == pytest.approx(0.5)
    assert h["relative_gain_over_outcome_only"]["transfer"]["reference"] == "transfer_outcome_only"
    assert h["relative_gain_over_outcome_only"]["transfer"]["value"] == pytest.approx(0.2)
    assert h["relative_gain_over_start"]["transfer_outcome_only"]["value"] == pytest.approx(0.25)
    assert "transfer_outcome_only" not in h["relative_gain_over_outcome_only"]


def test_policy_groups_read_04s_seed_runs(tmp_path):
    from recode_lib.evaluation.headline import policy_groups

    assert policy_groups(tmp_path, "gated,additive") == {
        "gated": ["gated"],
        "additive": ["additive"],
    }
    (tmp_path / "04_cg_grpo").mkdir()
    (tmp_path / "04_cg_grpo" / "headline.json").write_text(
        json.dumps({"seed_runs": {"gated": {"0": "gated_seed0", "1": "gated_seed1"}}})
    )
    assert policy_groups(tmp_path, ["gated", "additive"]) == {
        "gated": ["gated_seed0", "gated_seed1"],
        "additive": ["additive"],
    }


def test_greedy_spec_and_lcb_window_options():
    from recode_lib.evaluation.headline import greedy_spec, headline_options
    from recode_lib.evaluation.spec import EvalSpec

    sampled = EvalSpec(temperature=0.8, top_p=0.95, n=10, k=(1, 10))
    g = greedy_spec(sampled)
    assert (g.temperature, g.top_p, g.n, g.k) == (0.0, 1.0, 1, (1,))
    greedy = EvalSpec(temperature=0.0, n=1)
    assert greedy_spec(greedy) is greedy
    assert headline_options("") == {}
    assert headline_options("2024-10-01") == {"livecodebench": {"start_date": "2024-10-01"}}
    assert headline_options("2024-10-01", ["humaneval"]) == {}  # no LiveCodeBench evaluated


def test_evaluate_policies_refuses_options_for_a_benchmark_it_does_not_evaluate():
    from recode_lib.evaluation.headline import evaluate_policies

    with pytest.raises(ValueError, match="livecodebench"):
        evaluate_policies(
            {"a": "x"},
            ["humaneval"],
            spec=None,
            out_dirs={"a": "d"},
            options={"livecodebench": {"start_date": "2024-10-01"}},
        )


def test_the_livecodebench_window_drops_problems_before_its_start():
    """The upstream-format fixture: abc301_a is of 2023-06-10, the others of July 2023 or later."""
    from pathlib import Path

    from recode_lib.data import load_benchmark
    from recode_lib.evaluation.headline import headline_options

    fixtures = Path(__file__).parent / "fixtures"
    every = load_benchmark("livecodebench", data_dir=fixtures, release="release_v2", download=False)
    late = load_benchmark(
        "livecodebench",
        data_dir=fixtures,
        release="release_v2",
        download=False,
        **headline_options("2023-07-01")["livecodebench"],
    )
    ids = [p.id for p in every]
    assert "livecodebench/abc301_a" in ids and [p.id for p in late] == [
        i for i in ids if i != "livecodebench/abc301_a"
    ]


def test_mbpp_of_the_headline_is_evalplus_mbpp_with_base_tests(shared_data_dir):
    """ReCode's "MBPP(+)": EvalPlus's 378 MBPP+ tasks, with their base tests (MBPP) and with
    the plus tests (MBPP+) — not the original 500-task test split."""
    from recode_lib.data import list_benchmarks, load_benchmark
    from recode_lib.runner.pipeline import load_profile

    assert "mbppplus_base" in list_benchmarks()
    base, plus = load_benchmark("mbppplus_base"), load_benchmark("mbppplus")
    assert len(base) == len(plus) == 378 and [p.id for p in base] == [p.id for p in plus]
    n_cases = lambda p: len(p.tests.get("cases") or [])  # noqa: E731
    assert all(p.metadata["tests"] == "base" for p in base)
    assert sum(map(n_cases, base)) < sum(map(n_cases, plus))
    heads = load_profile("paper")["05_codegen_eval"]["HEADLINE_BENCHMARKS"].split(",")
    assert "mbppplus_base" in heads and "mbpp" not in heads and "mbppplus" in heads


def test_gain_rows_put_each_gain_beside_the_papers_figure():
    from recode_lib.evaluation.headline import gain_rows

    rows = {(r["policy"], r["over"]): r for r in gain_rows(headline_table(PAPERLIKE, n_boot=100))}
    assert set(rows) == {("outcome_only", "start"), ("gated", "start"), ("gated", "outcome_only")}
    assert (
        rows[("gated", "start")]["paper"] == 0.161
        and rows[("gated", "outcome_only")]["paper"] == 0.067
    )
    assert (
        rows[("gated", "start")]["ci_low"] > 0 and rows[("outcome_only", "start")]["paper"] is None
    )
