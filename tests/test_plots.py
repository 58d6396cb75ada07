"""recode_lib.analysis.plots: every figure builds from small synthetic result files alone."""

from __future__ import annotations

import json

import pytest

from recode_lib.analysis import ensemble as E
from recode_lib.analysis import frontier as F
from recode_lib.analysis import plots
from recode_lib.core.jsonl import write_json_atomic, write_jsonl_atomic
from recode_lib.evaluation.spec import EvalSpec


def _samples():
    outs = {
        -0.5: "optimization_failure",
        0.0: "optimization_failure",
        0.5: "correct",
        1.0: "correctness_failure",
        1.5: "correctness_failure",
        2.5: "format_error",
    }
    return {
        a: [
            {
                "problem_id": f"p{i}",
                "sample": j,
                "outcome": "correct" if (i + j + int(a * 2)) % 3 == 0 else o,
                "n_tokens": 5,
            }
            for i in range(4)
            for j in range(4)
        ]
        for a, o in outs.items()
    }


SPEC = EvalSpec(temperature=1.0, max_new_tokens=64, n=4)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    samples = _samples()
    F.write_frontier(root / "07", samples, spec=SPEC)
    E.write_ensemble(root / "08", E.counts_by_alpha(samples), ks=(1, 2, 4), n_boot=50)
    write_json_atomic(
        root / "06" / "frontier.json",
        {
            "rows": [
                {"run": "R_1", "correctness_failure": 0.1, "optimization_failure": 0.6},
                {"run": "R_inf", "correctness_failure": 0.5, "optimization_failure": 0.1},
            ],
            **F.spec_fields(SPEC.replace(n=2, seed=3, backend="vllm")),
        },
    )  # same protocol
    for run, slope in (("gated", 0.1), ("additive", 0.2)):
        write_jsonl_atomic(
            root / "04" / run / "metrics.jsonl",
            [
                {
                    "step": s,
                    "reward": slope * s,
                    "gated/out": 0.1 * s,
                    "gated/proc": 0.05 * s,
                    "gated/fmt": 1.0,
                    "loss": 0.0,
                }
                for s in range(1, 6)
            ],
        )
    write_json_atomic(
        root / "03" / "metrics.json",
        {
            "table": [
                {
                    "dataset": "lcb_rb",
                    "method": "crpl_rm",
                    "pair_type": "all",
                    "n": 10,
                    "accuracy": 0.7,
                    "ci_low": 0.5,
                    "ci_high": 0.9,
                },
                {
                    "dataset": "lcb_rb",
                    "method": "crpl_rm",
                    "pair_type": "strong",
                    "n": 5,
                    "accuracy": 0.8,
                    "ci_low": 0.6,
                    "ci_high": 1.0,
                },
                {
                    "dataset": "lcb_rb",
                    "method": "judge_pointwise",
                    "pair_type": "all",
                    "n": 10,
                    "accuracy": 0.55,
                    "ci_low": 0.3,
                    "ci_high": 0.8,
                },
            ]
        },
    )
    write_json_atomic(root / "02" / "metrics.json", {"accuracy": 0.65, "n_eval": 20})
    return root


def _check(paths, out, name):
    assert {p.name for p in paths} >= {f"{name}.pdf", f"{name}.png"}
    assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"
    assert (out / f"{name}.png").stat().st_size > 5000  # something was drawn


def test_frontier_figure(results, tmp_path):
    _check(
        plots.fig_frontier(
            results / "07" / "frontier.json",
            sweep=results / "06" / "frontier.json",
            out_dir=tmp_path,
        ),
        tmp_path,
        "frontier",
    )


def test_frontier_refuses_points_sampled_differently(results, tmp_path):
    other = tmp_path / "06.json"
    sweep = json.loads((results / "06" / "frontier.json").read_text())
    write_json_atomic(
        other, sweep | F.spec_fields(SPEC.replace(temperature=0.8, max_new_tokens=32))
    )
    with pytest.raises(F.FrontierError) as exc:
        plots.fig_frontier(results / "07" / "frontier.json", sweep=other, out_dir=tmp_path)
    msg = str(exc.value)
    assert (
        SPEC.fingerprint() in msg
        and SPEC.replace(temperature=0.8, max_new_tokens=32).fingerprint() in msg
    )
    assert "temperature" in msg and "max_new_tokens" in msg and "top_p" not in msg
    assert not (tmp_path / "frontier.png").exists()
    write_json_atomic(other, {"rows": sweep["rows"]})  # no fingerprint recorded
    with pytest.raises(F.FrontierError, match="without a spec fingerprint"):
        plots.fig_frontier(results / "07" / "frontier.json", sweep=other, out_dir=tmp_path)


def test_outcome_classes_figure(results, tmp_path):
    _check(
        plots.fig_outcome_classes(results / "07" / "frontier.json", out_dir=tmp_path),
        tmp_path,
        "outcome_classes",
    )


def test_ensemble_figure(results, tmp_path):
    _check(
        plots.fig_ensemble_passk(results / "08" / "passk.json", out_dir=tmp_path),
        tmp_path,
        "ensemble_passk",
    )


def test_reward_curves_figure(results, tmp_path):
    runs = {"gated": results / "04" / "gated", "additive": results / "04" / "additive"}
    _check(plots.fig_reward_curves(runs, out_dir=tmp_path), tmp_path, "reward_curves")


def test_rm_accuracy_figure_and_table(results, tmp_path):
    paths = plots.fig_rm_accuracy(
        results / "03" / "metrics.json", results / "02" / "metrics.json", out_dir=tmp_path
    )
    _check(paths, tmp_path, "rm_accuracy")
    csv = (tmp_path / "rm_accuracy.csv").read_text().splitlines()
    assert len(csv) == 4  # header + 2 LCB-RB methods (pair type "all") + held-out RM
    assert "| lcb_rb | crpl_rm | 0.700 |" in (tmp_path / "rm_accuracy.md").read_text()


def test_missing_inputs_raise_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="frontier.json"):
        plots.fig_frontier(tmp_path / "frontier.json", out_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="metrics.jsonl"):
        plots.fig_reward_curves({"x": tmp_path}, out_dir=tmp_path)


def test_malformed_rows_raise_naming_the_field(tmp_path):
    (tmp_path / "f.json").write_text(json.dumps({"rows": [{"alpha": 0.0}]}))
    with pytest.raises(ValueError, match="correctness_failure"):
        plots.fig_frontier(tmp_path / "f.json", out_dir=tmp_path)


def test_empty_rm_results_raise_nodata_not_a_crash(tmp_path):
    from recode_lib.analysis import plots

    rm = tmp_path / "rm.json"
    rm.write_text('{"n_pairs": 0}')
    with pytest.raises(plots.NoData, match="no accuracy rows"):
        plots.fig_rm_accuracy(rm=rm, out_dir=tmp_path)


def test_sweep_frontier_alone_is_drawn(tmp_path):
    import json

    from recode_lib.analysis import plots

    sweep = tmp_path / "sweep.json"
    sweep.write_text(
        json.dumps(
            {
                "rows": [
                    {"run": "k1", "correctness_failure": 0.2, "optimization_failure": 0.5},
                    {"run": "kinf", "correctness_failure": 0.4, "optimization_failure": 0.1},
                ]
            }
        )
    )
    files = plots.fig_frontier(None, sweep=sweep, out_dir=tmp_path, name="sweep_frontier")
    assert [f.name for f in files] == ["sweep_frontier.pdf", "sweep_frontier.png"]
    with pytest.raises(ValueError):
        plots.fig_frontier(None, out_dir=tmp_path)


def test_repair_figure_and_nodata_without_repair_rows(tmp_path):
    from recode_lib.analysis.plots import fig_repair

    rate = {"repair_rate": 0.25, "ci_low": 0.0, "ci_high": 0.5, "n": 4}
    write_json_atomic(
        tmp_path / "repair.json",
        {
            "rows": [
                {
                    "model": "start",
                    "original_pass@1": 0.1,
                    "original_ci": [0.0, 0.3],
                    "repair": {"all": rate, "correctness_failure": rate},
                },
                {
                    "model": "failure_conditioned",
                    "original_pass@1": 0.2,
                    "original_ci": [0.1, 0.3],
                    "repair": {"all": rate},
                    "repair_own": {"all": dict(rate, repair_rate=0.5)},
                },
            ]
        },
    )
    out = fig_repair(tmp_path / "repair.json", out_dir=tmp_path)
    assert {p.suffix for p in out} == {".pdf", ".png"} and all(p.stat().st_size > 0 for p in out)
    write_json_atomic(tmp_path / "empty.json", {"rows": [{"model": "start", "repair": {}}]})
    with pytest.raises(plots.NoData):
        fig_repair(tmp_path / "empty.json", out_dir=tmp_path)
    with pytest.raises(FileNotFoundError):
        fig_repair(tmp_path / "absent.json", out_dir=tmp_path)


def test_rebuild_all_skips_an_overlay_of_differently_sampled_points_with_the_reason(tmp_path):
    samples = _samples()
    run = tmp_path / "run"
    F.write_frontier(run / "07_weight_averaging", samples, spec=SPEC)
    write_json_atomic(
        run / "06_strictness_sweep" / "frontier.json",
        {
            "rows": [{"run": "k1", "correctness_failure": 0.2, "optimization_failure": 0.5}],
            **F.spec_fields(SPEC.replace(temperature=0.8)),
        },
    )
    built = plots.rebuild_all(run, out_dir=tmp_path / "figs")
    assert "sampled differently" in built["skipped"]["frontier"]
    assert {"sweep_frontier", "outcome_classes"} <= set(built["made"])


def test_coinciding_points_share_one_label_instead_of_overprinting():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    plots.annotate_points(ax, [("k1", 0.5, 0.0), ("kinf", 0.5, 0.0), ("k3", 0.25, 0.0)])
    texts = sorted(t.get_text() for t in ax.texts)
    plt.close(fig)
    assert texts == ["k1, kinf", "k3"]
