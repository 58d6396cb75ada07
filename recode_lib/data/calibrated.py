"""The `calibrated:<profile>` benchmark: the problems a profile's calibration kept.

    from recode_lib.data import load_benchmark
    problems = load_benchmark("calibrated:laptop")              # in the order written
    problems = load_benchmark("calibrated:laptop:disagree")     # lenient/strict disagreement first

Notebook 00 (recode_lib.evaluation.calibration.write_calibrated) writes the problems whose
start-model pass rate lies strictly between 0 and 1 to recode_lib.core.run_files.calibrated_path
(profile); this module reads them back as Problems. It is the one stage module that reads a
step's output, and only through the run-folder layout's name for it: a benchmark name in a
recipe (`benchmark: calibrated:laptop`) must resolve in any process, notebook 04's and
`recode grpo`'s included, without the orchestration tier. It does not calibrate (evaluation
does) and does not write anything.
"""

from __future__ import annotations

from recode_lib.core.jsonl import read_jsonl
from recode_lib.core.run_files import DATA, calibrated_path
from recode_lib.data._io import DataError, take
from recode_lib.data.schema import Problem

ORDERS = ("written", "disagree")


def rates_disagree(record: dict) -> bool:
    """Whether a calibrated problem's start-model pass rates differ between the strictness levels
    calibration recorded (metadata start_pass_rate_k, e.g. R_1 0.5 and R_inf 0.0)."""
    rates = (record.get("metadata") or {}).get("start_pass_rate_k") or {}
    return len(set(rates.values())) > 1


def load_calibrated(
    data_dir=None, limit: int | None = None, profile: str = "laptop", order: str = "written"
) -> list[Problem]:
    """The `calibrated:<profile>` benchmark: the problems in calibrated_path(profile), in the
    order written (DataError naming the file and the notebook that writes it when missing).
    order="disagree" (`calibrated:<profile>:disagree`): first the problems whose start-model pass
    rates differ between the strictness levels calibration recorded (rates_disagree: the model
    sometimes writes a program that passes the edge case only), then the rest, each group in
    the written order. A strictness sweep trained on problems where R_k and R_inf always agree
    trains the same model twice; paper B's frontier needs problems "tuned to model capability"
    for both rewards. data_dir is accepted for the registry's uniform call and ignored."""
    if order not in ORDERS:
        raise DataError(f"calibrated:{profile}: unknown order {order!r} (written | disagree)")
    path = calibrated_path(profile)
    if not path.is_file():
        raise DataError(
            f"{path} is missing: run notebook {DATA} of profile {profile!r} with "
            "CALIBRATE = True first"
        )
    rows = read_jsonl(path)
    if order == "disagree":
        if not any(rates_disagree(r) for r in rows):
            raise DataError(
                f"{path}: no problem has differing start pass rates per strictness "
                "level (calibrate with CAL_KEEP_KS naming a lenient k, e.g. '1,inf')"
            )
        rows = [r for r in rows if rates_disagree(r)] + [r for r in rows if not rates_disagree(r)]
    return take(
        [Problem.from_dict(r, f"{path}: problem {r.get('id', '?')!r}") for r in rows], limit
    )
