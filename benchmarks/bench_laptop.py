"""Benchmark: wall time of each notebook of a profile's reproduce run, and the total vs a budget.

    python benchmarks/bench_laptop.py [--profile laptop] [--budget-min 60] [--runs-dir runs]

Reads what `make reproduce PROFILE=<profile>` left behind, never runs anything: per notebook the
wall time from runs/<profile>/manifest.json (recode_lib.pipeline writes it), else from the
executed notebook's papermill metadata (runs/<profile>/notebooks/NN_*.ipynb:
metadata.papermill.duration). Prints one row per notebook (seconds, share of the total, source),
the total in minutes and whether it fits the budget (the laptop profile's target: 60 minutes on
2 CPU cores). Notebooks that did not complete are listed with their status and not counted;
notebooks the profile leaves out (`skip` in its section: status `excluded`) are listed with the
reason and are not part of the run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def notebook_times(run: Path) -> dict[str, dict]:
    """{notebook stem: {"wall_s", "status", "source"}} from the manifest, then papermill metadata."""
    out: dict[str, dict] = {}
    manifest = run / "manifest.json"
    if manifest.is_file():
        for stem, rec in json.loads(manifest.read_text()).items():
            out[stem] = {"wall_s": rec.get("wall_s"), "status": rec.get("status"), "source": "manifest",
                         "reason": rec.get("reason")}
    for nb in sorted((run / "notebooks").glob("[0-9]*.ipynb")):
        stem = nb.stem
        if stem.endswith(".failed") or (stem in out and (out[stem]["wall_s"] is not None
                                                         or out[stem]["status"] == "excluded")):
            continue
        pm = json.loads(nb.read_text()).get("metadata", {}).get("papermill", {})
        if pm.get("duration") is not None:
            out[stem] = {"wall_s": float(pm["duration"]), "status": pm.get("status", "completed"),
                         "source": "papermill"}
    return dict(sorted(out.items()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="laptop")
    ap.add_argument("--budget-min", type=float, default=60.0)
    ap.add_argument("--runs-dir", default=str(ROOT / "runs"))
    a = ap.parse_args(argv)
    run = Path(a.runs_dir) / a.profile
    times = notebook_times(run)
    if not times:
        print(f"no executed notebooks under {run}: run `make reproduce PROFILE={a.profile}` first",
              file=sys.stderr)
        return 2
    done = {k: v for k, v in times.items() if v["status"] == "completed" and v["wall_s"] is not None}
    total = sum(v["wall_s"] for v in done.values())
    print(f"{'notebook':28s} {'wall s':>9s} {'share':>7s}  source")
    for stem, v in times.items():
        if stem in done:
            print(f"{stem:28s} {v['wall_s']:9.1f} {v['wall_s'] / total:7.1%}  {v['source']}")
        elif v["status"] == "excluded":
            print(f"{stem:28s} {'-':>9s} {'-':>7s}  left out by the profile: {v.get('reason')}")
        else:
            print(f"{stem:28s} {'-':>9s} {'-':>7s}  {v['status']} (not counted)")
    fits = total <= a.budget_min * 60
    print(f"total {total / 60:.1f} min over {len(done)} completed notebooks; budget "
          f"{a.budget_min:.0f} min: {'within' if fits else 'OVER'} "
          f"({total / 60 / a.budget_min:.0%} of it)")
    missing = [k for k, v in times.items() if k not in done and v["status"] != "excluded"]
    if missing:
        print(f"{len(missing)} notebook(s) not completed: the total is a lower bound")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
