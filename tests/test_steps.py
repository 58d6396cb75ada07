"""The steps' typed parameters (recode_lib.steps): each notebook's parameters cell equals its
step's class, and a profile or a `-p NAME=VALUE` with an unknown name or a mistyped value is
refused before any notebook runs (one line, exit 2, naming the field and the nearest names)."""

import ast
import dataclasses
import json
import shutil
from pathlib import Path

import pytest
import yaml

from recode_lib.cli import main
from recode_lib.runner.dryrun import dryrun_profile
from recode_lib.runner.pipeline import list_notebooks, load_profile
from recode_lib.steps import STEPS, ParameterError, check_profile, step_schemas
from recode_lib.steps.cells import declared, drift, render, write_cell
from recode_lib.training.recipe_check import KINDS, check_field

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = step_schemas(list_notebooks())


def test_every_notebook_is_a_step_of_the_catalog():
    assert list(STEPS) == [nb.stem for nb in list_notebooks()]


@pytest.mark.parametrize("stem", list(STEPS))
def test_each_parameters_cell_equals_its_steps_parameters(stem):
    assert drift(ROOT / "notebooks" / f"{stem}.ipynb", STEPS[stem]) == []


@pytest.mark.parametrize("stem", list(STEPS))
def test_each_field_has_a_docstring(stem):
    assert all(STEPS[stem].doc(name) for name in STEPS[stem].fields())


def test_a_cell_that_drifts_from_its_step_is_named(tmp_path):
    nb = tmp_path / "04_cg_grpo.ipynb"
    shutil.copy(ROOT / "notebooks" / nb.name, nb)
    data = json.loads(nb.read_text())
    for cell in data["cells"]:
        if "parameters" in cell["metadata"].get("tags", []):
            cell["source"] = ["".join(cell["source"]).replace("N_TRAIN = 8", "N_TRAIN = 9")]
    nb.write_text(json.dumps(data))
    assert any("N_TRAIN" in d for d in drift(nb, STEPS["04_cg_grpo"]))


def test_a_cell_written_from_a_step_reads_back_as_the_step(tmp_path):
    nb = tmp_path / "04_cg_grpo.ipynb"
    shutil.copy(ROOT / "notebooks" / nb.name, nb)
    grown = dataclasses.make_dataclass(
        "Grown",
        [("NEW_KNOB", int, dataclasses.field(default=3, metadata={"help": "a knob"}))],
        bases=(STEPS["04_cg_grpo"],),
        frozen=True,
    )
    write_cell(nb, grown)
    assert declared(nb) == grown.defaults() and drift(nb, grown) == []
    assert "NEW_KNOB = 3" in render(grown)


@pytest.mark.parametrize("profile", ["smoke", "laptop", "paper"])
def test_the_profiles_pass_the_check(profile):
    check_profile(load_profile(profile), SCHEMAS)


def test_the_tiny_and_dryrun_parameters_pass_the_check():
    spec = yaml.safe_load((ROOT / "tests" / "notebook_params_tiny.yaml").read_text())
    check_profile(spec, SCHEMAS)
    check_profile(dryrun_profile("/tmp/tiny"), SCHEMAS)


def test_a_typed_step_refuses_a_value_of_the_wrong_type():
    with pytest.raises(ParameterError, match="04_cg_grpo: N_TRAIN must be int, got 'abc'"):
        STEPS["04_cg_grpo"](N_TRAIN="abc")
    assert STEPS["02_reward_model"](EPOCHS=1).EPOCHS == 1  # an int where a float is taken
    with pytest.raises(ParameterError):
        STEPS["02_reward_model"](EPOCHS=True)  # never a bool for a number


def reproduce(capsys, *args):
    rc = main(["reproduce", "--profile", "smoke", "--kernel", "no-such-kernel", *args])
    err = capsys.readouterr().err.strip()
    return rc, err


@pytest.mark.parametrize(
    "args, words",
    [
        (["--only", "00", "-p", "SFT_MAX_STEP=1"], ["SFT_MAX_STEP", "nearest: SFT_MAX_STEPS"]),
        (
            ["--only", "00", "-p", "SFT_MAX_STEPS=abc"],
            ["00_data_and_models", "SFT_MAX_STEPS", "'abc'"],
        ),
        (
            ["--only", "06", "-p", "RECIPE_SET=max_steps=abc"],
            ["RECIPE_SET is retired", "-p RECIPE_FIELDS.max_steps=1"],
        ),
        (
            ["--only", "06", "-p", "RECIPE_FIELDS.max_steps=abc"],
            ["recipe field max_steps", "'abc'"],
        ),
        (["--only", "06", "-p", "RECIPE_FIELDS.max_step=1"], ["'max_step'", "nearest: max_steps"]),
        (["--only", "06", "-p", "RECIPE_FIELDS=3"], ["RECIPE_FIELDS must be dict", "3"]),
    ],
)
def test_a_mistyped_override_is_refused_before_anything_runs(capsys, args, words):
    rc, err = reproduce(capsys, *args)
    assert rc == 2 and len(err.splitlines()) == 1 and "running" not in err
    assert all(w in err for w in words), err


def write(tmp_path, text):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    "text, words",
    [
        ("common:\n  MODELL: smollm2\n", ["common: MODELL", "nearest: MODEL"]),
        ("common:\n  SEED: x\n", ["common", "SEED must be int", "'x'"]),
        ("05_codegen_evl:\n  N_PROBLEMS: 2\n", ["'05_codegen_evl'", "nearest: 05_codegen_eval"]),
        (
            "05_codegen_eval:\n  N_PROBLEM: 2\n",
            ["05_codegen_eval: N_PROBLEM", "nearest: N_PROBLEMS"],
        ),
        ("05_codegen_eval:\n  N_PROBLEMS: two\n", ["05_codegen_eval: N_PROBLEMS must be int"]),
    ],
)
def test_a_profile_with_a_misspelled_or_mistyped_field_is_refused(capsys, tmp_path, text, words):
    rc, err = reproduce(capsys, "--params", write(tmp_path, text))
    assert rc == 2 and len(err.splitlines()) == 1
    assert all(w in err for w in words), err


def test_the_recipe_field_table_is_the_dataclass():
    from recode_lib.training.recipe_check import kinds_from_config

    assert KINDS == kinds_from_config()  # else: python -m recode_lib.training.recipe_check


def test_recipe_field_kinds():
    assert check_field("max_steps", 2) is None and check_field("learning_rate", 1) is None
    assert "max_steps" in check_field("max_steps", "abc")
    assert check_field("bf16", "auto") is None and check_field("rm_path", None) is None
    assert check_field("use_cpu", 1) is not None


def parameters_read(func: ast.FunctionDef, classes: dict) -> set[tuple[str, str]]:
    """(step class, parameter) pairs a plan builder reads as attributes: of its arguments
    annotated with a step's parameters class, and of other(pp, Class) (bound to a name or not,
    `or` a fallback, or under a condition)."""
    bound = {
        a.arg: a.annotation.id
        for a in func.args.args
        if isinstance(a.annotation, ast.Name) and a.annotation.id in classes
    }

    def class_of(node):
        if isinstance(node, ast.Name):
            return bound.get(node.id)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "other":
            return node.args[1].id
        if isinstance(node, ast.BoolOp):
            return class_of(node.values[0])
        if isinstance(node, ast.IfExp):
            return class_of(node.body)
        return None

    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            if class_of(node.value):
                bound[node.targets[0].id] = class_of(node.value)
    return {
        (class_of(node.value), node.attr)
        for node in ast.walk(func)
        if isinstance(node, ast.Attribute) and node.attr.isupper() and class_of(node.value)
    }


def test_every_parameter_the_plan_reads_is_a_field_of_its_step():
    """The plan's builders take their step's typed parameters (recode_lib.plan.stages): what a
    type checker would say of a renamed parameter, without one."""
    classes = {cls.__name__: cls for cls in STEPS.values()}
    source = (ROOT / "recode_lib" / "plan" / "stages.py").read_text()
    read = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            read |= parameters_read(node, classes)
    assert len(read) > 150  # it does see the reads
    assert {c for c, _ in read} >= {"CrplSynthesisParams", "StrictnessSweepParams"}  # other()
    unknown = sorted(f"{c}.{k}" for c, k in read if k not in classes[c].fields())
    assert unknown == []


def test_every_parameter_a_dryrun_rule_names_is_a_field_of_some_step():
    from recode_lib.runner import dryrun

    every = {n for cls in STEPS.values() for n in cls.fields()}
    named = (
        set(dryrun.MODEL_KEYS)
        | set(dryrun.BACKEND_KEYS)
        | set(dryrun.ENDPOINT_KEYS)
        | set(dryrun.CLASSIFIER_KEYS)
        | set(dryrun.COUNTS)
    )
    assert named - every == set()
    for stem, values in {**dryrun.SECTION_COUNTS, **dryrun.ADDED}.items():
        assert set(values) <= set(STEPS[stem].fields()), stem


def test_a_command_line_value_is_read_for_its_parameters_type():
    from recode_lib.cli.reproduce import parse_overrides
    from recode_lib.runner.pipeline import profile_parameters

    got = parse_overrides(
        [
            "SEEDS=1",
            "SFT_LEARNING_RATE=2e-5",
            "N_TRAIN=3",
            "SFT_BF16=auto",
            "TRANSFER_MODEL=''",
            "VARIANTS=gated,brevity",
        ]
    )
    assert got == {
        "SEEDS": "1",
        "SFT_LEARNING_RATE": 2e-5,
        "N_TRAIN": 3,
        "SFT_BF16": "auto",
        "TRANSFER_MODEL": "",
        "VARIANTS": "gated,brevity",
    }
    # the README's `recode reproduce --profile laptop -p SEEDS=1` passes the check
    assert (
        profile_parameters("laptop", overrides=parse_overrides(["SEEDS=1"]))["04_cg_grpo"]["SEEDS"]
        == "1"
    )


def test_a_number_for_a_text_parameter_in_a_profile_says_to_quote_it():
    with pytest.raises(
        ParameterError, match=r'SEEDS must be str, got 1 \(int\) \(quote it in YAML: "1"\)'
    ):
        check_profile({"04_cg_grpo": {"SEEDS": 1}}, SCHEMAS)


def test_a_parameter_added_to_a_cell_first_gets_its_catalog_line(tmp_path):
    from recode_lib.steps.cells import field_lines

    nb = tmp_path / "09_repair.ipynb"
    shutil.copy(ROOT / "notebooks" / nb.name, nb)
    data = json.loads(nb.read_text())
    for cell in data["cells"]:
        if "parameters" in cell["metadata"].get("tags", []):
            cell["source"] = [
                "".join(cell["source"]) + '\nREPAIR_PROTOCOL = "paper"   # how '
                "repairs are sampled\n                          # (paper B)\n"
            ]
    nb.write_text(json.dumps(data))
    assert field_lines(nb, STEPS["09_repair"]) == [
        '    REPAIR_PROTOCOL: str = param("paper", "how repairs are sampled (paper B)")'
    ]
