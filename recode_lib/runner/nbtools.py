"""Notebook hygiene: build notebooks from cell sources, strip outputs, check they are stripped.

    nb = new_notebook(["PROFILE = 'smoke'", "print(1)"], markdown={0: "# Title"})
    strip("notebooks/05_codegen_eval.ipynb")      # in place: no outputs, no execution counts
    python -m recode_lib.runner.nbtools strip notebooks/*.ipynb   (what `make strip` runs)
    python -m recode_lib.runner.nbtools check notebooks/*.ipynb   (exit 1 if any carries outputs)

The first code cell of a pipeline notebook is tagged `parameters` (papermill). This module
does not execute notebooks (recode_lib.runner.pipeline does).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# the project's kernel (`make env` / `make lab` install it; recode_lib.runner.pipeline runs it when
# present)
KERNELSPEC = {"display_name": "Python (recode)", "language": "python", "name": "recode"}


def new_notebook(cells: list[tuple[str, str]]):
    """cells: (kind, source) with kind in {"md", "params", "code"}; returns an nbformat node."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    for kind, src in cells:
        if kind == "md":
            nb.cells.append(nbformat.v4.new_markdown_cell(src.strip("\n")))
        elif kind in ("params", "code"):
            cell = nbformat.v4.new_code_cell(src.strip("\n"))
            if kind == "params":
                cell.metadata["tags"] = ["parameters"]
            nb.cells.append(cell)
        else:
            raise ValueError(f"unknown cell kind {kind!r}")
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"
    return nb


def write_notebook(nb, path) -> Path:
    import nbformat

    path = Path(path)
    nbformat.write(nb, str(path))
    strip(path)
    return path


def strip(path) -> bool:
    """Remove outputs and execution counts in place; returns whether anything changed."""
    path = Path(path)
    nb = json.loads(path.read_text())
    changed = False
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            if cell.get("outputs") or cell.get("execution_count") is not None:
                changed = True
            cell["outputs"] = []
            cell["execution_count"] = None
        if "papermill" in cell.get("metadata", {}):
            cell["metadata"].pop("papermill")
            changed = True
        if "execution" in cell.get("metadata", {}):
            cell["metadata"].pop("execution")
            changed = True
    for key in ("papermill", "widgets"):
        if key in nb.get("metadata", {}):
            nb["metadata"].pop(key)
            changed = True
    if changed:
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return changed


def is_stripped(path) -> bool:
    nb = json.loads(Path(path).read_text())
    return not any(
        c.get("outputs") or c.get("execution_count") is not None
        for c in nb.get("cells", [])
        if c.get("cell_type") == "code"
    )


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("strip", "check"):
        print("usage: python -m recode_lib.runner.nbtools strip|check NOTEBOOK...", file=sys.stderr)
        return 2
    action, paths = argv[0], argv[1:]
    if action == "strip":
        for p in paths:
            if strip(p):
                print(f"stripped {p}")
        return 0
    dirty = [p for p in paths if not is_stripped(p)]
    for p in dirty:
        print(f"{p}: carries outputs or execution counts (run `make strip`)", file=sys.stderr)
    return 1 if dirty else 0


if __name__ == "__main__":
    sys.exit(main())
