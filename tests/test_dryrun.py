"""The paper profile's dry run: notebooks/params/paper.yaml with only the model, counts, steps
and backends shrunk (recode_lib.dryrun) runs every notebook on CPU (marker `notebooks`, CI),
so a typo in a paper-only key, path or branch fails here and not on a cluster. The unit tests
(default suite) check the derivation, the launch configs and the vLLM request path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from recode_lib.dryrun import (ADDED, BACKEND_MAP, COUNTS, LAUNCHER_MAP, MODEL_KEYS,
                               SECTION_COUNTS, changed_keys, dryrun_data_dir, dryrun_profile,
                               write_dryrun_params)
from recode_lib.paths import PROJECT_ROOT, data_dir
from recode_lib.pipeline import PipelineError, list_notebooks, load_profile, run_pipeline

FIXTURES = Path(__file__).parent / "fixtures"
NOTEBOOKS = list_notebooks()
SHRUNK = (set(COUNTS) | set(MODEL_KEYS) | {"BACKEND", "GENERATOR_BACKEND", "JUDGE_BACKEND",
                                           "LAUNCHER", "KS", "ALPHAS", "PASS_K"}
          | {k for s in SECTION_COUNTS.values() for k in s} | {k for s in ADDED.values() for k in s})


def test_dryrun_changes_only_models_counts_steps_and_backends():
    paper = load_profile("paper")
    dry = dryrun_profile("/tiny")
    assert set(dry) == {k for k in paper if not k.startswith("_")}
    for stem, keys in changed_keys(dry, paper).items():
        assert set(keys) <= SHRUNK, f"{stem}: the dry run changes {set(keys) - SHRUNK}"
    for stem, params in paper.items():
        if stem.startswith("_"):
            continue
        for key, value in params.items():
            assert key in dry[stem], f"{stem}.{key} is dropped by the dry run"
            if key not in SHRUNK:
                assert dry[stem][key] == value
    assert dry["common"]["MODEL"] == "/tiny" and dry["01_crpl_synthesis"]["GENERATOR_MODEL"] == "/tiny"
    assert dry["common"]["BACKEND"] == BACKEND_MAP["vllm"]
    assert dry["04_cg_grpo"]["LAUNCHER"] == LAUNCHER_MAP["accelerate"]
    assert dry["04_cg_grpo"]["RECIPE"] == "cg_grpo_paper"
    assert dry["04_cg_grpo"]["NUM_PROCESSES"] == paper["04_cg_grpo"]["NUM_PROCESSES"]
    assert dry["03_lcb_rb"]["ADJUDICATION"] == "widget"
    assert dry["01_crpl_synthesis"]["RULE_FALLBACK"] is False


def test_dryrun_follows_a_new_paper_key():
    """Derived, not copied: a key added to paper.yaml appears in the dry run unchanged."""
    paper = load_profile("paper")
    paper["05_codegen_eval"] = {**paper["05_codegen_eval"], "SOME_NEW_KEY": 7}
    assert dryrun_profile("/tiny", paper)["05_codegen_eval"]["SOME_NEW_KEY"] == 7


def test_dryrun_list_counts_keep_valid_members():
    dry = dryrun_profile("/tiny")
    assert dry["07_weight_averaging"]["ALPHAS"] == "-1.0,0.0,1.0,3.0"
    assert dry["06_strictness_sweep"]["KS"] == "1"
    for stem in ("05_codegen_eval", "08_ensemble_passk"):
        ks = [int(k) for k in dry[stem]["PASS_K"].split(",")]
        assert max(ks) <= dry["07_weight_averaging"]["N_SAMPLES"]


def test_dryrun_params_file_resolves_for_every_notebook(tmp_path):
    from recode_lib.pipeline import resolve_parameters

    path = write_dryrun_params(tmp_path / "dryrun.yaml", "/tiny")
    spec = load_profile("dryrun", path)
    for nb in NOTEBOOKS:
        assert resolve_parameters(nb, "dryrun", spec)["PROFILE"] == "dryrun"


@pytest.fixture(scope="module")
def dryrun(tiny_model_dir, tmp_path_factory):
    if data_dir() is None:
        pytest.skip("the dry run needs the benchmark files: set RECODE_DATA_DIR or place them "
                    "at ../shared/data")
    root = tmp_path_factory.mktemp("dryrun")
    params = write_dryrun_params(root / "dryrun.yaml", tiny_model_dir)
    env = {"RECODE_RUNS_DIR": str(root / "runs"), "RECODE_DATA_DIR": str(dryrun_data_dir(root / "data", FIXTURES))}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    error = None
    try:
        run_pipeline("dryrun", params_file=params, log=lambda *_: None)
    except PipelineError as exc:
        error = str(exc)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return root / "runs" / "dryrun", error


@pytest.mark.notebooks
@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_paper_profile_dryrun_executes(nb, dryrun):
    run, error = dryrun
    manifest = json.loads((run / "manifest.json").read_text())
    entry = manifest.get(nb.stem)
    if entry is None:
        pytest.fail(f"{nb.stem} did not run; the dry run stopped earlier: {error}")
    assert entry["status"] == "completed", entry.get("error")
    assert (run / nb.stem / "headline.json").is_file()
