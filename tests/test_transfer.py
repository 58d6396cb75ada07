"""Cross-model RM transfer (ReCode: the process reward "transfers ... across models (Qwen3-4B-
Instruct)"): the recipe, the notebook-04 run it becomes, the rows 05 adds, and the profiles that
turn it on (paper: Qwen3-4B-Instruct-2507; the dry run: the tiny model) or off (smoke)."""

from __future__ import annotations

import json

import pytest
import yaml

from recode_lib.evaluation.headline import TRANSFER_START, transfer_policies
from recode_lib.runner.dryrun import dryrun_profile
from recode_lib.runner.pipeline import load_profile
from recode_lib.training.grpo import RECIPES_DIR, load_recipe
from recode_lib.training.launch import TRANSFER, TRANSFER_BASELINE, transfer_variants

PAPER_4B = "Qwen/Qwen3-4B-Instruct-2507"


def test_transfer_recipe_is_the_paper_recipe_with_another_policy():
    base = yaml.safe_load((RECIPES_DIR / "cg_grpo_paper.yaml").read_text())
    transfer = yaml.safe_load((RECIPES_DIR / "cg_grpo_transfer_paper.yaml").read_text())
    assert transfer["model"] == PAPER_4B != base["model"]
    assert {k: v for k, v in transfer.items() if k != "model"} == {
        k: v for k, v in base.items() if k != "model"
    }
    r = load_recipe("cg_grpo_transfer_paper")
    assert [x["name"] for x in r.rewards] == ["gated"] and r.rm_path  # needs 02's RM


def test_transfer_variants_is_a_gated_and_an_outcome_only_run_or_none():
    """The gated run of the other policy (as before) beside its outcome-only run: the transfer's
    gain is then separated from what GRPO itself gives that policy."""
    assert transfer_variants("") == {} and transfer_variants(None) == {}
    runs = transfer_variants(PAPER_4B)
    assert runs[TRANSFER] == {"rewards": [{"name": "gated"}], "model": PAPER_4B}
    assert runs[TRANSFER_BASELINE] == {"rewards": [{"name": "outcome_only"}], "model": PAPER_4B}
    assert list(runs) == [TRANSFER, TRANSFER_BASELINE]
    assert transfer_variants(PAPER_4B, baseline=None) == {TRANSFER: runs[TRANSFER]}


def test_transfer_policies_read_04s_record(tmp_path):
    assert transfer_policies(tmp_path, enabled=False) == ({}, {})
    with pytest.raises(FileNotFoundError, match="TRANSFER_MODEL"):
        transfer_policies(tmp_path)  # 04 has not run
    out = tmp_path / "04_cg_grpo"
    out.mkdir()
    (out / "headline.json").write_text(json.dumps({"transfer": None}))
    with pytest.raises(FileNotFoundError, match="no cross-model RM transfer run"):
        transfer_policies(tmp_path)  # 04 ran without one
    record = {"model": PAPER_4B, "final": str(out / TRANSFER / "final"), "rm_path": "rm"}
    (out / "headline.json").write_text(json.dumps({"transfer": record}))
    with pytest.raises(FileNotFoundError, match="no trained checkpoint"):
        transfer_policies(tmp_path)  # its final/ is missing
    (out / TRANSFER / "final").mkdir(parents=True)
    models, got = transfer_policies(tmp_path)
    assert models == {TRANSFER_START: PAPER_4B, TRANSFER: str(out / TRANSFER / "final")}
    assert got == {**record, "policies": [TRANSFER_START, TRANSFER]}
    # 04 also trained the outcome-only run of the same policy: a third row
    record["baseline_reward"] = "outcome_only"
    (out / "headline.json").write_text(json.dumps({"transfer": record}))
    with pytest.raises(FileNotFoundError, match="transfer_outcome_only"):
        transfer_policies(tmp_path)
    (out / TRANSFER_BASELINE / "final").mkdir(parents=True)
    models, got = transfer_policies(tmp_path)
    assert models[TRANSFER_BASELINE] == str(out / TRANSFER_BASELINE / "final")
    assert got["policies"] == [TRANSFER_START, TRANSFER, TRANSFER_BASELINE]
    # with several seeds, one row per seed's run (grouped again by policy_groups)
    seed_runs = {
        TRANSFER: {"0": "transfer_seed0", "1": "transfer_seed1"},
        TRANSFER_BASELINE: {"0": "transfer_outcome_only_seed0", "1": "transfer_outcome_only_seed1"},
    }
    (out / "headline.json").write_text(json.dumps({"transfer": record, "seed_runs": seed_runs}))
    for runs in seed_runs.values():
        for run in runs.values():
            (out / run / "final").mkdir(parents=True)
    models, _ = transfer_policies(tmp_path)
    assert set(models) == {
        TRANSFER_START,
        "transfer_seed0",
        "transfer_seed1",
        "transfer_outcome_only_seed0",
        "transfer_outcome_only_seed1",
    }


def test_profiles_turn_the_transfer_on_in_paper_and_off_in_smoke():
    paper, smoke = load_profile("paper"), load_profile("smoke")
    p4 = paper["04_cg_grpo"]
    assert p4["TRANSFER_MODEL"] == PAPER_4B and p4["TRANSFER_RECIPE"] == "cg_grpo_transfer_paper"
    assert load_recipe(p4["TRANSFER_RECIPE"]).model == p4["TRANSFER_MODEL"]
    assert paper["05_codegen_eval"]["TRANSFER"] is True
    assert (
        smoke["04_cg_grpo"]["TRANSFER_MODEL"] == ""
        and smoke["05_codegen_eval"]["TRANSFER"] is False
    )
    dry = dryrun_profile("/tiny")
    assert dry["04_cg_grpo"]["TRANSFER_MODEL"] == "/tiny"  # the 4B stand-in
    assert dry["04_cg_grpo"]["TRANSFER_RECIPE"] == "cg_grpo_transfer_paper"
    assert dry["05_codegen_eval"]["TRANSFER"] is True
