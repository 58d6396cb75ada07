"""Three seams of the notebooks, read from their code cells (no notebook runs): a notebook spells
no run-folder path (a step's folder comes from recode_lib.core.run_files), a notebook never
reassigns one of its own parameters (a value derived from one gets its own name, so the
parameter means what the profile set everywhere in the notebook), and a notebook imports from
recode_lib's packages, not their deep modules (each name one its package exports)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
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


def exported(package: str, name: str) -> bool:
    """Whether `from package import name` takes a name the package exports (its __all__) or
    one of its submodules (`from recode_lib.core import paths`)."""
    return name in getattr(importlib.import_module(package), "__all__", ()) or bool(
        importlib.util.find_spec(f"{package}.{name}")
    )


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_import_from_packages(nb):
    found = []
    for i, tree in code_cells(nb):
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(
                "recode_lib"
            ):
                continue
            if importlib.util.find_spec(node.module).submodule_search_locations is None:
                found.append((i, f"from {node.module} (a module, not a package)"))
                continue
            found += [
                (i, f"{node.module}.{a.name}")
                for a in node.names
                if not exported(node.module, a.name)
            ]
    assert not found, f"{nb.name}: imports not from a package's exports: {found}"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_recode_imports_run(nb):
    """Each `from recode_lib... import ...` of a notebook, nested ones included, runs as is."""
    for i, tree in code_cells(nb):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("recode_lib"):
                exec(compile(ast.Module([node], []), f"{nb.name} cell {i}", "exec"), {})


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
        {"cell_type": "code", "metadata": {}, "source": ["from recode_lib.core.jsonl import x"]},
    ]
    nb.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    with pytest.raises(AssertionError, match="04_cg_grpo"):
        test_no_notebook_spells_a_step_folder(nb)
    with pytest.raises(AssertionError, match="BENCHMARK"):
        test_no_notebook_reassigns_a_parameter(nb)
    with pytest.raises(AssertionError, match="recode_lib.core.jsonl"):
        test_notebooks_import_from_packages(nb)
