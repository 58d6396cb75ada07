"""Shared by the paper dry-run tests (tests/test_dryrun.py: every notebook, the stand-in or,
with RECODE_DRYRUN_ENGINE=vllm, the real engine; tests/test_vllm_real_dryrun.py: the
real-engine subset): run the dry run into a folder, offline, the human step decided as at
the terminal. It does not judge the results (the tests do)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from recode_lib.process_reward.lcbrb.adjudication import (
    DECISIONS_FILE,
    DecisionStore,
    read_pending,
    terminal_loop,
)
from recode_lib.runner.dryrun import dryrun_data_dir, engine_report, write_dryrun_params
from recode_lib.runner.pipeline import HumanStepPending, PipelineError, run_pipeline

FIXTURES = Path(__file__).parent / "fixtures"
ENGINE_FILE = "dryrun_engine.json"  # engine_report, beside the run's notebooks


def run_dryrun(root: Path, tiny_model, *, engine: str = "standin", only=None, overrides=None):
    """(root/runs/dryrun, the PipelineError's text or None): the dry run of `engine` (only
    the notebooks `only` selects, with `overrides`) with runs and data under `root`, no
    network (05's API row refused), 03's adjudication answered "a" at the terminal and the
    run resumed; engine_report written to the run folder's ENGINE_FILE and printed."""
    params = write_dryrun_params(root / "dryrun.yaml", tiny_model, engine=engine)
    env = {
        "RECODE_RUNS_DIR": str(root / "runs"),
        "RECODE_DATA_DIR": str(dryrun_data_dir(root / "data", FIXTURES)),
        "OPENAI_API_KEY": None,
        "OPENAI_BASE_URL": None,
    }  # no network: 05's API row is refused
    old = {k: os.environ.get(k) for k in env}
    for k, v in env.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    run = root / "runs" / "dryrun"
    kwargs = {"params_file": params, "log": lambda *_: None, "only": only, "overrides": overrides}
    error = None
    try:
        run.mkdir(parents=True, exist_ok=True)
        report = engine_report(engine)
        (run / ENGINE_FILE).write_text(json.dumps(report, indent=1))
        print(f"[dry run] engine {engine}; not on the real vLLM engine:")
        for path, why in report["not_real_engine"].items():
            print(f"[dry run]   {path}: {why}")
        try:
            run_pipeline("dryrun", **kwargs)
        except HumanStepPending:  # the paper's human step (03, ADJUDICATION: widget):
            folder = run / "03_lcb_rb"  # decided as at the terminal,
            terminal_loop(
                read_pending(folder),
                DecisionStore(folder / DECISIONS_FILE),
                read=lambda _prompt: "a",
                write=lambda *_: None,
            )
            run_pipeline("dryrun", **kwargs)  # then resumed
    except PipelineError as exc:
        error = str(exc)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return run, error
