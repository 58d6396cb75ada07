"""Interactive runs bound to a profile (recode_lib.runner.interactive): prepared notebooks carry the
profile's parameters, and running one to its end records it in the manifest with the batch
run's hash, so the next batch run skips it; an edited cell or a changed value is recorded as
such and the batch run re-executes the notebook. Real papermill and a real kernel stand in for
JupyterLab (both run the notebook in an IPython kernel, whose input history is what is read)."""

import json

import pytest
import yaml

from recode_lib.core.paths import runs_dir
from recode_lib.runner.interactive import prepare_session, record_interactive, unrun_cells
from recode_lib.runner.nbtools import new_notebook, write_notebook
from recode_lib.runner.pipeline import run_pipeline


@pytest.fixture
def book(tmp_path):
    d = tmp_path / "nbs"
    d.mkdir()
    a = d / "00_a.ipynb"
    write_notebook(
        new_notebook(
            [
                ("params", 'PROFILE = "smoke"\nX = 1'),
                (
                    "code",
                    (
                        "from recode_lib.core.paths import runs_dir\n"
                        "(runs_dir(PROFILE) / 'a.txt').write_text(str(X))"
                    ),
                ),
            ]
        ),
        a,
    )
    b = d / "01_b.ipynb"
    write_notebook(new_notebook([("params", 'PROFILE = "smoke"\nX = 1'), ("code", "print(X)")]), b)
    params = tmp_path / "p.yaml"
    params.write_text(yaml.safe_dump({"common": {"X": 5}}))
    return [a, b], params


def execute(path, tmp_path):
    """Run a prepared notebook top to bottom in a kernel, as a user pressing run-all would."""
    import papermill as pm

    pm.execute_notebook(
        str(path),
        str(tmp_path / f"ran-{path.name}"),
        kernel_name="python3",
        progress_bar=False,
        cwd=str(path.parent),
    )


def manifest(profile):
    return json.loads((runs_dir(profile) / "manifest.json").read_text())


def test_prepared_notebooks_carry_the_profile_parameters(book):
    nbs, params = book
    (a, b) = prepare_session("t", params_file=params, notebooks=nbs)
    nb = json.loads(a.read_text())
    injected = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert len(injected) == 1 and "X = 5" in "".join(injected[0]["source"])
    assert 'PROFILE = "t"' in "".join(injected[0]["source"])
    assert "record_interactive" in "".join(nb["cells"][-1]["source"])


def test_an_interactive_run_is_recorded_and_the_batch_run_skips_it(book, tmp_path):
    nbs, params = book
    prepared = prepare_session("t", params_file=params, notebooks=nbs)
    for p in prepared:
        execute(p, tmp_path)
    assert (runs_dir("t") / "a.txt").read_text() == "5"
    m = manifest("t")
    assert m["00_a"]["status"] == "completed" and m["00_a"]["mode"] == "interactive"
    results = run_pipeline(
        "t", notebooks=nbs, params_file=params, log=lambda *_: None, kernel_name="python3"
    )
    assert [r.status for r in results] == ["skipped", "skipped"]


def test_an_edited_cell_is_recorded_as_modified_and_re_executed(book, tmp_path):
    nbs, params = book
    a, _ = prepare_session("t", params_file=params, notebooks=nbs)
    nb = json.loads(a.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    code[-2]["source"] = (
        "from recode_lib.core.paths import runs_dir\n"
        "(runs_dir(PROFILE) / 'a.txt').write_text('edited')"
    )
    a.write_text(json.dumps(nb))
    execute(a, tmp_path)
    entry = manifest("t")["00_a"]
    assert entry["status"] == "modified" and "[1]" in entry["reason"]
    results = run_pipeline(
        "t",
        notebooks=nbs,
        params_file=params,
        log=lambda *_: None,
        kernel_name="python3",
        only="00",
    )
    assert [r.status for r in results] == ["completed"]
    assert (runs_dir("t") / "a.txt").read_text() == "5"


def test_a_value_changed_by_hand_is_what_is_recorded(book, tmp_path):
    nbs, params = book
    prepare_session("t", params_file=params, notebooks=nbs)
    src = nbs[0]
    entry = record_interactive(
        "t",
        str(src),
        ["PROFILE", "X"],
        user_ns={"PROFILE": "t", "X": 6},
        history=[
            "from recode_lib.core.paths import runs_dir\n"
            "(runs_dir(PROFILE) / 'a.txt').write_text(str(X))"
        ],
        notebooks=nbs,
    )
    assert entry["parameters"] == {"PROFILE": "t", "X": 6} and entry["status"] == "completed"
    results = run_pipeline(
        "t",
        notebooks=nbs,
        params_file=params,
        log=lambda *_: None,
        kernel_name="python3",
        only="00",
    )
    assert [r.status for r in results] == ["completed"]  # 6 is not the profile's 5


def test_cells_must_run_in_order():
    assert unrun_cells(["a", "b"], ["a", "x", "b"]) == []
    assert unrun_cells(["a", "b"], ["b", "a"]) == [2]
    assert unrun_cells(["a", "b"], ["a"]) == [2]
