"""The run-folder layout: the step folders of a profile's run folder and the names inside them
that one step writes and a later step reads. Pure names (and one tolerant reader); it writes
nothing.

    RUN = paths.runs_dir("smoke")                        # where run folders live: core.paths
    step_dir(RUN, STRICTNESS_SWEEP)                      # RUN/06_strictness_sweep
    crpl_pairs_path(RUN, heldout=True)                   # RUN/01_crpl_synthesis/pairs_heldout.jsonl
    reward_model_dir(RUN)                                # RUN/02_reward_model/rm
    policy_dir(RUN, "gated")                             # RUN/04_cg_grpo/gated/final
    calibrated_path("laptop")  # runs/laptop/00_data_and_models/calibrated.jsonl
    rows = read_metrics(step_dir(RUN, GRPO) / "gated")   # one dict per logged GRPO step
    out_dir / METRICS_FILE                               # "metrics.jsonl"
    out_dir / TRANSFER / "final"                         # the cross-model RM transfer's policy

`runs/<profile>/NN_<step>`: one folder per notebook, named as the notebook (STEPS, in pipeline
order). This is the one module that spells the layout: recode_lib.orchestration ties the steps
together through it (06 -> 07 -> 08, 11, the laptop report), and a stage names a file here only
where a name that any process must resolve points at a step's output: the `calibrated:<profile>`
benchmark (recode_lib.data.calibrated reads calibrated_path), a GRPO run's metrics log.
Where the run folders themselves live (`$RECODE_RUNS_DIR`, `<project>/runs`) is
recode_lib.core.paths's.

A GRPO run's metrics log is `<output_dir>/metrics.jsonl`, one JSON line per logging step keyed
by `step` (written by recode_lib.training.callbacks.MetricsJsonlCallback during training);
`read_metrics` reads it for training's own checks, the analysis tables and the figures, and
tolerates a torn last line (a run killed mid-write). TRANSFER is the run name of notebook 04's
cross-model RM transfer policy (training.launch.transfer_variants trains it, the headline table
in recode_lib.evaluation.headline evaluates it).
"""

from __future__ import annotations

from pathlib import Path

from recode_lib.core.jsonl import read_jsonl
from recode_lib.core.paths import runs_dir

# the step folders of a run folder, in pipeline order (one per notebook, named as it)
DATA = "00_data_and_models"
CRPL = "01_crpl_synthesis"
REWARD_MODEL = "02_reward_model"
LCB_RB = "03_lcb_rb"
GRPO = "04_cg_grpo"
CODEGEN_EVAL = "05_codegen_eval"
STRICTNESS_SWEEP = "06_strictness_sweep"
WEIGHT_AVERAGING = "07_weight_averaging"
ENSEMBLE = "08_ensemble_passk"
REPAIR = "09_repair"
MATH = "10_math_domain"
SETTINGS_SWEEP = "11_settings_sweep"
FIGURES = "99_paper_figures"
STEPS = (
    DATA,
    CRPL,
    REWARD_MODEL,
    LCB_RB,
    GRPO,
    CODEGEN_EVAL,
    STRICTNESS_SWEEP,
    WEIGHT_AVERAGING,
    ENSEMBLE,
    REPAIR,
    MATH,
    SETTINGS_SWEEP,
    FIGURES,
)

METRICS_FILE = "metrics.jsonl"
HEADLINE_FILE = "headline.json"  # a step's headline record, read by later steps and the report
TRANSFER = "transfer"  # the run name (04_cg_grpo/transfer) of the cross-model RM transfer
CALIBRATED_FILE = "calibrated.jsonl"  # the problems 00's calibration kept (DATA/CALIBRATED_FILE)
PAIRS_FILE = "pairs.jsonl"  # 01's preference pairs (CRPL/PAIRS_FILE): 02 trains the RM on them
HELDOUT_PAIRS_FILE = "pairs_heldout.jsonl"  # 01's held-out pairs: 02 and 03 score the RM on them
RM_DIR = "rm"  # 02's reward model (REWARD_MODEL/RM_DIR): 03 checks it, 04 and 10 train with it
RM_CROSS_DIR = "rm_cross"  # 02's generator-ablation RM (trained on the cross-generator pairs)
FINAL_DIR = "final"  # a GRPO run's final policy (GRPO/<run>/FINAL_DIR), which evaluation loads


def step_dir(run_dir: str | Path, step: str, create: bool = False) -> Path:
    """run_dir/<step> for one of STEPS (ValueError naming the step otherwise); made when
    `create`."""
    if step not in STEPS:
        raise ValueError(f"unknown step folder {step!r}; the run-folder layout has {list(STEPS)}")
    path = Path(run_dir) / step
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def crpl_pairs_path(run_dir: str | Path, heldout: bool = False) -> Path:
    """Notebook 01's preference pairs under run_dir (its held-out pairs when `heldout`)."""
    return step_dir(run_dir, CRPL) / (HELDOUT_PAIRS_FILE if heldout else PAIRS_FILE)


def reward_model_dir(run_dir: str | Path, cross: bool = False) -> Path:
    """Notebook 02's reward model under run_dir (the generator ablation's when `cross`)."""
    return step_dir(run_dir, REWARD_MODEL) / (RM_CROSS_DIR if cross else RM_DIR)


def policy_dir(run_dir: str | Path, run: str) -> Path:
    """The final policy of notebook 04's GRPO run `run` (a variant, or one seed's run of it)."""
    return step_dir(run_dir, GRPO) / run / FINAL_DIR


def calibrated_path(profile: str) -> Path:
    """Where profile `profile`'s calibration (notebook 00) writes the problems it kept, which the
    `calibrated:<profile>` benchmark loads."""
    return step_dir(runs_dir(profile, create=False), DATA) / CALIBRATED_FILE


def read_metrics(output_dir: str | Path) -> list[dict]:
    """The rows of output_dir/metrics.jsonl, in order ([] when the run logged nothing yet)."""
    p = Path(output_dir) / METRICS_FILE
    return read_jsonl(p, allow_torn_tail=True) if p.exists() else []
