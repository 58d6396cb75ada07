"""Profile-level protocol properties (paper B): the strictness sweep (06) and the repair runs
(09) start from one shared checkpoint, which may be any local checkpoint folder."""

import pytest

from recode_lib.models import ModelError, resolve_model
from recode_lib.pipeline import load_profile


def section(profile, stem):
    spec = load_profile(profile)
    return {**spec.get("common", {}), **spec.get(stem, {})}


@pytest.mark.parametrize("profile", ["smoke", "paper"])
def test_sweep_and_repair_share_one_start_checkpoint(profile):
    assert section(profile, "06_strictness_sweep")["MODEL"] == section(profile, "09_repair")["MODEL"]


def test_the_start_checkpoint_may_be_a_local_sft_folder(tiny_model_dir, tmp_path):
    assert resolve_model(str(tiny_model_dir)) == str(tiny_model_dir)   # a local folder is used as is
    assert resolve_model("org/some-sft-checkpoint") == "org/some-sft-checkpoint"  # a hub id
    (tmp_path / "not_a_checkpoint").mkdir()
    with pytest.raises(ModelError, match="no config.json"):
        resolve_model(str(tmp_path / "not_a_checkpoint"))
