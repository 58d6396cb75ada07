"""Profile-level protocol properties (paper B): the strictness sweep (06) and the repair runs
(09) start from one shared checkpoint, which may be any local checkpoint folder."""

import pytest

from recode_lib.core.models import ModelError, resolve_model
from recode_lib.runner.pipeline import load_profile


def section(profile, stem):
    spec = load_profile(profile)
    return {**spec.get("common", {}), **spec.get(stem, {})}


@pytest.mark.parametrize("profile", ["smoke", "paper", "laptop"])
def test_sweep_and_repair_share_one_start_checkpoint(profile):
    assert (
        section(profile, "06_strictness_sweep")["MODEL"] == section(profile, "09_repair")["MODEL"]
    )


def test_the_start_checkpoint_may_be_a_local_sft_folder(tiny_model_dir, tmp_path):
    assert resolve_model(str(tiny_model_dir)) == str(tiny_model_dir)  # a local folder is used as is
    assert resolve_model("org/some-sft-checkpoint") == "org/some-sft-checkpoint"  # a hub id
    (tmp_path / "not_a_checkpoint").mkdir()
    with pytest.raises(ModelError, match="no config.json"):
        resolve_model(str(tmp_path / "not_a_checkpoint"))


def test_every_laptop_parameter_is_declared_by_its_notebook():
    from pathlib import Path

    from recode_lib.runner.pipeline import resolve_parameters

    spec = load_profile("laptop")
    for nb in sorted(Path(__file__).resolve().parent.parent.glob("notebooks/[0-9]*.ipynb")):
        resolve_parameters(nb, "laptop", spec, {})  # raises on a parameter no cell declares


def test_laptop_trains_lora_on_what_00_calibrated_with_the_same_protocol():
    from recode_lib.training.grpo import load_recipe
    from recode_lib.training.recipe_check import recipe_fields

    cal = section("laptop", "00_data_and_models")
    assert cal["CALIBRATE"] and cal["CAL_N_SAMPLES"] >= 2
    for stem in ("04_cg_grpo", "06_strictness_sweep"):
        s = section("laptop", stem)
        r = load_recipe(s["RECIPE"], **recipe_fields(s.get("RECIPE_FIELDS")))
        assert r.lora and r.lora["r"] >= 1  # LoRA through peft_config
        assert s["BENCHMARK"].startswith("calibrated:laptop")
        assert s["REASONING"] == cal["CAL_REASONING"] == r.reasoning  # the calibrated prompt style
        assert r.max_completion_length == cal["CAL_MAX_NEW_TOKENS"]
        assert r.temperature == cal["CAL_TEMPERATURE"]
        assert r.learning_rate >= 1e-4  # moves a 135M model
    keep_ks = str(cal["CAL_KEEP_KS"]).split(
        ","
    )  # calibration keeps what either endpoint learns from
    assert "inf" in keep_ks and set(
        str(section("laptop", "06_strictness_sweep")["KS"]).split(",")
    ) <= set(keep_ks)
    assert section("laptop", "99_paper_figures")["CLAIMS_REPORT"]
    trained = str(section("laptop", "04_cg_grpo")["VARIANTS"]).split(",")
    assert {"gated", "additive"} <= set(trained)  # what claim (b) compares
    assert set(str(section("laptop", "05_codegen_eval")["VARIANTS"]).split(",")) <= set(trained)
    ks = [int(k) for k in str(section("laptop", "08_ensemble_passk")["PASS_K"]).split(",")]
    assert max(ks) <= section("laptop", "07_weight_averaging")["N_SAMPLES"]
    s11 = section(
        "laptop", "11_settings_sweep"
    )  # its ensemble pools ALPHA_N_SAMPLES per checkpoint
    assert max(int(k) for k in str(s11["PASS_K"]).split(",")) <= s11["ALPHA_N_SAMPLES"]
    alphas = [float(a) for a in section("laptop", "07_weight_averaging")["ALPHAS"].split(",")]
    t = section("laptop", "07_weight_averaging")["FORMAT_THRESHOLD"]
    assert min(alphas) < -t and max(alphas) > t and 0.0 in alphas and 1.0 in alphas


@pytest.mark.parametrize("profile", ["smoke", "paper", "laptop"])
def test_only_the_laptop_profile_leaves_a_notebook_out_and_says_why(profile):
    from recode_lib.runner.pipeline import excluded_reason, list_notebooks

    spec = load_profile(profile)
    left_out = {
        nb.stem: excluded_reason(nb, spec) for nb in list_notebooks() if excluded_reason(nb, spec)
    }
    if profile == "laptop":  # 09 and 10 carry no claim at 135M (11 carries claim (d), tool use)
        assert set(left_out) == {"09_repair", "10_math_domain"}
        assert all("PROFILE=smoke" in why for why in left_out.values())
    else:  # the end-to-end check and the paper run every notebook
        assert left_out == {}
