"""`recode reproduce --profile P [--only 00,05] [--from 04] [--force] [--set K=V]`: run the notebooks.

The argument half of recode_lib.pipeline.run_pipeline (which does the work: papermill, the
manifest, skipping completed notebooks). It prints one summary line and exits 0, or 2 with one
error line for a bad profile, parameter or failed notebook.
"""

from __future__ import annotations

from typing import Any

from recode_lib.cli import CliError
from recode_lib.paths import runs_dir
from recode_lib.pipeline import PipelineError, run_pipeline


def add_arguments(parser) -> None:
    parser.add_argument("--profile", default="smoke", help="smoke (CPU, default), laptop (CPU, ~1 h, learning visible) or paper (GPUs)")
    parser.add_argument("--params", default=None, help="a parameter YAML instead of the profile's")
    parser.add_argument("--only", default=None, help="comma-separated notebook numbers, e.g. 00,05")
    parser.add_argument("--from", dest="from_", default=None, help="start at this notebook number")
    parser.add_argument("--force", action="store_true", help="rerun completed notebooks")
    parser.add_argument("-p", "--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a parameter for every notebook that declares it")
    parser.add_argument("--kernel", default=None,
                        help="Jupyter kernel name (default: 'recode' if installed, else python3)")


def _parse_overrides(items: list[str]) -> dict[str, Any]:
    """KEY=VALUE items -> {KEY: VALUE read as YAML}."""
    import yaml

    out = {}
    for item in items:
        if "=" not in item:
            raise CliError(f"--set {item!r}: expected KEY=VALUE")
        k, v = item.split("=", 1)
        out[k.strip()] = yaml.safe_load(v)
    return out


def run(args) -> int:
    try:
        results = run_pipeline(args.profile, only=args.only, from_=args.from_, force=args.force,
                               params_file=args.params, overrides=_parse_overrides(args.set),
                               kernel_name=args.kernel)
    except PipelineError as exc:
        raise CliError(str(exc)) from None
    done = sum(r.status == "completed" for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    excluded = [r.stem for r in results if r.status == "excluded"]
    print(f"pipeline {args.profile}: {done} executed, {skipped} skipped"
          + (f", {len(excluded)} left out by the profile ({', '.join(excluded)})" if excluded else "")
          + ", "
          f"{sum(r.wall_s for r in results):.1f} s; manifest at "
          f"{runs_dir(args.profile) / 'manifest.json'}")
    return 0
