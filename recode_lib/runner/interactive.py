"""Interactive runs bound to a profile: notebooks for JupyterLab that run with a profile's
parameters and are recorded in the run's manifest like a batch run.

    recode session --profile laptop          # or: make lab PROFILE=laptop
    -> runs/laptop/interactive/NN_name.ipynb, one per notebook the profile runs

Each prepared notebook is the committed notebook with the profile's parameters injected after
its `parameters` cell (papermill's own "injected-parameters" cell, exactly what a batch run
executes: nothing is read from hidden globals), plus a last cell that records the run:
record_interactive() writes the notebook's manifest entry (runs/<profile>/manifest.json) as
`completed`, `mode: interactive`, with the hash a batch run computes (source, parameters,
upstream run ids), so the next `make reproduce PROFILE=...` skips it and runs what follows.
Recorded honestly:
- the parameters are the values the kernel holds when the last cell runs (a value changed by
  hand counts, and then the hash differs from the profile's and a batch run re-executes it);
- the committed code cells must have run unedited, each once at least, in order (read from
  the kernel's input history); otherwise the entry is `modified`, naming the cells, and a batch
  run re-executes the notebook. Cells a user adds do not count against it.
Not covered: a notebook run partly (the last cell never runs: nothing is recorded), and
outputs written by cells that were later re-run with other values (the run folder holds
whatever the cells wrote last).
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

from recode_lib.core.jsonl import read_json, write_json_atomic
from recode_lib.core.paths import runs_dir
from recode_lib.core.stamps import git_hash, package_versions
from recode_lib.runner.nbtools import KERNELSPEC
from recode_lib.runner.pipeline import (
    check_parameters,
    declared_parameters,
    excluded_reason,
    list_notebooks,
    load_profile,
    notebook_hash,
    resolve_parameters,
    upstream_run_ids,
)

RECORD_TAG = "recode-record-interactive"


def session_dir(profile: str) -> Path:
    return runs_dir(profile) / "interactive"


def record_cell_source(profile: str, source: Path, names: list[str]) -> str:
    return (
        "# records this run in the profile's manifest (recode_lib.runner.interactive)\n"
        "from recode_lib.runner.interactive import record_interactive\n\n"
        f"record_interactive({profile!r}, {str(source)!r}, {sorted(names)!r})"
    )


def prepare_session(
    profile: str,
    *,
    params_file=None,
    overrides: dict | None = None,
    notebooks: list[Path] | None = None,
) -> list[Path]:
    """Write the profile's prepared notebooks into session_dir(profile); returns their paths
    (a notebook the profile leaves out gets none). An existing prepared notebook is replaced:
    prepare again after changing the profile."""
    import nbformat
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    spec = load_profile(profile, params_file)
    check_parameters(spec, notebooks if notebooks is not None else list_notebooks(), overrides)
    out_dir = session_dir(profile)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for nb_path in notebooks if notebooks is not None else list_notebooks():
        if excluded_reason(nb_path, spec) is not None:
            continue
        params = resolve_parameters(nb_path, profile, spec, overrides)
        nb = load_notebook_node(str(nb_path))  # papermill's reader (every cell gets tags)
        nb = parameterize_notebook(nb, params, kernel_name=KERNELSPEC["name"], language="python")
        cell = nbformat.v4.new_code_cell(
            record_cell_source(profile, nb_path.resolve(), list(params))
        )
        cell.metadata["tags"] = [RECORD_TAG]
        nb.cells.append(cell)
        nb.metadata["recode"] = {
            "profile": profile,
            "source": str(nb_path.resolve()),
            "parameters": params,
        }
        target = out_dir / nb_path.name
        nbformat.write(nb, str(target))
        written.append(target)
    return written


def committed_code_cells(source: Path) -> list[str]:
    """The code cells of the committed notebook that must run as written (all but the
    parameters cell, whose values are checked instead)."""
    cells = json.loads(Path(source).read_text())["cells"]
    return [
        "".join(c["source"]).strip()
        for c in cells
        if c.get("cell_type") == "code"
        and "parameters" not in c.get("metadata", {}).get("tags", [])
        and "".join(c["source"]).strip()
    ]


def unrun_cells(required: list[str], history: list[str]) -> list[int]:
    """1-based indexes (among `required`) of the cells that did not run as written, in order:
    each must appear in `history` after the previous one (extra cells in between are fine)."""
    missing, pos = [], 0
    ran = [h.strip() for h in history]
    for i, src in enumerate(required, start=1):
        try:
            pos = ran.index(src, pos) + 1
        except ValueError:
            missing.append(i)
    return missing


def record_interactive(
    profile: str,
    source: str,
    names: list[str],
    *,
    user_ns: dict | None = None,
    history: list[str] | None = None,
    notebooks: list[Path] | None = None,
) -> dict[str, Any]:
    """Write the manifest entry of an interactive run of `source` (the committed notebook) and
    return it. user_ns/history default to the running IPython kernel's namespace and input
    history (tests pass them)."""
    if user_ns is None or history is None:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            raise RuntimeError("record_interactive runs in a notebook kernel (IPython)")
        user_ns = shell.user_ns if user_ns is None else user_ns
        history = list(shell.history_manager.input_hist_raw) if history is None else history
    source = Path(source)
    defaults = declared_parameters(source)
    params = {n: user_ns[n] if n in user_ns else defaults.get(n) for n in names}
    every = notebooks if notebooks is not None else list_notebooks(source.parent)
    path = runs_dir(profile) / "manifest.json"
    manifest = read_json(path) if path.exists() else {}
    key = notebook_hash(source, params, upstream_run_ids(manifest, every, source))
    unrun = unrun_cells(committed_code_cells(source), history)
    entry = {
        "status": "completed" if not unrun else "modified",
        "mode": "interactive",
        "hash": key,
        "parameters": params,
        "output": str(session_dir(profile) / source.name),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "git": git_hash(),
        "versions": package_versions(),
    }
    if unrun:
        entry["reason"] = (
            f"committed code cells {unrun} did not run as written (edited or "
            "skipped): a batch run re-executes this notebook"
        )
    else:
        entry["run_id"] = uuid.uuid4().hex[:12]
    manifest[source.stem] = entry
    write_json_atomic(path, manifest)
    print(
        f"{source.stem}: recorded in {path} as {entry['status']}"
        + (f" ({entry['reason']})" if unrun else "")
    )
    return entry
