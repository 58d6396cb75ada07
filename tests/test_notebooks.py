"""Notebooks as tested artefacts: every pipeline notebook runs top to bottom with the tiny model
(marker `notebooks`: `make test-notebooks`, run by CI, not by `make test`), and committed
notebooks are stripped and follow the parameters-cell convention."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from recode_lib.core.paths import data_dir
from recode_lib.evaluation.summary import OUTCOMES
from recode_lib.runner.nbtools import is_stripped
from recode_lib.runner.pipeline import (
    PipelineError,
    declared_parameters,
    list_notebooks,
    notebooks_dir,
    run_pipeline,
)

NOTEBOOKS = list_notebooks()
TINY = Path(__file__).parent / "notebook_params_tiny.yaml"


@pytest.fixture(scope="module")
def executed(tiny_model_dir, tmp_path_factory):
    """Run the whole pipeline once with the tiny model; returns (runs dir, error or None).
    The notebooks read real benchmark problems (HumanEval+, MBPP+, AIME, LeetCode): without the
    data directory they cannot run offline, so these tests skip with the reason."""
    if data_dir() is None:
        pytest.skip(
            "the pipeline notebooks need the benchmark files: set RECODE_DATA_DIR or "
            "place them at ../shared/data"
        )
    root = tmp_path_factory.mktemp("nbruns")
    params = root / "tiny.yaml"
    params.write_text(TINY.read_text().replace("{tiny_model}", str(tiny_model_dir)))
    old = os.environ.get("RECODE_RUNS_DIR")
    os.environ["RECODE_RUNS_DIR"] = str(root / "runs")
    error = None
    try:
        run_pipeline("tiny", params_file=params, log=lambda *_: None)
    except PipelineError as exc:
        error = str(exc)
    finally:
        if old is None:
            os.environ.pop("RECODE_RUNS_DIR", None)
        else:
            os.environ["RECODE_RUNS_DIR"] = old
    return root / "runs" / "tiny", error


@pytest.mark.notebooks
@pytest.mark.timeout(
    1800
)  # the first test's setup runs the whole pipeline (11 runs three settings)
@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes_with_tiny_model(nb, executed):
    run, error = executed
    manifest = json.loads((run / "manifest.json").read_text())
    entry = manifest.get(nb.stem)
    if entry is None:
        pytest.fail(f"{nb.stem} did not run; the pipeline stopped earlier: {error}")
    assert entry["status"] == "completed", entry.get("error")
    out = run / nb.stem
    assert out.is_dir() and any(out.iterdir()), f"{nb.stem} wrote no results under {out}"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_is_stripped(nb):
    assert is_stripped(nb), f"{nb} carries outputs; run `make strip`"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_parameters_cell_convention(nb):
    params = declared_parameters(nb)
    assert params.get("PROFILE") == "smoke"
    assert all(
        isinstance(v, (str, int, float, bool)) or v is None
        for k, v in params.items()
        if k != "RECIPE_FIELDS"
    )
    assert params.get("RECIPE_FIELDS", {}) == {}  # the one mapping: recipe fields (recipe_fields)
    first_code = next(c for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code")
    assert "parameters" in first_code["metadata"].get("tags", [])


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_papermill_reads_every_declared_parameter(nb):
    """papermill's own line parser (what `papermill --help-notebook` and JupyterLab's
    parameter tooling use) must see every parameter, e.g. no quotes inside comments."""
    import papermill

    assert set(papermill.inspect_notebook(str(nb))) == set(declared_parameters(nb))


@pytest.mark.parametrize("profile", ["smoke", "paper", "laptop"])
def test_every_notebook_has_a_profile_section(profile):
    spec = yaml.safe_load((notebooks_dir() / "params" / f"{profile}.yaml").read_text())
    stems = {nb.stem for nb in NOTEBOOKS}
    assert stems <= set(spec), f"{profile}.yaml lacks sections for {sorted(stems - set(spec))}"


def _rate(x) -> bool:
    return isinstance(x, (int, float)) and 0.0 <= x <= 1.0


def _check_00(h):
    assert h["n_tokens"] > 0 and h["tokens_per_s"] > 0
    assert isinstance(h["format_ok"], bool) and "microbench" in h["benchmarks"]
    assert isinstance(h["calibration_kept"], int) and 0 <= h["calibration_kept"] <= 4


def _check_01(h):
    assert h["n_problems"] == 3 and 0 <= h["n_usable_traces"] <= h["n_traces"]
    assert 0 <= h["n_accepted_rewrites"] <= h["n_rewrites"]
    assert h["n_train_pairs"] + h["n_val_pairs"] == h["n_pairs"]


def _check_02(h):
    assert h["untrained"] == (h["n_train_used"] == 0) and h["n_train_used"] <= h["n_train"]
    assert (h["accuracy"] is None) == (h["n_eval"] == 0)
    assert h["accuracy"] is None or _rate(h["accuracy"])
    if h["accuracy"] is not None:  # the tiny profile runs the generator ablation
        ab = h["ablation"]  # both RMs on the same held-out pairs
        assert set(ab) == {"single", "cross", "n"}
        assert ab["n"] == 0 or (_rate(ab["single"]) and _rate(ab["cross"]))


def _check_03(h):
    assert 0 <= h["n_kept"] <= h["n_checked"] <= h["n_candidates"]
    assert 0 <= h["n_seeded"] <= h["n_pairs"]
    assert all(_rate(a) for a in h["accuracy"].values())
    assert (h["n_pairs"] > 0) == ("longer_trace" in h["accuracy"])
    # a batch run adjudicates nothing: its benchmark is labelled unverified
    assert h["verified"] is False and h["n_human_verified"] == 0
    assert h["benchmark_file"].endswith("-unverified.jsonl")
    by_level = h["accuracy_by_verification"]
    assert by_level["lcb_rb_human_verified"] == {}
    assert all(set(v) == set(h["accuracy"]) for v in by_level.values() if v)
    assert (h["n_pairs"] > 0) == any(by_level.values())


def _check_04(h):
    assert h["variants"] == ["gated", "outcome_only"] and h["n_train"] == h["n_eval"] == 2
    assert h["steps"] == {"gated": 1, "outcome_only": 1}
    assert set(h["pass@1"]) == {"start", "gated", "outcome_only"}
    assert h["transfer"] is None  # the cross-model transfer is off here
    assert all(_rate(v) for v in h["pass@1"].values())
    scale = h["proc_scale"]  # PROC_SCALE "start": from the RM's scores
    assert set(scale) == {"proc_center", "proc_temperature"} and scale["proc_temperature"] > 0
    # the RM scored every evaluated model's held-out samples; R_out there is the pass rate
    assert set(h["held_out_proc"]) == set(h["pass@1"])
    for name, s in h["held_out_proc"].items():
        assert 0 < s["proc"] < 1 and s["proc_ci"][0] <= s["proc"] <= s["proc_ci"][1]
        assert s["out"] == pytest.approx(h["pass@1"][name])


def _check_05(h):
    rows = {r["run"]: r for r in h["rows"]}
    assert set(rows) == {"humanevalplus", "mbppplus", "microbench"} and h["k"] == [1]
    for r in rows.values():
        assert r["problems"] == 2 and r["samples"] == 2 and _rate(r["pass@1"])
        assert sum(r[o] for o in OUTCOMES) == pytest.approx(1.0)
    # ReCode's headline table: start model and every 04 variant on every benchmark
    assert h["policies"] == ["start", "outcome_only", "gated"] and h["baseline"] == "outcome_only"
    assert h["transfer"] is None
    assert h["benchmarks"] == ["humanevalplus", "mbppplus", "microbench"]
    for p in h["policies"]:
        assert set(h["table"][p]) == set(h["benchmarks"])
        for cell in h["table"][p].values():
            assert _rate(cell["pass@1"]) and cell["mean_tokens"] >= 0 and cell["n_problems"] == 2
            lo, hi = cell["ci"]
            assert lo <= cell["pass@1"] <= hi
        s = h["summary"][p]
        avg = sum(c["pass@1"] for c in h["table"][p].values()) / 3
        assert s["average_pass@1"] == pytest.approx(avg)
    base = h["summary"]["outcome_only"]["average_pass@1"]
    for p in h["policies"]:
        g = h["summary"][p]["gain_vs_baseline"]
        if base == 0:
            assert g is None
        else:
            assert g == pytest.approx((h["summary"][p]["average_pass@1"] - base) / base)
        t0 = h["summary"]["outcome_only"]["mean_tokens"]
        tc = h["summary"][p]["token_change_vs_baseline"]
        assert (
            tc is None if t0 == 0 else tc == pytest.approx(h["summary"][p]["mean_tokens"] / t0 - 1)
        )


def _check_06(h):
    assert h["runs"] == ["k1", "kinf"] and h["ks"] == ["1", "inf"] and h["n_eval"] == 2
    assert h["partial_runs"] == ["partial_discrete"]  # trained and on the same frontier
    assert set(h["pass@1"]) == set(h["outcomes"]) == {"k1", "kinf", "partial_discrete"}
    assert all(_rate(v) for v in h["pass@1"].values())
    assert all(sum(o.values()) == pytest.approx(1.0) for o in h["outcomes"].values())


def _check_07(h):
    assert h["alphas"] == [-0.5, 0.0, 1.0, 2.5] and h["n_samples"] == 2
    assert set(h["pass@1"]) == set(h["format_error"]) == {repr(a) for a in h["alphas"]}
    assert all(_rate(v) for v in list(h["pass@1"].values()) + list(h["format_error"].values()))


def _check_08(h):
    assert h["ks"] == [1, 2] and h["n_alphas"] == 4 and h["n_problems"] >= 1
    assert {f"{p}@{k}" for p in h["pools"] for k in h["ks"]} <= set(h["pass"])
    assert all(_rate(v) for v in h["pass"].values())


def _check_09(h):
    assert h["models"] == ["start", "original_only", "failure_conditioned"] and h["rounds"] == 2
    assert all(_rate(v) for v in h["original_pass@1"].values())
    assert all(v is None or _rate(v) for v in h["repair_rate"].values())
    assert (h["n_eval_tasks"] == 0) == all(v is None for v in h["repair_rate"].values())
    b = h[
        "paper_b_protocol"
    ]  # the second protocol, beside the first (tiny: 12 tokens, any difficulty)
    assert b["max_new_tokens"] == 12 and b["temperature"] == 1.0 and b["n_eval"] == 1
    assert set(b["original_pass@1"]) == set(h["original_pass@1"])
    assert all(_rate(v) for v in b["original_pass@1"].values())


def _check_10(h):
    assert set(h["pass@1"]) == {"start", *h["variants"]} and h["n_eval"] == 2
    assert all(_rate(v) for v in list(h["pass@1"].values()) + list(h["format_rate"].values()))
    assert h["train_set"] == "math_synth" and h["eval_benchmark"] == "aime24"
    assert h["n_samples"] == 2 and set(h["avg@2"]) == set(h["pass@2"]) == set(h["pass@1"])
    assert all(lo <= h["pass@1"][m] <= hi for m, (lo, hi) in h["pass@1_ci"].items())
    assert not set(h["train_ids"]) & set(h["eval_ids"])
    assert all(i.startswith("math_synth/") for i in h["train_ids"])
    assert all(i.startswith("aime24/") for i in h["eval_ids"])


def _check_11(h):
    settings = ["single", "tool", "agentic"]
    assert h["settings"] == settings and h["runs"] == ["k1", "kinf"] and h["n_eval"] == 2
    assert h["summary_settings"] == h["alpha_settings"] == {s: [s] for s in settings}
    assert h["alphas"] == [-1.0, 0.5, 2.0]
    for s in settings:
        assert all(_rate(v) for v in h["pass@1"][s].values())
        assert all(sum(o.values()) == pytest.approx(1.0) for o in h["outcomes"][s].values())
        assert set(h["alpha_pass@1"][s]) == {"-1.0", "0.5", "2.0"}
        assert all(_rate(v) for v in h["alpha_pass@1"][s].values())
        ens = h["ensemble"][s]
        assert (
            ens["pools"]["interpolation"] == [0.5] and ens["pools"]["interp+extrap"] == h["alphas"]
        )
        assert set(ens["pass"]) == {f"{p}@{k}" for p in ens["pools"] for k in (1, 2)}
        assert all(_rate(v) for v in ens["pass"].values())
        per = h["per_setting"][s]  # 2 problems x (2 runs x 1 + 3 alphas x 2 samples)
        assert per["n_rollouts"] == 16 and sum(per["outcomes"].values()) == pytest.approx(1.0)
        assert (
            per["tool_errors"] <= per["tool_calls"]
            and 0 <= per["hang"] <= per["outcomes"]["correctness_failure"]
        )
        assert per["seconds_per_rollout"] is None or per["seconds_per_rollout"] > 0
    assert h["episodes"]["single"] == {"k1": None, "kinf": None}
    assert h["per_setting"]["single"]["tool_calls"] == 0
    for s in ("tool", "agentic"):
        assert all(1 <= e["mean_turns"] <= 2 for e in h["episodes"][s].values())


def _check_99(h):
    assert len(h["made"]) + len(h["skipped"]) == 10 and not set(h["made"]) & set(h["skipped"])
    assert {
        "frontier",
        "outcome_classes",
        "ensemble_passk",
        "eval_outcomes",
        "headline",
        "setting_frontiers",
    } <= set(h["made"])
    assert h["n_files"] >= 2 * len(h["made"])  # a PDF and a PNG each (rm_accuracy: + csv, md)
    assert set(h["claims"]) == {
        "learning",
        "gate_signature",
        "extrapolation",
        "tool_use",
    }  # the laptop report
    assert all(v in (True, False, None) for v in h["claims"].values())


HEADLINES = {
    "00_data_and_models": _check_00,
    "01_crpl_synthesis": _check_01,
    "02_reward_model": _check_02,
    "03_lcb_rb": _check_03,
    "04_cg_grpo": _check_04,
    "05_codegen_eval": _check_05,
    "06_strictness_sweep": _check_06,
    "07_weight_averaging": _check_07,
    "08_ensemble_passk": _check_08,
    "09_repair": _check_09,
    "10_math_domain": _check_10,
    "11_settings_sweep": _check_11,
    "99_paper_figures": _check_99,
}


def test_every_notebook_has_a_headline_check():
    assert set(HEADLINES) == {nb.stem for nb in NOTEBOOKS}


@pytest.mark.notebooks
@pytest.mark.timeout(1800)  # also when selected alone: its setup runs the whole pipeline
@pytest.mark.parametrize("name", sorted(HEADLINES))
def test_notebook_headline_values(name, executed):
    """Each notebook writes its headline values to <run>/<notebook>/headline.json; they must be
    consistent with the tiny profile's parameters (counts, keys, rates in [0, 1])."""
    run, _ = executed
    path = run / name / "headline.json"
    assert path.is_file(), f"{name} wrote no headline.json"
    HEADLINES[name](json.loads(path.read_text()))


@pytest.mark.notebooks
@pytest.mark.timeout(1800)
def test_repair_notebook_records_every_model_and_online_round(executed):
    run, _ = executed
    repair = json.loads((run / "09_repair" / "repair.json").read_text())
    assert [r["model"] for r in repair["rows"]] == ["start", "original_only", "failure_conditioned"]
    assert repair["rounds"] == 2 and set(repair["train_tasks"]) == {"round1", "round2"}
    assert (run / "09_repair" / "failure_conditioned_r2" / "final" / ".complete").is_file()


@pytest.mark.notebooks
@pytest.mark.timeout(1800)
def test_every_rl_notebook_starts_from_notebook_00s_sft_start(executed, tiny_model_dir):
    """Paper B: every RL run starts "from one shared SFT checkpoint": notebook 00 trains it on
    the tiny model (SFT_START) and 04, 06, 09 and 11 start from it, not from MODEL."""
    run, _ = executed
    rec = json.loads((run / "00_data_and_models" / "start_model.json").read_text())
    assert rec["source"] == "sft" and rec["base"] == str(tiny_model_dir)
    start = rec["start"]
    assert start != str(tiny_model_dir) and (Path(start) / "config.json").is_file()
    assert json.loads((run / "04_cg_grpo" / "headline.json").read_text())["start_model"] == start
    assert json.loads((run / "09_repair" / "headline.json").read_text())["start_model"] == start
    assert json.loads((run / "06_strictness_sweep" / "frontier.json").read_text())["start"] == start
    for setting in ("single", "tool", "agentic"):
        frontier = run / "11_settings_sweep" / setting / "frontier.json"
        assert json.loads(frontier.read_text())["start"] == start, setting


@pytest.mark.parametrize("profile", ["smoke", "paper"])
def test_profile_parameters_resolve_for_every_notebook(profile):
    """Every key a profile sets for a notebook is declared by that notebook (no typos that
    would only surface on a GPU machine)."""
    from recode_lib.runner.pipeline import load_profile, resolve_parameters

    spec = load_profile(profile)
    for nb in NOTEBOOKS:
        params = resolve_parameters(nb, profile, spec)
        assert params["PROFILE"] == profile
