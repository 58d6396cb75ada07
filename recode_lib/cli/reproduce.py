"""`recode reproduce --profile P [--variant NAME] [--only 00,05] [--from 04] [--force]
[--set K=V] [--gpus N --gpu-memory GB]`: run the notebooks.

The argument half of recode_lib.runner.pipeline.run_pipeline (which does the work: papermill, the
manifest, skipping completed notebooks). A GPU profile (paper) is checked by the resource plan
first (recode_lib.plan) on the cluster --gpus/--gpu-memory/--nodes give, else on this machine's
GPUs; --no-plan skips the check. It prints one summary line and exits 0, or 2 with one
error line for a bad profile, parameter or failed notebook, or 3 when the run stopped at a
human step (the paper profile's LCB-RB adjudication): then it prints what to do (`recode
adjudicate DIR`, or the widget in JupyterLab) and the command that resumes the run.
"""

from __future__ import annotations

import sys
from typing import Any

from recode_lib.cli import CliError, add_dataclass_arguments, dataclass_from_args
from recode_lib.core.paths import runs_dir
from recode_lib.plan import ClusterSpec
from recode_lib.runner.pipeline import HumanStepPending, PipelineError, RunInterrupted, run_pipeline
from recode_lib.runner.variants import variant_profile
from recode_lib.steps.profile import read_override

HUMAN_STEP_EXIT = 3  # the run stopped at a notebook waiting for a person (not an error)


def add_arguments(parser) -> None:
    parser.add_argument(
        "--profile",
        default="smoke",
        help="smoke (CPU, default), laptop (CPU, ~1 h, learning visible) or paper (GPUs)",
    )
    parser.add_argument("--params", default=None, help="a parameter YAML instead of the profile's")
    parser.add_argument(
        "--variant",
        default=None,
        metavar="NAME",
        help="run a variant of the profile (its `_variants` section, e.g. the "
        "paper's scale_32b): only its notebooks, into runs/<profile>@NAME",
    )
    parser.add_argument("--only", default=None, help="comma-separated notebook numbers, e.g. 00,05")
    parser.add_argument("--from", dest="from_", default=None, help="start at this notebook number")
    parser.add_argument("--force", action="store_true", help="rerun completed notebooks")
    parser.add_argument(
        "-p",
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a parameter for every notebook that declares it; "
        "RECIPE_FIELDS.FIELD=VALUE sets one recipe field",
    )
    parser.add_argument(
        "--kernel",
        default=None,
        help="Jupyter kernel name (default: 'recode' if installed, else python3)",
    )
    parser.add_argument(
        "--no-plan",
        action="store_true",
        help="skip the resource plan a GPU profile runs first (recode plan)",
    )
    add_dataclass_arguments(parser, ClusterSpec, defaults=False)  # default: this machine's GPUs


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """KEY=VALUE items -> {KEY: VALUE read for KEY's type (recode_lib.steps.profile.
    read_override: the text for a str parameter, else YAML)}; KEY.FIELD=VALUE sets one field of a
    mapping parameter ({KEY: {FIELD: VALUE}}, e.g. RECIPE_FIELDS.max_steps=1), merged with the
    profile's mapping field by field (recode_lib.runner.pipeline)."""
    import yaml

    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise CliError(f"--set {item!r}: expected KEY=VALUE")
        k, v = item.split("=", 1)
        name, dot, field = k.strip().partition(".")
        try:
            value = yaml.safe_load(v) if dot else read_override(name, v)
        except yaml.YAMLError as exc:
            raise CliError(
                f"--set {item!r}: the value is not YAML ({str(exc).splitlines()[0]})"
            ) from None
        if dot:
            if not isinstance(out.get(name, {}), dict) or not field:
                raise CliError(f"--set {item!r}: {name} is set whole and by field")
            out[name] = {**out.get(name, {}), field: value}
        else:
            out[name] = value
    return out


def run(args) -> int:
    cluster = None
    if args.gpus is not None or args.gpu_memory is not None or args.nodes is not None:
        if args.gpus is None or args.gpu_memory is None:
            raise CliError("give the cluster shape as --gpus N --gpu-memory GB (and --nodes N)")
        cluster = dataclass_from_args(ClusterSpec, args)
    try:
        results = run_pipeline(
            args.profile,
            only=args.only,
            from_=args.from_,
            force=args.force,
            params_file=args.params,
            overrides=parse_overrides(args.set),
            kernel_name=args.kernel,
            cluster=cluster,
            check_plan=not args.no_plan,
            variant=args.variant,
        )
    except RunInterrupted as exc:
        print(f"recode reproduce: {exc}", file=sys.stderr)
        return exc.exit_status
    except HumanStepPending as exc:
        print(f"recode reproduce: paused: {exc}", file=sys.stderr)
        return HUMAN_STEP_EXIT
    except PipelineError as exc:
        raise CliError(str(exc)) from None
    done = sum(r.status == "completed" for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    excluded = [r.stem for r in results if r.status == "excluded"]
    run_profile = variant_profile(args.profile, args.variant) if args.variant else args.profile
    print(
        f"pipeline {args.profile}: {done} executed, {skipped} skipped"
        + (f", {len(excluded)} left out by the profile ({', '.join(excluded)})" if excluded else "")
        + ", "
        f"{sum(r.wall_s for r in results):.1f} s; manifest at "
        f"{runs_dir(run_profile) / 'manifest.json'}"
    )
    return 0
