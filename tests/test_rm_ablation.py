"""The generator ablation's count-matched training sets (recode_lib.orchestration.rm_ablation):
notebook 02 trains its single-generator RM on the set notebook 01 cut, chosen by 01's record."""

from __future__ import annotations

import json

import pytest

from recode_lib.core.jsonl import write_jsonl_atomic
from recode_lib.orchestration.rm_ablation import (
    ABLATION_SINGLE_FILE,
    CROSS_FILE,
    PAIRS_FILE,
    ablation_sets,
)
from recode_lib.process_reward.pairs import equal_training_pairs


def _pairs(prefix, n_train, n_val=2):
    return [
        {"id": f"{prefix}{i}", "split": "train", "pair_type": "strong"} for i in range(n_train)
    ] + [{"id": f"{prefix}v{i}", "split": "val", "pair_type": "strong"} for i in range(n_val)]


def _write_01(run, single, cross):
    """What notebook 01 writes: pairs.jsonl whole, the cut set(s), its record."""
    crpl = run / "01_crpl_synthesis"
    abl_single, cross_cut, report = equal_training_pairs(single, cross)
    write_jsonl_atomic(crpl / PAIRS_FILE, single)
    if report["cut"] == "single":
        write_jsonl_atomic(crpl / ABLATION_SINGLE_FILE, abl_single)
    write_jsonl_atomic(crpl / CROSS_FILE, cross_cut)
    (crpl / "metrics.json").write_text(json.dumps({"ablation_equal_pairs": report}))
    return report


def test_a_cut_single_set_gets_its_own_rm_on_the_cut_file(tmp_path):
    report = _write_01(tmp_path, _pairs("s", 10), _pairs("c", 6))
    sets = ablation_sets(tmp_path)
    assert report["cut"] == "single" and sets["single"]["own_rm"]
    assert sets["single"]["file"] == ABLATION_SINGLE_FILE
    assert len(sets["single"]["train"]) == len(sets["cross"]["train"]) == sets["train_pairs"] == 6


def test_a_cut_cross_set_leaves_the_main_rm_as_the_single_one(tmp_path):
    _write_01(tmp_path, _pairs("s", 4), _pairs("c", 9))
    sets = ablation_sets(tmp_path)
    assert not sets["single"]["own_rm"] and sets["single"]["file"] == PAIRS_FILE
    assert len(sets["single"]["train"]) == len(sets["cross"]["train"]) == 4


def test_a_stale_cut_file_from_an_earlier_run_is_not_read(tmp_path):
    crpl = tmp_path / "01_crpl_synthesis"
    write_jsonl_atomic(crpl / ABLATION_SINGLE_FILE, _pairs("old", 3))  # an earlier 01 run's
    _write_01(tmp_path, _pairs("s", 4), _pairs("c", 9))  # now cross is cut
    assert ablation_sets(tmp_path)["single"]["file"] == PAIRS_FILE


def test_sets_out_of_step_raise_naming_the_counts(tmp_path):
    _write_01(tmp_path, _pairs("s", 4), _pairs("c", 9))
    write_jsonl_atomic(tmp_path / "01_crpl_synthesis" / CROSS_FILE, _pairs("c", 7))  # rewritten
    with pytest.raises(ValueError, match="pairs.jsonl has 4 training pairs, pairs_cross.jsonl 7"):
        ablation_sets(tmp_path)


def test_without_01s_record_or_its_ablation_it_refuses(tmp_path):
    with pytest.raises(FileNotFoundError, match="run 01 first"):
        ablation_sets(tmp_path)
    crpl = tmp_path / "01_crpl_synthesis"
    crpl.mkdir(parents=True)
    (crpl / "metrics.json").write_text(json.dumps({"ablation_equal_pairs": None}))
    with pytest.raises(ValueError, match="SECOND_GENERATOR"):
        ablation_sets(tmp_path)
