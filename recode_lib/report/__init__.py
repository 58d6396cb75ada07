"""The run report: one self-contained static HTML page per run folder, or two runs side by side.

    from recode_lib.report import write_comparison, write_report
    write_report("runs/smoke")                        # -> runs/smoke/report.html
    write_comparison("runs/smoke", "runs/laptop")     # -> runs/smoke/compare-laptop.html
    recode report runs/smoke [runs/laptop] [--out FILE]   # the same from the command line

Modules: run_view (what a run folder holds, each missing file a "not run" marker), html (the
page's building blocks: tables, numbers with intervals, base64 figures, no script or network),
run_page (one run's page: notebook status and time, ReCode's headline table, paper B's tables
with their intervals, the claims observed or not, every figure, the training-curve trackers,
provenance), overlay (two frontiers in one figure), compare (two runs: deltas, and frontiers
overlaid only when their evaluation specs match, refused with the reason otherwise).
Part of the orchestration tier: it reads every stage's result files through the run-folder
layout (recode_lib.core.run_files) and runs nothing; notebook 99 writes the report at the end of
every profile.
"""

from recode_lib.report.compare import write_comparison
from recode_lib.report.run_page import REPORT_FILE, write_report

__all__ = ["REPORT_FILE", "write_comparison", "write_report"]
