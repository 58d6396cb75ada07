"""A notebook's `parameters` cell, read and written from its step's typed parameters.

    declared(Path("notebooks/04_cg_grpo.ipynb"))   # {"PROFILE": "smoke", "MODEL": ..., ...}
    drift(Path("notebooks/04_cg_grpo.ipynb"), CgGrpoParams)   # [] or what differs, one line each
    render(CgGrpoParams)                            # the cell's source, one `NAME = default  # doc`
    python -m recode_lib.steps [--write]            # list (or rewrite) every drifted cell
    python -m recode_lib.steps --fields             # catalog lines for the cells' new names

The parameters cell is the first code cell tagged `parameters`: UPPER_CASE names assigned
literal defaults (papermill injects a profile's values after it). `drift` compares names, order,
defaults and their types with the step's class; `write_cell` replaces the cell's source with
`render` and keeps the rest of the notebook byte for byte; `field_lines` writes the catalog
entries of names a cell has and its class lacks (type and default from the cell, docstring
from its comment), for a parameter added to a notebook first. It does not run notebooks.
"""

from __future__ import annotations

import ast
import json
import sys
import textwrap
import tokenize
from pathlib import Path
from typing import Any

from recode_lib.core.paths import PROJECT_ROOT
from recode_lib.steps.base import ParameterError, StepParams
from recode_lib.steps.catalog import STEPS

COMMENT_COLUMN = 35
WIDTH = 100


def parameters_cell(nb: dict, where: Path) -> dict:
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get(
            "tags", []
        ):
            return cell
    raise ParameterError(f"{where}: no code cell tagged 'parameters'")


def cell_source(cell: dict) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def declared(notebook: Path) -> dict[str, Any]:
    """UPPER_CASE names assigned in the cell tagged `parameters` (with their literal defaults;
    None where a default is not a literal)."""
    src = cell_source(parameters_cell(json.loads(Path(notebook).read_text()), notebook))
    out: dict[str, Any] = {}
    for node in ast.parse(src).body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.isupper():
                    try:
                        out[target.id] = ast.literal_eval(node.value)
                    except ValueError:
                        out[target.id] = None
    return out


def drift(notebook: Path, params: type[StepParams]) -> list[str]:
    """What differs between the notebook's parameters cell and `params` (empty: nothing)."""
    cell, typed = declared(notebook), params.defaults()
    out = [
        f"{notebook.name}: {n} is in the parameters cell, not in {params.__name__}"
        for n in cell
        if n not in typed
    ]
    out += [
        f"{notebook.name}: {n} is in {params.__name__}, not in the parameters cell"
        for n in typed
        if n not in cell
    ]
    for name in (n for n in typed if n in cell):
        a, b = cell[name], typed[name]
        if a != b or type(a) is not type(b):
            out.append(f"{notebook.name}: {name} = {a!r} in the cell, {b!r} in {params.__name__}")
    if not out and list(cell) != list(typed):
        out.append(f"{notebook.name}: the cell's order differs from {params.__name__}'s")
    return out


def comments(notebook: Path) -> dict[str, str]:
    """{name: the comment after its assignment, with the comment lines indented below it}."""
    src = cell_source(parameters_cell(json.loads(Path(notebook).read_text()), notebook))
    lines = src.splitlines()
    out: dict[str, str] = {}
    last = None
    tokens = tokenize.generate_tokens(iter(line + "\n" for line in lines).__next__)
    for tok in tokens:
        if tok.type == tokenize.NAME and tok.start[1] == 0 and tok.string.isupper():
            last = tok.string
            out[last] = ""
        elif tok.type == tokenize.COMMENT and last is not None:
            text = tok.string.lstrip("#").strip()
            if tok.start[1] == 0:  # a comment at column 0 belongs to no parameter
                continue
            out[last] = f"{out[last]} {text}".strip()
    return out


def field_lines(notebook: Path, params: type[StepParams]) -> list[str]:
    """Catalog lines for the names the notebook's cell has and `params` lacks."""
    cell, docs = declared(notebook), comments(notebook)
    return [
        f"    {name}: {type(value).__name__} = param({literal(value)}, "
        f"{literal(docs.get(name) or 'TODO: what it is')})"
        for name, value in cell.items()
        if name not in params.fields()
    ]


def literal(value) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)


def render(params: type[StepParams]) -> str:
    """The parameters cell of `params`: one `NAME = default  # doc` per field."""
    lines = []
    for name, default in params.defaults().items():
        head = f"{name} = {literal(default)}"
        pad = max(COMMENT_COLUMN - 1, len(head) + 1)
        doc = textwrap.wrap(params.doc(name), WIDTH - pad - 2) or [""]
        lines.append(f"{head:<{pad}}# {doc[0]}".rstrip())
        lines += [f"{'':<{pad}}# {more}" for more in doc[1:]]
    return "\n".join(lines)


def write_cell(notebook: Path, params: type[StepParams]) -> None:
    """Replace the notebook's parameters cell with render(params) (outputs untouched)."""
    nb = json.loads(Path(notebook).read_text())
    text = render(params)
    parameters_cell(nb, notebook)["source"] = text.splitlines(keepends=True)
    Path(notebook).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    write = "--write" in args
    found = []
    for stem, params in STEPS.items():
        nb = PROJECT_ROOT / "notebooks" / f"{stem}.ipynb"
        if "--fields" in args:
            lines = field_lines(nb, params)
            if lines:
                print(f"# {params.__name__} ({stem}):\n" + "\n".join(lines))
            continue
        diffs = drift(nb, params)
        found += diffs
        if diffs and write:
            write_cell(nb, params)
            print(f"{nb.name}: parameters cell rewritten from {params.__name__}")
    print("\n".join(found) if found else "every parameters cell matches its step")
    return 1 if found and not write else 0
