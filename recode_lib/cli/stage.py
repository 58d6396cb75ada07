"""`recode stage --profile paper [--to DIR] [--list] [--only NAME,...]`: stage a profile's models
and datasets for an offline run.

The argument half of recode_lib.runner.staging: resolves the profile's parameters per notebook
(recode_lib.runner.pipeline.profile_parameters, `--set KEY=VALUE` as in `recode reproduce`; its
variants' too, recode_lib.runner.variants), prints every model and dataset it names with size and
license
gate, and (without --list) downloads them into the Hugging Face cache and the data directory, or
under --to DIR, then prints how the pipeline runs offline. Exit 0 when everything is here, 2 naming
what could not be fetched (offline: HF_HUB_OFFLINE set or no connection; a gated model without
access).
"""

from __future__ import annotations

from recode_lib.cli import CliError
from recode_lib.cli.reproduce import parse_overrides
from recode_lib.core.bench_env import bcb_notebooks, status_line
from recode_lib.runner.pipeline import (
    PipelineError,
    load_profile,
    profile_parameters,
    variant_parameters,
)
from recode_lib.runner.staging import (
    Destination,
    disk_note,
    fetch_items,
    format_items,
    offline_instructions,
    stage_items,
    staged_params,
)


def add_arguments(parser) -> None:
    parser.add_argument("--profile", default="paper", help="the profile to stage (default paper)")
    parser.add_argument("--params", default=None, help="a parameter YAML instead of the profile's")
    parser.add_argument(
        "-p",
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a parameter for every notebook that declares it",
    )
    parser.add_argument(
        "--to",
        default=None,
        metavar="DIR",
        help="download into DIR (models/<owner>/<name>, data/) instead of the "
        "Hugging Face cache and the data directory",
    )
    parser.add_argument(
        "--list", action="store_true", help="only print what the profile needs (never downloads)"
    )
    parser.add_argument(
        "--only",
        default=None,
        metavar="NAME,...",
        help="fetch only these models/datasets (hub ids or benchmark names)",
    )
    parser.add_argument(
        "--ignore-space",
        action="store_true",
        help="fetch even when the disk has less free space than the items need "
        "(refused by default, before anything is downloaded)",
    )


def run(args) -> int:
    import yaml

    try:
        overrides = parse_overrides(args.set)
        params = profile_parameters(args.profile, args.params, overrides)
        variants = variant_parameters(args.profile, args.params, overrides)
        spec = load_profile(args.profile, args.params)
    except PipelineError as exc:
        raise CliError(str(exc)) from None
    items = stage_items(params, profile=args.profile, variants=variants)
    if args.only:
        wanted = {x.strip() for x in args.only.split(",") if x.strip()}
        unknown = wanted - {i.name for i in items}
        if unknown:
            raise CliError(
                f"--only: {', '.join(sorted(unknown))} not among the profile's "
                f"items ({', '.join(i.name for i in items)})"
            )
        items = [i for i in items if i.name in wanted]
    print(format_items(items, profile=args.profile))
    if bcb_notebooks(params):  # not a download: a venv built by `make bcb-env` (bench_env)
        print(status_line())
    if args.list:
        return 0
    dest = Destination.make(args.to)
    note = disk_note(items, dest)
    if note and not args.ignore_space:
        raise CliError(f"not enough disk space: {note} (--ignore-space fetches anyway)")
    if note:
        print(f"warning: {note}; fetching anyway (--ignore-space)")
    print()
    report = fetch_items(items, dest)
    params_file = None
    if dest.to is not None:
        local = {
            i.name: str(dest.model_dir(i))
            for i in items
            if i.fetch.kind == "hf_model" and i.name in report.fetched
        }
        if local:
            params_file = dest.to / f"{args.profile}.staged.yaml"
            params_file.parent.mkdir(parents=True, exist_ok=True)
            params_file.write_text(
                f"# `recode stage --profile {args.profile} --to {dest.to}`: the profile with "
                "every staged model id replaced by its folder\n"
                + yaml.safe_dump(staged_params(spec, params, local), sort_keys=False)
            )
    print()
    print(
        f"staged {len(report.fetched)} item(s)"
        + (f", {len(report.skipped)} need no download" if report.skipped else "")
        + (f"; NOT fetched: {len(report.failed)}" if report.failed else "")
    )
    for name, where in report.fetched.items():
        print(f"  {name} -> {where}")
    if report.failed:
        lines = [f"  {name}: {why}" for name, why in report.failed.items()]
        head = (
            f"could not fetch {len(report.failed)} item(s) of profile {args.profile}"
            + (f" (offline: {report.offline})" if report.offline else "")
            + ":"
        )
        tail = (
            f"run `recode stage --profile {args.profile}` on a machine with internet "
            "(HF_HUB_OFFLINE unset; a token for gated models), with --to DIR on storage this "
            "machine sees, then rerun here"
        )
        raise CliError("\n".join([head] + lines + [tail]))
    print(offline_instructions(items, dest, args.profile, params_file))
    return 0
