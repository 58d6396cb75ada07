"""Seeds: one GRPO run per (variant, seed) from one recipe (training.launch.seeded_variants), so a
gain between RL runs is read against the seed-to-seed spread of the same recipe."""

from __future__ import annotations

import pytest

from recode_lib.runner.pipeline import load_profile
from recode_lib.training import launch as launch_mod
from recode_lib.training.launch import (
    check_seeds,
    reward_variants,
    seed_groups,
    seed_run_name,
    seeded_variants,
    train_variants,
)


def test_one_run_per_variant_and_seed_with_its_own_seed():
    runs = seeded_variants(reward_variants(["gated", "outcome_only"]), "0,1,2")
    assert list(runs) == [
        "gated_seed0",
        "gated_seed1",
        "gated_seed2",
        "outcome_only_seed0",
        "outcome_only_seed1",
        "outcome_only_seed2",
    ]
    assert [r["seed"] for r in runs.values()] == [0, 1, 2, 0, 1, 2]
    assert runs["outcome_only_seed1"]["rewards"] == [{"name": "outcome_only"}]
    assert seed_groups(["gated"], "0,1,2") == {
        "gated": {0: "gated_seed0", 1: "gated_seed1", 2: "gated_seed2"}
    }


def test_one_seed_keeps_the_single_run_layout():
    runs = seeded_variants(reward_variants(["gated"]), "5")
    assert runs == {"gated": {"rewards": [{"name": "gated"}], "seed": 5}}
    assert seed_run_name("gated", 5, [5]) == "gated"


@pytest.mark.parametrize("bad", ["", "0,0", "a,1"])
def test_bad_seeds_are_named(bad):
    with pytest.raises(ValueError, match="SEEDS"):
        check_seeds(bad)


def test_each_seeded_recipe_trains_with_its_seed(monkeypatch, tmp_path):
    """The variant's seed wins over the notebook's common SEED override."""
    from recode_lib.training.grpo import TrainResult

    got = {}

    def fake_launch(recipe, problems, out, **kw):
        got[recipe.name] = recipe.seed
        return TrainResult(out, out / "final", out / "metrics.jsonl", None, False)

    monkeypatch.setattr(launch_mod, "launch", fake_launch)
    train_variants(
        "cg_grpo_smoke",
        seeded_variants(reward_variants(["outcome_only"]), [0, 7]),
        [object()] * 8,
        tmp_path,
        name_prefix="04_",
        seed=0,
        log=None,
    )
    assert got == {"04_outcome_only_seed0": 0, "04_outcome_only_seed7": 7}


def test_profiles_run_three_seeds_in_paper_one_in_smoke_and_two_in_laptop():
    """The laptop profile's claims are replicated on a second seed (issue #25): two seeds in
    04 (claims a, b) and 06 (claim c, whose second endpoint pair 07 evaluates)."""
    for profile, least, most in (("paper", 3, None), ("smoke", 1, 1), ("laptop", 2, 2)):
        seeds = check_seeds(load_profile(profile)["04_cg_grpo"]["SEEDS"])
        assert len(seeds) >= least and (most is None or len(seeds) <= most), profile
    assert len(check_seeds(load_profile("laptop")["06_strictness_sweep"]["SEEDS"])) == 2
