"""What one run folder holds, read for the run report: every result file the report shows, or
a "missing" marker naming the path it looked for.

    view = read_run("runs/smoke")
    view["headline"]                  # 05_codegen_eval/headline.json (ReCode's table), or
    is_missing(view["headline"])      # {"missing": ".../headline.json"} when 05 did not run

It reads (from the run folder `runs/<profile>/`, the layout of recode_lib.core.run_files):
- the run manifest (manifest.json, written by recode_lib.runner.pipeline): per notebook status, wall
  time, parameters, git hash and package versions -> `notebooks`, `provenance`;
- every step's headline.json as written (`headlines`, for the comparison's deltas);
- ReCode's headline table (05_codegen_eval/headline.json) and the evaluation protocol its
  evaluation folders recorded (run.json: sampling, prompt style, early stop -> the protocol
  fingerprint of recode_lib.evaluation.spec);
- paper B's frontier and ensemble results with their intervals: 06's sweep frontier.json (pass@1
  CIs from each run's eval/<run>/summary.json), 07's frontier.json (pass@1 CIs from each alpha's
  summary.json in the eval folder it records; format-error Wilson intervals), 08's passk.json
  (bootstrap intervals as written), and 11's per-setting frontiers and ensembles;
- the laptop profile's claims (recode_lib.orchestration.laptop_report.build_report; any run);
- the figures: figures/<profile>/ (or the folder 99_paper_figures/figures.json names) and every
  PNG inside the run folder, folders set aside as <name>.stale-<k> left out;
- the training-curve trackers: every folder holding TensorBoard event files (trackers).
A missing or unreadable file is a marker, never an error. It does not render (run_page,
compare do) and it computes no new statistics beyond the Wilson interval of a share.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from recode_lib.core.errors import RecodeError
from recode_lib.core.paths import figures_dir
from recode_lib.core.run_files import (
    CODEGEN_EVAL,
    ENSEMBLE,
    FIGURES,
    HEADLINE_FILE,
    SETTINGS_SWEEP,
    STEPS,
    STRICTNESS_SWEEP,
    WEIGHT_AVERAGING,
)
from recode_lib.core.stamps import provenance
from recode_lib.evaluation.spec import protocol_fingerprint
from recode_lib.orchestration.laptop_report import build_report, wilson
from recode_lib.runner.pipeline import list_notebooks

MANIFEST = "manifest.json"
HEADLINE = HEADLINE_FILE
TB_EVENTS = "events.out.tfevents.*"
SETTINGS = ("single", "tool", "agentic")
_ALPHA_DIR = re.compile(r"^alpha_(-?[0-9.]+(?:e-?[0-9]+)?)$")
_STALE = re.compile(r"\.stale-\d+$")


def missing(path, why: str = "") -> dict:
    """The marker of a file that is not there (or cannot be read: `why`)."""
    return {"missing": str(path)} | ({"why": why} if why else {})


def is_missing(x) -> bool:
    return isinstance(x, dict) and "missing" in x and set(x) <= {"missing", "why"}


def read_json_marked(path) -> dict | list:
    """The JSON at path, or a missing marker (absent, or not valid JSON: the marker says why)."""
    path = Path(path)
    if not path.is_file():
        return missing(path)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return missing(path, f"unreadable: {exc}")


def _stale(path: Path, root: Path) -> bool:
    return any(_STALE.search(part) for part in path.relative_to(root).parts)


def notebook_rows(run: Path, manifest: dict) -> list[dict]:
    """One row per notebook of the project (and per manifest entry it does not know): status,
    wall time, start/finish, the reason/error/pending note, whether its folder exists."""
    stems = [nb.stem for nb in list_notebooks()]
    stems += [s for s in manifest if s not in stems]
    rows = []
    for stem in stems:
        entry = manifest.get(stem) or {}
        status = entry.get("status")
        if status is None:
            status = "outputs only (not in the manifest)" if (run / stem).is_dir() else "not run"
        note = (
            entry.get("reason")
            or entry.get("error")
            or entry.get("pending")
            or (
                "running when this report was written (or interrupted)"
                if status == "running"
                else ""
            )
        )
        rows.append(
            {
                "notebook": stem,
                "status": status,
                "wall_s": entry.get("wall_s"),
                "started": entry.get("started"),
                "finished": entry.get("finished"),
                "note": note,
                "folder": str(run / stem),
                "parameters": entry.get("parameters"),
            }
        )
    return rows


def eval_protocols(folder: Path) -> dict[str, str]:
    """{evaluation folder (relative): protocol fingerprint} of every run.json up to two levels
    below folder (05: <benchmark>/ and <policy>/<benchmark>/)."""
    out = {}
    for run_json in sorted(list(folder.glob("*/run.json")) + list(folder.glob("*/*/run.json"))):
        if _stale(run_json, folder):
            continue
        rec = read_json_marked(run_json)
        if is_missing(rec) or not isinstance(rec.get("sampling"), dict):
            continue
        protocol = {
            **rec["sampling"],
            "reasoning": rec.get("reasoning"),
            "early_stop": rec.get("early_stop"),
        }
        out[str(run_json.parent.relative_to(folder))] = protocol_fingerprint(protocol)
    return out


def summary_ci(summary_path: Path) -> list | None:
    s = read_json_marked(summary_path)
    return None if is_missing(s) else s.get("pass@1_ci")


def sweep_frontier(folder: Path) -> dict:
    """folder/frontier.json (a strictness sweep's) with `ci`: {run: pass@1 CI} from
    folder/eval/<run>/summary.json."""
    payload = read_json_marked(folder / "frontier.json")
    if is_missing(payload):
        return payload
    payload["ci"] = {
        r["run"]: summary_ci(folder / "eval" / r["run"] / "summary.json")
        for r in payload.get("rows", [])
        if "run" in r
    }
    return payload


def alpha_frontier(path: Path) -> dict:
    """An alpha-grid frontier.json with `ci` ({repr(alpha): pass@1 CI} from the per-alpha
    summary.json in the eval folder it records) and `format_ci` ({repr(alpha): Wilson 95%
    interval of the format-error share over its samples})."""
    payload = read_json_marked(path)
    if is_missing(payload):
        return payload
    cis = {}
    eval_dir = Path(payload["eval_dir"]) if payload.get("eval_dir") else path.parent / "eval"
    for d in sorted(eval_dir.iterdir()) if eval_dir.is_dir() else []:
        m = _ALPHA_DIR.match(d.name)
        if m:
            cis[repr(float(m.group(1)))] = summary_ci(d / "summary.json")
    payload["ci"] = {
        repr(float(r["alpha"])): cis.get(repr(float(r["alpha"]))) for r in payload.get("rows", [])
    }
    payload["format_ci"] = {
        repr(float(r["alpha"])): wilson(r["format_error"] * r["n_samples"], r["n_samples"])
        for r in payload.get("rows", [])
        if r.get("format_error") is not None and r.get("n_samples")
    }
    return payload


def settings_results(folder: Path) -> dict:
    """{setting: {"sweep", "alpha", "ensemble"}} of 11's per-setting folders (missing markers
    for what a setting lacks); {} when no setting ran."""
    out = {}
    for s in SETTINGS:
        d = folder / s
        if not d.is_dir():
            continue
        out[s] = {
            "sweep": sweep_frontier(d),
            "alpha": alpha_frontier(d / "alpha" / "frontier.json"),
            "ensemble": read_json_marked(d / "ensemble" / "passk.json"),
        }
    return out


def figure_files(run: Path) -> list[dict]:
    """{"path", "caption", "group"} of every PNG figure of the run: the profile's figures folder
    (99's figures.json names it; default figures/<profile>/) first, then the PNGs inside the run
    folder (not in folders set aside as .stale-<k>), each file once."""
    out, seen = [], set()
    record = read_json_marked(run / FIGURES / "figures.json")
    fig_dir = None
    if not is_missing(record) and record.get("figures_dir"):
        fig_dir = Path(record["figures_dir"])
    else:
        try:
            fig_dir = figures_dir(run.resolve().name)
        except ValueError:
            fig_dir = None
    groups = []
    if fig_dir is not None and fig_dir.is_dir():
        groups.append(("figures", fig_dir, sorted(fig_dir.glob("*.png"))))
    groups.append(("run folder", run, sorted(p for p in run.rglob("*.png") if not _stale(p, run))))
    for group, root, files in groups:
        for p in files:
            key = p.resolve()
            if key in seen:
                continue
            seen.add(key)
            out.append({"path": str(p), "group": group, "caption": str(p.relative_to(root))})
    return out


def trackers(run: Path) -> list[dict]:
    """{"dir", "relative", "files"} per folder holding TensorBoard event files (the tracker of
    every GRPO run, <output_dir>/runs/<time>_<host>/, and the RM's 02_reward_model/tb/)."""
    dirs: dict[Path, int] = {}
    for f in run.rglob(TB_EVENTS):
        if not _stale(f, run):
            dirs[f.parent] = dirs.get(f.parent, 0) + 1
    return [
        {"dir": str(d), "relative": str(d.relative_to(run)), "files": n}
        for d, n in sorted(dirs.items())
    ]


def run_provenance(manifest: dict) -> dict:
    """The git hashes and package versions the manifest recorded (each distinct value with the
    notebooks it came from) and this report's own provenance (now)."""
    gits: dict[str, list] = {}
    versions: dict[str, dict[str, list]] = {}
    for stem, entry in manifest.items():
        if not isinstance(entry, dict):
            continue
        if entry.get("git") is not None:
            gits.setdefault(str(entry["git"]), []).append(stem)
        for pkg, v in (entry.get("versions") or {}).items():
            versions.setdefault(pkg, {}).setdefault(str(v), []).append(stem)
    return {"git": gits, "versions": versions, "report": provenance()}


def guarded(read, path, *args):
    """read(path, *args), or a missing marker saying why when the file holds what the reader
    does not expect (a record of an older layout: a key, type or value it lacks)."""
    try:
        return read(path, *args)
    except (KeyError, TypeError, ValueError, OSError, AttributeError) as exc:
        return missing(path, f"could not be read: {type(exc).__name__}: {exc}")


class NotARunFolder(RecodeError, FileNotFoundError):
    """The folder given to the report is not a run folder, or its manifest is corrupt."""


def is_run_folder(path: Path) -> bool:
    """A folder `recode reproduce` (or a notebook) wrote: a manifest or a step's folder."""
    return path.is_dir() and (
        (path / MANIFEST).is_file() or any((path / s).is_dir() for s in STEPS)
    )


def check_run_folder(run: Path) -> None:
    """NotARunFolder, with the reason, unless `run` is a run folder with a readable manifest
    (or none yet); a parent of run folders (`runs`) names the ones inside."""
    if not run.is_dir():
        raise NotARunFolder(
            f"{run}: no run folder here (runs/<profile>/, written by "
            "`recode reproduce --profile <profile>`)"
        )
    if not is_run_folder(run):
        inside = sorted(str(p) for p in run.iterdir() if is_run_folder(p))
        hint = (
            f"; the run folders inside are {', '.join(inside)}"
            if inside
            else "; run `recode reproduce --profile <profile>` first"
        )
        raise NotARunFolder(
            f"{run} is not a run folder (no {MANIFEST}, no step folder such as {STEPS[0]}/){hint}"
        )
    if (run / MANIFEST).is_file():
        try:
            manifest = json.loads((run / MANIFEST).read_text())
        except (OSError, ValueError) as exc:
            raise NotARunFolder(
                f"{run / MANIFEST} is corrupt ({exc}); the step folders are "
                f"intact: `recode reproduce` rewrites it as the steps run "
                f"(move it aside first)"
            ) from None
        if not isinstance(manifest, dict):
            raise NotARunFolder(
                f"{run / MANIFEST} is corrupt (a JSON {type(manifest).__name__}, "
                f"not an object of steps)"
            )


def run_label(run: Path, manifest: dict) -> str:
    """The run's name for a column header: the folder's name, its parent and the date and git
    hash of its latest finished step (two runs of one profile are told apart)."""
    run = run.resolve()
    done = [e for e in manifest.values() if isinstance(e, dict) and e.get("finished")]
    last = max(done, key=lambda e: str(e["finished"]), default={})
    when = str(last.get("finished", ""))[:10]
    git = str(last.get("git") or "")[:8]
    extra = ", ".join(x for x in (when, f"git {git}" if git else "") if x)
    return f"{run.parent.name}/{run.name}" + (f" ({extra})" if extra else "")


def current_headline(run: Path, step: str, entries: dict) -> dict:
    """step/headline.json, unless the step's latest run did not complete: then a marker saying
    so (the file there is an earlier run's, and its numbers are not this run's)."""
    path = run / step / HEADLINE
    entry = entries.get(step) or {}
    status = entry.get("status")
    if status in (None, "completed", "excluded") or not path.is_file():
        return read_json_marked(path)
    why = entry.get("error") or entry.get("pending") or ""
    return missing(
        path,
        f"its latest run is {status}"
        + (f" ({why})" if why else "")
        + "; the file there is from an earlier run",
    )


def read_run(run_dir) -> dict:
    """Everything the report shows of one run folder (module docstring); never raises for a
    missing or unreadable result file. NotARunFolder when run_dir is not a run folder (or
    its manifest is corrupt)."""
    run = Path(run_dir)
    check_run_folder(run)
    manifest = read_json_marked(run / MANIFEST)
    entries = {} if is_missing(manifest) else manifest
    return {
        "run_dir": str(run),
        "name": run.resolve().name,
        "label": run_label(run, entries),
        "manifest": manifest,
        "notebooks": notebook_rows(run, entries),
        "headlines": {s: current_headline(run, s, entries) for s in STEPS},
        "headline": current_headline(run, CODEGEN_EVAL, entries),
        "headline_protocols": guarded(eval_protocols, run / CODEGEN_EVAL),
        "sweep": guarded(sweep_frontier, run / STRICTNESS_SWEEP),
        "frontier": guarded(alpha_frontier, run / WEIGHT_AVERAGING / "frontier.json"),
        "ensemble": read_json_marked(run / ENSEMBLE / "passk.json"),
        "settings": guarded(settings_results, run / SETTINGS_SWEEP),
        "settings_dir": str(run / SETTINGS_SWEEP),
        "claims": guarded(lambda r: build_report(r)["claims"], run),
        "figures": figure_files(run),
        "trackers": trackers(run),
        "provenance": run_provenance(entries),
    }
