"""`recode report RUN [RUN_B] [--out FILE]`: a run's self-contained HTML report, or two runs
compared.

The argument half of recode_lib.report: one run folder (runs/<profile>) -> RUN/report.html
(figures embedded, tables with intervals, claims, notebook status and time, trackers,
provenance; a result a notebook did not write shows as "not run" with its path); two run
folders -> RUN/compare-<RUN_B's name>.html (deltas B - A; frontiers overlaid only when their
evaluation specs match). Prints the path written; exit status 0, or 2 with one error line when
a run folder does not exist.
"""

from __future__ import annotations

from recode_lib.cli import CliError
from recode_lib.report import write_comparison, write_report


def add_arguments(parser) -> None:
    parser.add_argument("run", help="a run folder, e.g. runs/smoke")
    parser.add_argument(
        "run_b", nargs="?", default=None, help="a second run folder: compare the two side by side"
    )
    parser.add_argument("--out", default=None, help="the HTML file to write (default: in RUN)")


def run(args) -> int:
    try:
        path = (
            write_comparison(args.run, args.run_b, args.out)
            if args.run_b
            else write_report(args.run, args.out)
        )
    except FileNotFoundError as exc:
        raise CliError(str(exc)) from None
    print(f"report: {path}")
    return 0
