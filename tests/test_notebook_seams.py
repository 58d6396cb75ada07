"""Two seams of the notebooks, read from their code cells (no notebook runs): a notebook spells
no run-folder path (a step's folder comes from recode_lib.core.run_files), and a notebook never
reassigns one of its own parameters (a value derived from one gets its own name, so the
parameter means what the profile set everywhere in the notebook)."""

from __future__ import annotations

import ast
import json

import pytest

from recode_lib.core.run_files import STEPS
from recode_lib.runner.pipeline import declared_parameters, list_notebooks

NOTEBOOKS = list_notebooks()


def code_cells(nb) -> list[tuple[int, ast.Module]]:
    """(index, parsed source) of each code cell after the parameters cell; IPython's magics
    and shell lines (%, !) are left out."""
    cells = json.loads(nb.read_text())["cells"]
    out = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code" or "parameters" in cell.get("metadata", {}).get("tags", []):
            continue
        src = "".join(cell["source"])
        src = "\n".join(ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!")))
        out.append((i, ast.parse(src)))
    return out


def bound_names(node: ast.AST) -> list[str]:
    """The names an assignment-like node binds (tuple targets unpacked)."""
    if isinstance(node, (ast.Assign,)):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
        targets = [node.target]
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        targets = [node.target]
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        targets = [node.optional_vars]
    else:
        return []
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_notebook_spells_a_step_folder(nb):
    found = [
        (i, node.value)
        for i, tree in code_cells(nb)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in STEPS
    ]
    assert not found, f"{nb.name}: step folders spelled as literals (use run_files): {found}"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_no_notebook_reassigns_a_parameter(nb):
    params = set(declared_parameters(nb))
    found = [
        (i, name)
        for i, tree in code_cells(nb)
        for node in ast.walk(tree)
        for name in bound_names(node)
        if name in params
    ]
    assert not found, f"{nb.name}: parameters reassigned in the body: {found}"


def test_the_checks_see_a_literal_and_a_reassignment(tmp_path):
    nb = tmp_path / "07_x.ipynb"
    cells = [
        {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": ["BENCHMARK = 'a'"]},
        {
            "cell_type": "code",
            "metadata": {},
            "source": ["%time x = 1\n", "OUT = RUN / '04_cg_grpo'"],
        },
        {"cell_type": "code", "metadata": {}, "source": ["if p:\n", "    BENCHMARK, q = p"]},
    ]
    nb.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    with pytest.raises(AssertionError, match="04_cg_grpo"):
        test_no_notebook_spells_a_step_folder(nb)
    with pytest.raises(AssertionError, match="BENCHMARK"):
        test_no_notebook_reassigns_a_parameter(nb)
