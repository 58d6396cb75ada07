"""`recode session --profile laptop [--params FILE] [-p KEY=VALUE]`: notebooks for JupyterLab
bound to a profile.

The argument half of recode_lib.runner.interactive: writes runs/<profile>/interactive/NN_name.ipynb
(the profile's parameters injected, a last cell that records the run in the manifest) and
prints how to open them (`make lab PROFILE=<profile>` does both).
"""

from __future__ import annotations

from recode_lib.cli.reproduce import parse_overrides
from recode_lib.runner.interactive import prepare_session, session_dir


def add_arguments(parser) -> None:
    parser.add_argument("--profile", default="smoke", help="the profile to bind (default smoke)")
    parser.add_argument("--params", default=None, help="a parameter YAML instead of the profile's")
    parser.add_argument(
        "-p",
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a parameter for every notebook that declares it",
    )


def run(args) -> int:
    written = prepare_session(
        args.profile, params_file=args.params, overrides=parse_overrides(args.set)
    )
    folder = session_dir(args.profile)
    print(f"{len(written)} notebooks bound to the {args.profile} profile in {folder}")
    print(f"open them: jupyter lab {folder}   (or: make lab PROFILE={args.profile})")
    print(
        "each one's last cell records the run in the manifest, so `make reproduce "
        f"PROFILE={args.profile}` skips what you ran as committed"
    )
    return 0
