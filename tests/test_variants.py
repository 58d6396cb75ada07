"""Profile variants (recode_lib.runner.variants) and the paper profile's scale_32b: paper B's
strictness/extrapolation study (06-08) again at 32B, placed by the plan (ZeRO-3 training, TP
generation), counted by the budget, listed by `recode stage`; smoke and laptop unchanged."""

from __future__ import annotations

import re

import pytest

from recode_lib.cli import main
from recode_lib.plan import ClusterSpec, make_plan
from recode_lib.runner.pipeline import (
    PipelineError,
    load_profile,
    profile_parameters,
    resume_command,
    run_pipeline,
    variant_parameters,
)
from recode_lib.runner.staging import stage_items
from recode_lib.runner.variants import (
    VARIANTS_KEY,
    VariantError,
    variant_notebooks,
    variant_profile,
    variant_spec,
)

B32 = "Qwen/Qwen2.5-32B-Instruct"
SPEC = {
    "common": {"MODEL": "m"},
    "06_strictness_sweep": {"MODEL": "small", "KS": "1,2"},
    "07_weight_averaging": {"TENSOR_PARALLEL_SIZE": 1, "ALPHAS": "0,1"},
    VARIANTS_KEY: {
        "big": {
            "06_strictness_sweep": {"MODEL": "large"},
            "07_weight_averaging": {"TENSOR_PARALLEL_SIZE": 4},
            "08_ensemble_passk": None,
        }
    },
}


def test_variant_values_win_key_by_key_and_the_rest_is_the_base():
    v = variant_spec(SPEC, "big")
    assert VARIANTS_KEY not in v and v["common"] == SPEC["common"]
    assert v["06_strictness_sweep"] == {"MODEL": "large", "KS": "1,2"}
    assert v["07_weight_averaging"] == {"TENSOR_PARALLEL_SIZE": 4, "ALPHAS": "0,1"}
    assert v["08_ensemble_passk"] == {}
    assert SPEC["06_strictness_sweep"]["MODEL"] == "small"  # the base is not touched
    assert variant_notebooks(SPEC, "big") == [
        "06_strictness_sweep",
        "07_weight_averaging",
        "08_ensemble_passk",
    ]
    assert variant_profile("paper", "big") == "paper@big"


def test_an_unknown_variant_raises_naming_the_known_ones():
    with pytest.raises(VariantError, match=r"no variant 'huge'; known: big"):
        variant_spec(SPEC, "huge")


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"big": {"not_a_stem": {}}}, "not a notebook section"),
        ({"big": {"06_strictness_sweep": 3}}, "must be a parameter mapping"),
        ({"big": {}}, "must map notebook stems"),
        ({"a/b": {"06_strictness_sweep": {}}}, "letters, digits"),
    ],
)
def test_a_malformed_overlay_raises_naming_it(bad, match):
    with pytest.raises(VariantError, match=match):
        variant_spec({VARIANTS_KEY: bad}, next(iter(bad)))


@pytest.mark.parametrize("profile", ["smoke", "laptop"])
def test_smoke_and_laptop_have_no_variant(profile):
    assert VARIANTS_KEY not in load_profile(profile)
    assert variant_parameters(profile) == {}


def test_the_paper_scale_32b_runs_06_to_08_at_32b_and_changes_nothing_else():
    base = profile_parameters("paper")
    ((v, stems),) = variant_parameters("paper").values()
    assert stems == ["06_strictness_sweep", "07_weight_averaging", "08_ensemble_passk"]
    assert base["06_strictness_sweep"]["MODEL"] == "Qwen/Qwen2.5-7B-Instruct"  # base unchanged
    six = v["06_strictness_sweep"]
    assert six["MODEL"] == B32 and six["RECIPE"] == "strictness_paper_32b"
    assert (
        six["PROFILE"] == "paper@scale_32b"
        and v["07_weight_averaging"]["PROFILE"] == "paper@scale_32b"
    )
    # the study itself is 06-08's: same strictness levels, seeds, protocol, alpha grid, pass@k
    for stem, keys in {
        "06_strictness_sweep": (
            "KS",
            "PARTIAL_CREDIT",
            "SEEDS",
            "EVAL_TEMPERATURE",
            "EVAL_MAX_NEW_TOKENS",
            "EVAL_DIFFICULTY",
            "EVAL_N_SAMPLES",
            "BENCHMARK",
        ),
        "07_weight_averaging": ("ALPHAS", "N_SAMPLES", "SPEC_FROM_SWEEP"),
        "08_ensemble_passk": ("PASS_K", "STABLE_MIN", "STABLE_MAX"),
    }.items():
        for k in keys:
            assert v[stem][k] == base[stem][k], (stem, k)


def test_the_32b_recipe_is_the_7b_recipe_but_for_model_and_placement():
    from recode_lib.plan.stages import read_recipe

    a, b = read_recipe("strictness_paper"), read_recipe("strictness_paper_32b")
    placement = {
        "model",
        "name",
        "per_device_train_batch_size",
        "gradient_accumulation_steps",
        "vllm_tensor_parallel_size",
        "vllm_max_model_length",
    }
    assert {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)} <= placement
    assert b["model"] == B32
    per_step = lambda r: r["per_device_train_batch_size"] * r["gradient_accumulation_steps"]  # noqa: E731
    assert per_step(a) == per_step(b)  # 256 completions per optimizer step over 8 GPUs


@pytest.fixture(scope="module")
def plans():
    params, variants = profile_parameters("paper"), variant_parameters("paper")
    return {
        mem: (
            make_plan(params, ClusterSpec(8, mem), profile="paper"),
            make_plan(params, ClusterSpec(8, mem), profile="paper", variants=variants),
        )
        for mem in (80, 141)
    }


def test_the_plan_places_scale_32b_with_zero3_training_and_tp_generation(plans):
    _, plan = plans[141]
    rows = {(p.notebook, p.stage): p for p in plan.placements if "@scale_32b" in p.notebook}
    assert {n for n, _ in rows} == {
        "06_strictness_sweep@scale_32b",
        "07_weight_averaging@scale_32b",
    }
    train = [p for (n, _), p in rows.items() if n.startswith("06") and "GRPO" in p.stage]
    assert train and all(p.model == B32 and "ZeRO-3 x8" in p.where and p.tp == 4 for p in train)
    sweep = [p for (n, _), p in rows.items() if n.startswith("07")]
    assert sweep and all(p.tp == 2 for p in sweep)  # TENSOR_PARALLEL_SIZE of the variant
    assert plan.ok and not plan.variant_problems  # fits one node of 8 x 141 GB


def test_on_80gb_gpus_the_variant_is_refused_but_the_profile_still_fits(plans):
    base, plan = plans[80]
    assert base.ok and plan.ok and plan.problems == base.problems == []
    assert plan.variant_problems
    assert all(p.startswith("06_strictness_sweep@scale_32b") for p in plan.variant_problems)
    assert plan.to_dict()["variant_problems"] == plan.variant_problems


def test_the_budget_counts_the_variant(plans):
    base, plan = plans[141]
    hours = plan.notebook_hours()
    extra = sum(h["wall_h"] for n, h in hours.items() if n.endswith("@scale_32b"))
    assert extra > 0 and set(base.notebook_hours()) < set(hours)
    assert plan.total_wall_h == pytest.approx(base.total_wall_h + extra)
    # 32B: each of its stages costs more than the same 7B stage (4.3x the parameters)
    assert hours["06_strictness_sweep@scale_32b"]["gpu_h"] > hours["06_strictness_sweep"]["gpu_h"]


def test_recode_plan_shows_the_variant(capsys, plans):
    assert main(["plan", "--profile", "paper", "--gpus", "8", "--gpu-memory", "80"]) == 0
    out = capsys.readouterr().out
    assert "06_strictness_sweep@scale_32b" in out and "07_weight_averaging@scale_32b" in out
    assert "variant stages that do not fit 8 x 80 GB" in out
    # the total counts the variant and says how much of it is the profile's own run
    base, plan = plans[80]
    assert re.search(
        rf"of which the profile's own notebooks {base.total_wall_h:.0f} h; variant scale_32b "
        rf"{plan.total_wall_h - base.total_wall_h:.0f} h \(a run of its own: recode reproduce "
        r"--variant scale_32b; refused on this cluster\)",
        out,
    )
    assert (
        main(["plan", "--profile", "paper", "--gpus", "8", "--gpu-memory", "80", "--no-variants"])
        == 0
    )
    assert "@scale_32b" not in capsys.readouterr().out


def test_recode_stage_lists_the_32b_model():
    items = stage_items(profile_parameters("paper"), "paper", variants=variant_parameters("paper"))
    item = next(i for i in items if i.name == B32)
    assert any("06_strictness_sweep@scale_32b" in str(u) for u in item.used_by)
    assert B32 not in {i.name for i in stage_items(profile_parameters("paper"), "paper")}


def test_running_an_unknown_variant_refuses_before_any_notebook():
    with pytest.raises(PipelineError, match="no variant 'nope'; known: scale_32b"):
        run_pipeline("paper", variant="nope", check_plan=False, log=lambda *_: None)
    assert (
        resume_command("paper", variant="scale_32b")
        == "recode reproduce --profile paper --variant scale_32b"
    )


def test_reproduce_with_a_variant_runs_only_its_notebooks_under_its_own_profile(
    tmp_path, monkeypatch
):
    """run_pipeline(variant=...) hands the runner the variant's notebooks only, with its merged
    parameters and PROFILE "paper@scale_32b" (its own run folder); nothing is executed here."""
    import recode_lib.runner.pipeline as pipeline

    monkeypatch.setenv("RECODE_RUNS_DIR", str(tmp_path))
    seen = {}

    def fake_run_locked(profile, plan, every, **kw):
        seen.update(profile=profile, plan=plan, resume=kw["resume"])
        return []

    monkeypatch.setattr(pipeline, "run_locked", fake_run_locked)
    pipeline.run_pipeline("paper", variant="scale_32b", check_plan=False, log=lambda *_: None)
    assert seen["profile"] == "paper@scale_32b"
    assert [nb.stem for nb, _, _ in seen["plan"]] == [
        "06_strictness_sweep",
        "07_weight_averaging",
        "08_ensemble_passk",
    ]
    six = seen["plan"][0][1]
    assert six["MODEL"] == B32 and six["PROFILE"] == "paper@scale_32b"
    assert "--variant scale_32b" in seen["resume"]
    assert (tmp_path / "paper@scale_32b").is_dir()
