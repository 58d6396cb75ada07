"""Paper B's pipeline per setting (recode_lib.orchestration.settings): the alpha grid between a
setting's endpoints evaluated in that setting's loop, ensembles along it, the per-setting
figures (pooled outcome shares, tool use, cost) and the side-by-side frontier figure."""

from __future__ import annotations

import json

import pytest

from recode_lib.analysis import frontier as F
from recode_lib.analysis import plots
from recode_lib.core.jsonl import write_json_atomic
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.evaluation.summary import OUTCOMES, pooled_summary
from recode_lib.orchestration.settings import alpha_settings, ensemble_settings, recipe_for


def test_recipe_for_takes_a_format_string_or_a_mapping():
    assert recipe_for("{setting}_smoke", "tool") == "tool_smoke"
    recipes = {"single": "strictness_smoke", "agentic": "agentic_smoke"}
    assert recipe_for(recipes, "single") == "strictness_smoke"
    with pytest.raises(KeyError, match="tool"):
        recipe_for(recipes, "tool")


def _summary(n, outcomes, hang=0.0, tool_calls=None, tool_errors=0.0, timing=None, tokens=10.0):
    s = {
        "n_samples": n,
        "outcomes": outcomes,
        "failure_kinds": {"hang": hang},
        "tokens": {"mean": tokens},
        "timing": timing or {},
    }
    if tool_calls is not None:
        s["episodes"] = {"mean_tool_calls": tool_calls, "mean_tool_errors": tool_errors}
    return s


def test_pooled_summary_weights_by_samples_and_counts_only_new_rollouts():
    a = _summary(
        2,
        {"correct": 1.0},
        tool_calls=2.0,
        tool_errors=1.0,
        timing={"new_samples": 2, "generation_s": 3.0, "execution_s": 1.0},
        tokens=30,
    )
    b = _summary(
        6,
        {"correctness_failure": 0.5, "format_error": 0.5},
        hang=0.5,
        tool_calls=0.0,
        timing={"new_samples": 0, "generation_s": 100.0, "execution_s": 0.0},
    )
    p = pooled_summary([a, b])
    assert p["n_rollouts"] == 8
    assert p["outcomes"] == pytest.approx(
        {
            "correct": 0.25,
            "optimization_failure": 0.0,
            "correctness_failure": 0.375,
            "format_error": 0.375,
        }
    )
    assert sum(p["outcomes"].values()) == pytest.approx(1.0) and set(p["outcomes"]) == set(OUTCOMES)
    assert p["hang"] == pytest.approx(0.375)
    assert p["tool_calls"] == pytest.approx(0.5) and p["tool_errors"] == pytest.approx(0.25)
    assert p["tokens"] == pytest.approx(15.0)
    assert p["new_rollouts"] == 2 and p["seconds_per_rollout"] == pytest.approx(2.0)  # b cached
    single = pooled_summary([_summary(4, {"correct": 0.5, "format_error": 0.5})])
    assert single["tool_calls"] == 0.0 and single["seconds_per_rollout"] is None
    with pytest.raises(ValueError):
        pooled_summary([])


@pytest.fixture(scope="module")
def sweep_dir(perturbed_checkpoint, tmp_path_factory):
    """A finished two-run sweep (k1, kinf) per setting, both runs the tiny model perturbed."""
    root = tmp_path_factory.mktemp("settings_sweep")
    for setting in ("single", "tool"):
        for seed, run in ((1, "k1"), (2, "kinf")):
            perturbed_checkpoint(root / setting / run / "final", seed)
    return root


SPEC = EvalSpec(
    backend="hf",
    temperature=1.0,
    max_new_tokens=6,
    n=2,
    batch_size=4,
    workers=1,
    max_turns=2,
    max_tool_calls=1,
    progress=False,
)


def test_alpha_grid_runs_in_each_settings_loop_then_ensembles_along_it(sweep_dir, monkeypatch):
    """Each setting's theta_alpha is evaluated by that setting's evaluator (tool: the multi-turn
    loop with the tools rendered), between that setting's own endpoints; the ensembles read the
    grid back; a re-run resumes without loading a model."""
    from recode_lib.data import load_benchmark

    problems = load_benchmark("microbench", limit=1)
    grids = alpha_settings(
        ["single", "tool"],
        sweep_dir,
        [2.0, 0.5, -1.0],
        problems,
        SPEC,
        benchmark="microbench",
        log=None,
    )
    for setting in ("single", "tool"):
        g = grids[setting]
        assert (g.endpoints.low, g.endpoints.high) == (
            sweep_dir / setting / "k1" / "final",
            sweep_dir / setting / "kinf" / "final",
        )
        assert sorted(g.result.summaries) == [-1.0, 0.5, 2.0]
        assert {s["setting"] for s in g.result.summaries.values()} == {setting}
        front = json.loads((sweep_dir / setting / "alpha" / "frontier.json").read_text())
        assert front["setting"] == setting and [r["alpha"] for r in front["rows"]] == [
            -1.0,
            0.5,
            2.0,
        ]
        assert front["spec_fingerprint"] == SPEC.fingerprint()
        assert str(sweep_dir / setting / "k1") in front["endpoints"]["low"]
    tool = grids["tool"].result.summaries[0.5]
    assert "episodes" in tool and "episodes" not in grids["single"].result.summaries[0.5]
    rows = [
        json.loads(x)
        for x in (sweep_dir / "tool" / "alpha" / "eval" / "alpha_0.5" / "samples.jsonl")
        .read_text()
        .splitlines()
    ]
    assert len(rows) == 2 and all(1 <= r["turns"] <= 2 and "transcript" in r for r in rows)
    ens = ensemble_settings(["single", "tool"], sweep_dir, [1, 2], stable=(-1.0, 2.0), n_boot=20)
    for setting in ("single", "tool"):
        p = json.loads((sweep_dir / setting / "ensemble" / "passk.json").read_text())
        assert p["setting"] == setting and p == json.loads(json.dumps(ens[setting].payload))
        assert p["pools"]["interpolation"] == [0.5]
        assert p["pools"]["interp+extrap"] == [-1.0, 0.5, 2.0]
        assert {r["k"] for r in p["rows"]} == {1, 2}
    with pytest.raises(ValueError, match="samples per checkpoint"):
        ensemble_settings(["tool"], sweep_dir, [1, 4])

    def boom(*a, **k):
        raise AssertionError("a cached alpha grid must not load a model")

    monkeypatch.setattr("recode_lib.core.models.load_model", boom)
    again = alpha_settings(
        ["tool"], sweep_dir, [-1.0, 0.5, 2.0], problems, SPEC, benchmark="microbench", log=None
    )
    assert {a: s["pass@1"] for a, s in again["tool"].result.summaries.items()} == {
        a: s["pass@1"] for a, s in grids["tool"].result.summaries.items()
    }


def test_tool_setting_live_model_renders_the_tools(sweep_dir):
    """The live model's generator in the tool setting renders the tool signatures (the
    evaluator's own tool_generator), and pushing theta_alpha changes what it generates from."""
    from recode_lib.weights.sweep import live_model

    live = live_model(
        sweep_dir / "tool" / "k1" / "final",
        sweep_dir / "tool" / "kinf" / "final",
        SPEC.replace(setting="tool"),
    )
    try:
        text, _ = live.generator.render([{"role": "user", "content": "hi"}])
        assert "<tools>" in text and "run_python" in text
        live.set(2.0)
        assert live.alpha == 2.0
    finally:
        live.close()
    from types import SimpleNamespace

    from recode_lib.weights.sweep import setting_build

    with pytest.raises(ValueError, match="hf or vllm"):  # EvalSpec refuses it first, too
        setting_build(sweep_dir, SimpleNamespace(backend="openai", setting="tool"))


def test_a_setting_without_two_finished_runs_raises(tmp_path):
    from recode_lib.orchestration.endpoints import EndpointError

    (tmp_path / "tool" / "kinf" / "final").mkdir(parents=True)
    (tmp_path / "tool" / "kinf" / "final" / ".complete").write_text("")
    with pytest.raises(EndpointError, match="two finished runs"):
        alpha_settings(["tool"], tmp_path, [0.5], [], SPEC, log=None)


def _sweep_payload(spec):
    return {
        "rows": [
            {"run": "k1", "k": "1", "correctness_failure": 0.2, "optimization_failure": 0.5},
            {"run": "kinf", "k": "inf", "correctness_failure": 0.4, "optimization_failure": 0.1},
        ],
        **F.spec_fields(spec),
    }


def _alpha_samples():
    outs = {-1.0: "optimization_failure", 0.5: "correct", 2.0: "correctness_failure"}
    return {
        a: [
            {
                "problem_id": f"p{i}",
                "sample": j,
                "outcome": o if (i + j) % 2 else "correct",
                "n_tokens": 5,
            }
            for i in range(3)
            for j in range(2)
        ]
        for a, o in outs.items()
    }


def test_setting_frontiers_figure_overlays_alpha_points_per_setting(tmp_path):
    spec = EvalSpec(temperature=0.8, max_new_tokens=64, n=2)
    sweeps, grids = {}, {}
    for s in ("single", "tool", "agentic"):
        write_json_atomic(tmp_path / s / "frontier.json", _sweep_payload(spec))
        sweeps[s] = tmp_path / s / "frontier.json"
    for s in ("single", "tool"):  # the agentic panel has no alpha grid yet
        F.write_frontier(tmp_path / s / "alpha", _alpha_samples(), spec=spec.replace(n=4))
        grids[s] = tmp_path / s / "alpha" / "frontier.json"
    paths = plots.fig_setting_frontiers(sweeps, grids, out_dir=tmp_path / "figs")
    assert [p.name for p in paths] == ["setting_frontiers.pdf", "setting_frontiers.png"]
    assert paths[1].stat().st_size > 5000
    F.write_frontier(tmp_path / "odd", _alpha_samples(), spec=spec.replace(temperature=0.2))
    with pytest.raises(F.FrontierError, match="sampled differently"):
        plots.fig_setting_frontiers(
            sweeps, {"tool": tmp_path / "odd" / "frontier.json"}, out_dir=tmp_path / "figs"
        )
    with pytest.raises(ValueError, match="without a sweep"):
        plots.fig_setting_frontiers(
            {"tool": sweeps["tool"]}, {"single": grids["single"]}, out_dir=tmp_path / "figs"
        )


def test_rebuild_all_draws_the_settings_side_by_side_from_notebook_11s_files(tmp_path):
    spec = EvalSpec(temperature=0.8, max_new_tokens=64, n=2)
    run = tmp_path / "run"
    built = plots.rebuild_all(run, out_dir=tmp_path / "figs")
    assert "11_settings_sweep" in built["skipped"]["setting_frontiers"]
    for s in ("agentic", "single"):
        write_json_atomic(run / "11_settings_sweep" / s / "frontier.json", _sweep_payload(spec))
    F.write_frontier(run / "11_settings_sweep" / "single" / "alpha", _alpha_samples(), spec=spec)
    built = plots.rebuild_all(run, out_dir=tmp_path / "figs")
    assert built["made"]["setting_frontiers"][1].endswith("setting_frontiers.png")
