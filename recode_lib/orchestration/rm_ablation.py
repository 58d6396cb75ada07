"""The generator ablation's two training sets, count-matched, as notebook 01 wrote them.

    sets = ablation_sets(RUN)          # runs/<profile>/01_crpl_synthesis/ -> both training sets
    sets["single"]["train"], sets["cross"]["train"]      # equal numbers of training pairs
    sets["single"]["own_rm"]           # True: train a separate single-generator RM on them

ReCode's ablation: "pairs from a single generator beat pairs mixed across generators". Notebook 01
cuts the larger set's training pairs to the smaller count (process_reward.pairs.
equal_training_pairs) and records which it cut in metrics.json ("ablation_equal_pairs"): when
the single-generator set was cut, the cut set is `pairs_ablation_single.jsonl` and the main RM
(trained on every pair of `pairs.jsonl`) is NOT the ablation's single-generator RM — notebook 02
trains one on that file (`own_rm` True); otherwise `pairs.jsonl` is already count-matched and
the main RM is it. The choice follows 01's record, never which files happen to exist (a file
left by an earlier run is not read), and the two training counts are checked equal (ValueError
naming the files and counts otherwise: 01's outputs are out of step). It trains nothing.
"""

from __future__ import annotations

from pathlib import Path

from recode_lib.core.jsonl import read_json, read_jsonl
from recode_lib.core.run_files import CRPL, PAIRS_FILE

__all__ = ["ABLATION_SINGLE_FILE", "CROSS_FILE", "PAIRS_FILE", "ablation_sets"]

CROSS_FILE = "pairs_cross.jsonl"  # the cross-generator set, count-matched
ABLATION_SINGLE_FILE = "pairs_ablation_single.jsonl"  # the single set cut to the cross count
METRICS_FILE = "metrics.json"


def _train(rows: list[dict]) -> list[dict]:
    return [p for p in rows if p.get("split") == "train"]


def ablation_sets(run_dir) -> dict:
    """{"single": {"file", "train", "own_rm"}, "cross": {"file", "train"}, "train_pairs": n,
    "cut": "single" | "cross" | None} from notebook 01's folder under `run_dir`.
    FileNotFoundError naming a missing file; ValueError when the two training counts differ."""
    crpl = Path(run_dir) / CRPL
    metrics_path = crpl / METRICS_FILE
    if not metrics_path.is_file():
        raise FileNotFoundError(f"{metrics_path}: notebook 01's record is missing (run 01 first)")
    report = read_json(metrics_path).get("ablation_equal_pairs")
    if not report:
        raise ValueError(
            f"{metrics_path}: no 'ablation_equal_pairs' (01 ran without "
            "SECOND_GENERATOR: there is no ablation to train)"
        )
    cut = report.get("cut")
    single_file = crpl / (ABLATION_SINGLE_FILE if cut == "single" else PAIRS_FILE)
    for f in (single_file, crpl / CROSS_FILE):
        if not f.is_file():
            raise FileNotFoundError(f"{f}: missing (notebook 01 records cut={cut!r}; run 01 again)")
    single, cross = _train(read_jsonl(single_file)), _train(read_jsonl(crpl / CROSS_FILE))
    if len(single) != len(cross) or len(single) != int(report.get("train_pairs", -1)):
        raise ValueError(
            f"generator ablation: {single_file.name} has {len(single)} training "
            f"pairs, {CROSS_FILE} {len(cross)}, {metrics_path.name} records "
            f"{report.get('train_pairs')}: not count-matched (run 01 again)"
        )
    return {
        "single": {"file": single_file.name, "train": single, "own_rm": cut == "single"},
        "cross": {"file": CROSS_FILE, "train": cross},
        "train_pairs": len(single),
        "cut": cut,
    }
