"""The generator ablation compares like with like: notebook 02 with ABLATION = True scores the
single- and the cross-generator RMs on the same held-out pairs, which neither trained on.

The tiny model of the notebook run writes no usable traces, so this test gives notebook 02 CRPL
pairs made by the rule rewriter (two generators) and runs it alone with the tiny backbone
(marker `notebooks`: it executes a notebook, about a minute)."""

from __future__ import annotations

import json

import pytest
import yaml
from crpl_helpers import trace

from recode_lib.core.jsonl import write_jsonl_atomic
from recode_lib.core.paths import runs_dir
from recode_lib.process_reward.crpl import CRPLConfig, GeneratorSpec, synthesize_rewrites
from recode_lib.process_reward.pairs import build_pairs, equal_training_pairs, heldout_pairs
from recode_lib.runner.pipeline import run_pipeline


@pytest.mark.notebooks
def test_notebook_02_scores_both_rms_on_pairs_neither_trained_on(tiny_model_dir, tmp_path):
    traces = [trace(f"p/{i}#s0", f"p/{i}") for i in range(8)]
    rws = []
    for gen in ("main", "second"):
        cfg = CRPLConfig(generators=[GeneratorSpec(gen, "rules")])
        rws += synthesize_rewrites(traces, cfg, tmp_path / f"rw_{gen}.jsonl")
    single, _ = build_pairs(traces, rws, mode="single", generator="main", val_fraction=0.25)
    cross, _ = build_pairs(traces, rws, mode="cross", val_fraction=0.25)
    cross_train = [p for p in cross if p["split"] == "train"]
    cross = [
        p for p in cross if p["split"] != "train" or p in cross_train[:3]
    ]  # fewer: 01 cuts single
    ablation_single, cross, report = equal_training_pairs(single, cross)  # as notebook 01 does
    assert report["cut"] == "single" and report["train_pairs"] == 3
    held, _ = heldout_pairs({"single": single, "cross": cross})
    src = runs_dir("tiny") / "01_crpl_synthesis"
    for name, rows in (
        ("pairs", single),
        ("pairs_cross", cross),
        ("pairs_heldout", held),
        ("pairs_ablation_single", ablation_single),
    ):
        write_jsonl_atomic(src / f"{name}.jsonl", rows)
    (src / "metrics.json").write_text(json.dumps({"ablation_equal_pairs": report}))
    params = tmp_path / "p.yaml"
    params.write_text(
        yaml.safe_dump(
            {
                "02_reward_model": {
                    "MODEL": str(tiny_model_dir),
                    "MAX_LENGTH": 512,
                    "MAX_STEPS": 1,
                    "BATCH_SIZE": 2,
                    "ABLATION": True,
                    "N_BOOT": 20,
                }
            }
        )
    )
    run_pipeline("tiny", only="02", params_file=params, log=lambda *_: None)
    out = runs_dir("tiny") / "02_reward_model"
    head = json.loads((out / "headline.json").read_text())
    assert head["ablation"]["n"] == len(held) > 0
    table = json.loads((out / "metrics.json").read_text())["ablation"]["table"]
    overall = {
        r["method"]: r for r in table if r["dataset"] == "heldout" and r["pair_type"] == "all"
    }
    assert set(overall) == {"single", "cross"}  # the same pairs for both RMs
    assert {r["n"] for r in overall.values()} == {len(held)}
    assert head["ablation"]["single"] == overall["single"]["accuracy"]
    trained = {p["problem_id"] for p in single + cross if p["split"] == "train"}
    assert not {p["problem_id"] for p in held} & trained
    assert (out / "rm_cross" / "config.json").is_file()
    # the single-generator side of the ablation is an RM trained on 01's count-matched cut, not
    # the main RM (which trained on every single-generator pair)
    abl = head["ablation"]
    assert abl["train_files"] == {
        "single": "pairs_ablation_single.jsonl",
        "cross": "pairs_cross.jsonl",
    }
    assert abl["single_rm"].endswith("rm_ablation_single")
    assert (out / "rm_ablation_single" / "config.json").is_file()
    assert abl["train"]["single"] == abl["train"]["cross"] == 3
    assert head["n_train_used"] > 3  # the main RM kept every pair
