"""RECIPE_FIELDS (recode_lib.training.recipe_check): a profile sets recipe fields by the recipe's
own names as a mapping merged field by field over the recipe file, and each GRPO value of every
profile is decided in one place — the recipe file, or the profile's RECIPE_FIELDS — never by a
notebook parameter of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from recode_lib.cli.reproduce import parse_overrides
from recode_lib.runner.pipeline import declared_parameters, list_notebooks, profile_parameters
from recode_lib.training.grpo import RECIPES_DIR, config_fields, load_recipe
from recode_lib.training.recipe_check import RecipeFieldError, merge_fields, recipe_fields

TINY = Path(__file__).parent / "notebook_params_tiny.yaml"
GRPO_NOTEBOOKS = {
    "04_cg_grpo",
    "06_strictness_sweep",
    "09_repair",
    "10_math_domain",
    "11_settings_sweep",
}
# recipe fields a GRPO notebook declares as parameters because it uses them for something else
# too (problems, evaluation, the reward model's scoring, tool limits) and passes to the recipe
OWN_FIELDS = {
    "MODEL",
    "BENCHMARK",
    "SEED",
    "REASONING",
    "RM_PATH",
    "MAX_TOOL_CALLS",
    "TOOL_TIME_LIMIT_S",
}
# the fields profiles used to set through notebook parameters of their own
MOVED = (
    "max_steps",
    "num_generations",
    "per_device_train_batch_size",
    "max_completion_length",
    "learning_rate",
    "cpu_threads",
)


def test_recipe_fields_are_checked_by_their_own_names_and_kinds():
    fields = {
        "max_steps": 2,
        "learning_rate": 2.0e-5,
        "cpu_threads": None,
        "use_vllm": True,
        "vllm_mode": "server",
        "lora": {"r": 8, "alpha": 16},
    }
    assert recipe_fields(fields) == fields
    assert recipe_fields({}) == recipe_fields(None) == {}
    assert recipe_fields(None, model="m", seed=1) == {"model": "m", "seed": 1}


def test_an_unknown_field_raises_naming_it_and_the_nearest_fields():
    with pytest.raises(RecipeFieldError) as err:
        recipe_fields({"max_steps": 2, "max_step": 3})
    msg = str(err.value)
    assert "'max_step'" in msg and "nearest: max_steps" in msg
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize(
    "fields, says",
    [
        ("max_steps=1", "must be a mapping"),
        ({"max_steps": "abc"}, "recipe field max_steps must be int, got 'abc'"),
        ({"learning_rate": "2e-5"}, "write 2.0e-5"),
        ({"use_cpu": 1}, "use_cpu must be bool"),
        ({"seed": 3}, "set by the notebook's own parameter"),
    ],
)
def test_a_malformed_recipe_fields_is_refused_saying_why(fields, says):
    with pytest.raises(RecipeFieldError, match=says):
        recipe_fields(fields, seed=0)


def test_a_later_mapping_wins_field_by_field():
    assert merge_fields(
        {"max_steps": 300, "max_completion_length": 8192},
        {"max_steps": 1, "num_generations": 2},
        None,
    ) == {"max_steps": 1, "max_completion_length": 8192, "num_generations": 2}


def test_one_recipe_field_on_the_command_line_keeps_the_profiles_others():
    """The README's tip: `-p RECIPE_FIELDS.cpu_threads=1` adds one field; 06 of the smoke
    profile still trains the profile's one step (RECIPE_SET=cpu_threads=1 used to replace the
    profile's whole value, and 06 then trained the recipe's 2 steps)."""
    over = parse_overrides(["RECIPE_FIELDS.cpu_threads=1"])
    assert over == {"RECIPE_FIELDS": {"cpu_threads": 1}}
    p = profile_parameters("smoke", overrides=over)
    assert p["06_strictness_sweep"]["RECIPE_FIELDS"] == {
        "max_steps": 1,
        "max_completion_length": 128,
        "learning_rate": 1e-4,
        "share_first_generations": True,
        "cpu_threads": 1,
    }
    assert p["04_cg_grpo"]["RECIPE_FIELDS"] == {
        "share_first_generations": True,
        "rm_resident": False,
        "cpu_threads": 1,
    }
    assert parse_overrides(["RECIPE_FIELDS.max_steps=1", "RECIPE_FIELDS.bf16=auto"]) == {
        "RECIPE_FIELDS": {"max_steps": 1, "bf16": "auto"}
    }


def test_only_the_grpo_notebooks_declare_recipe_fields_and_none_declares_a_recipe_field():
    """A recipe field is never a notebook parameter of its own (MAX_STEPS, NUM_GENERATIONS,
    ...): RECIPE_FIELDS or the recipe file holds it; only fields the notebook also uses
    elsewhere (OWN_FIELDS) are parameters, passed to the recipe by name."""
    fields = {name.upper() for name in config_fields()}
    grpo = set()
    for nb in list_notebooks():
        declared = declared_parameters(nb)
        if "RECIPE_FIELDS" not in declared:
            continue
        grpo.add(nb.stem)
        assert declared["RECIPE_FIELDS"] == {}, (
            f"{nb.stem}: RECIPE_FIELDS' default is the recipe file"
        )
        own = (set(declared) & fields) - OWN_FIELDS
        assert not own, f"{nb.stem} declares recipe fields {sorted(own)}: set them in RECIPE_FIELDS"
        src = nb.read_text()
        assert "recipe_fields(RECIPE_FIELDS" in src and "recipe_overrides" not in src
    assert grpo == GRPO_NOTEBOOKS


def run_recipes(stem: str, p: dict) -> list[str]:
    if stem == "11_settings_sweep":
        return [
            p["SINGLE_RECIPE"] if s == "single" else p["RECIPE"].format(setting=s)
            for s in p["SETTINGS"].split(",")
        ]
    return [p["RECIPE"]] + (
        [p.get("TRANSFER_RECIPE") or p["RECIPE"]]
        if stem == "04_cg_grpo" and p.get("TRANSFER_MODEL")
        else []
    )


PROFILES = {"smoke": None, "laptop": None, "paper": None, "tiny": TINY}


@pytest.mark.parametrize("profile", list(PROFILES))
def test_every_profiles_grpo_values_are_decided_in_one_place(profile):
    """The run's value of each moved field is RECIPE_FIELDS' when it names the field, else the
    recipe file's; the profile section states it under no other key."""
    spec = yaml.safe_load(
        (
            PROFILES[profile]
            or Path(__file__).parent.parent / "notebooks" / "params" / f"{profile}.yaml"
        ).read_text()
    )
    params = profile_parameters(profile, PROFILES[profile])
    upper = {f.upper() for f in MOVED} | {"BATCH_SIZE"}
    for stem in sorted(GRPO_NOTEBOOKS & set(params)):
        p = params[stem]
        assert not upper & set(spec.get(stem, {})), (
            f"{profile}/{stem}: a recipe field by another name"
        )
        stated = recipe_fields(p["RECIPE_FIELDS"])
        for name in run_recipes(stem, p):
            in_file = yaml.safe_load((RECIPES_DIR / f"{name}.yaml").read_text())
            recipe = load_recipe(name, **stated)
            for field in MOVED:
                want = stated[field] if field in stated else in_file.get(field)
                assert getattr(recipe, field) == want, (profile, stem, name, field)


def test_the_smoke_profiles_04_steps_live_in_its_recipe_file_only():
    p = profile_parameters("smoke")["04_cg_grpo"]
    assert "MAX_STEPS" not in declared_parameters(
        Path(list_notebooks()[0]).parent / "04_cg_grpo.ipynb"
    )
    assert "max_steps" not in recipe_fields(p["RECIPE_FIELDS"])
    in_file = yaml.safe_load((RECIPES_DIR / f"{p['RECIPE']}.yaml").read_text())["max_steps"]
    assert load_recipe(p["RECIPE"], **recipe_fields(p["RECIPE_FIELDS"])).max_steps == in_file == 2


@pytest.mark.parametrize("profile", ["smoke", "laptop"])
def test_the_cpu_profiles_train_small_micro_batches(profile):
    """CPU memory: a GRPO backward over 16 completions of one micro-batch held 10.9-11.5 GiB on
    the laptop profile (04, 06); micro-batches of at most 4 with gradient accumulation stay
    under 6 GiB. Every GRPO run of the CPU profiles trains at most 4 completions at once."""
    params = profile_parameters(profile)
    for stem in sorted(GRPO_NOTEBOOKS & set(params)):
        p = params[stem]
        if p.get("skip"):
            continue
        for name in run_recipes(stem, p):
            recipe = load_recipe(name, **recipe_fields(p["RECIPE_FIELDS"]))
            assert recipe.per_device_train_batch_size <= 4, (profile, stem, name)


def test_a_recipe_file_with_a_value_of_the_wrong_kind_is_refused_naming_file_and_field(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("max_steps: abc\n")
    with pytest.raises(
        ValueError, match=r"mine.yaml: recipe field max_steps must be int, got 'abc'"
    ):
        load_recipe(str(path))
    path.write_text("learning_rate: 2e-5\n")
    with pytest.raises(ValueError, match="write 2.0e-5"):
        load_recipe(str(path))
    path.write_text("max_step: 3\n")
    with pytest.raises(ValueError, match="did you mean 'max_steps'"):
        load_recipe(str(path))


# --- a notebook parameter that overrides a recipe field says so (overridden_recipe_fields) ---

TOOL_PARAMS = {
    "max_tool_calls": "MAX_TOOL_CALLS",
    "max_tool_calling_iterations": "MAX_TURNS",
    "tool_time_limit_s": "TOOL_TIME_LIMIT_S",
}


def test_notebook_11s_paper_parameters_override_the_agentic_recipe_and_say_so():
    from recode_lib.runner.pipeline import load_profile
    from recode_lib.training.parameter_overrides import overridden_recipe_fields, override_lines

    p = load_profile("paper")["11_settings_sweep"]
    fields = recipe_fields(
        {},
        max_tool_calls=p["MAX_TOOL_CALLS"],
        max_tool_calling_iterations=p["MAX_TURNS"],
        tool_time_limit_s=p["TOOL_TIME_LIMIT_S"],
    )
    rows = overridden_recipe_fields(
        ["strictness_paper", "tool_paper", "agentic_paper"], fields, TOOL_PARAMS
    )
    got = {(r["recipe"], r["parameter"]): (r["recipe_value"], r["value"]) for r in rows}
    assert got[("agentic_paper", "MAX_TOOL_CALLS")] == (8, 4)
    assert got[("agentic_paper", "MAX_TURNS")] == (8, 5)
    assert not any(r == "strictness_paper" for r, _ in got)  # single setting: no tool
    assert ("tool_paper", "MAX_TOOL_CALLS") not in got  # 4 = the recipe's own 4
    lines = override_lines(rows)
    assert (
        "notebook parameter MAX_TOOL_CALLS=4 overrides recipe agentic_paper's max_tool_calls=8"
        in lines
    )


def test_a_parameter_equal_to_the_recipe_or_a_recipe_fields_item_is_reported_as_such():
    from recode_lib.training.parameter_overrides import overridden_recipe_fields, override_lines

    same = recipe_fields(
        {}, max_tool_calls=8, max_tool_calling_iterations=8, tool_time_limit_s=10.0
    )
    assert overridden_recipe_fields(["agentic_paper"], same, TOOL_PARAMS) == []
    rs = recipe_fields({"max_completion_length": 8192})
    rows = overridden_recipe_fields(
        ["strictness_paper"], rs, {"max_completion_length": "RECIPE_FIELDS"}
    )
    assert override_lines(rows) == [
        "RECIPE_FIELDS' max_completion_length=8192 overrides recipe "
        "strictness_paper's max_completion_length=4096"
    ]
