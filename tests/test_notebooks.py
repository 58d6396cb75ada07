"""Notebooks as tested artefacts: every pipeline notebook runs top to bottom with the tiny model
(marker `notebooks`: `make test-notebooks`, run by CI, not by `make test`), and committed
notebooks are stripped and follow the parameters-cell convention."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from recode_lib.nbtools import is_stripped
from recode_lib.paths import data_dir
from recode_lib.pipeline import (PipelineError, declared_parameters, list_notebooks,
                                 notebooks_dir, run_pipeline)

NOTEBOOKS = list_notebooks()
TINY = Path(__file__).parent / "notebook_params_tiny.yaml"


@pytest.fixture(scope="module")
def executed(tiny_model_dir, tmp_path_factory):
    """Run the whole pipeline once with the tiny model; returns (runs dir, error or None).
    The notebooks read real benchmark problems (HumanEval+, MBPP+, AIME, LeetCode): without the
    data directory they cannot run offline, so these tests skip with the reason."""
    if data_dir() is None:
        pytest.skip("the pipeline notebooks need the benchmark files: set RECODE_DATA_DIR or "
                    "place them at ../shared/data")
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
    assert all(isinstance(v, (str, int, float, bool)) or v is None for v in params.values())
    first_code = next(c for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code")
    assert "parameters" in first_code["metadata"].get("tags", [])


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_papermill_reads_every_declared_parameter(nb):
    """papermill's own line parser (what `papermill --help-notebook` and JupyterLab's
    parameter tooling use) must see every parameter, e.g. no quotes inside comments."""
    import papermill

    assert set(papermill.inspect_notebook(str(nb))) == set(declared_parameters(nb))


@pytest.mark.parametrize("profile", ["smoke", "paper"])
def test_every_notebook_has_a_profile_section(profile):
    spec = yaml.safe_load((notebooks_dir() / "params" / f"{profile}.yaml").read_text())
    stems = {nb.stem for nb in NOTEBOOKS}
    assert stems <= set(spec), f"{profile}.yaml lacks sections for {sorted(stems - set(spec))}"


@pytest.mark.notebooks
def test_notebook_smoke_output(executed):
    run, _ = executed
    metrics = json.loads((run / "00_data_and_models" / "metrics.json").read_text())
    assert metrics["n_tokens"] > 0 and metrics["provenance"]["versions"]["torch"]


@pytest.mark.notebooks
def test_repair_notebook_records_every_model_and_online_round(executed):
    run, _ = executed
    repair = json.loads((run / "09_repair" / "repair.json").read_text())
    assert [r["model"] for r in repair["rows"]] == ["start", "original_only", "failure_conditioned"]
    assert repair["rounds"] == 2 and set(repair["train_tasks"]) == {"round1", "round2"}
    assert (run / "09_repair" / "failure_conditioned_r2" / "final" / ".complete").is_file()


@pytest.mark.parametrize("profile", ["smoke", "paper"])
def test_profile_parameters_resolve_for_every_notebook(profile):
    """Every key a profile sets for a notebook is declared by that notebook (no typos that
    would only surface on a GPU machine)."""
    from recode_lib.pipeline import load_profile, resolve_parameters
    spec = load_profile(profile)
    for nb in NOTEBOOKS:
        params = resolve_parameters(nb, profile, spec)
        assert params["PROFILE"] == profile
