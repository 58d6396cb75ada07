"""First-step GRPO completions shared between runs whose draw is identical (recipe field
share_first_generations, recode_lib.training.shared_generations): a run that reuses an earlier
run's draw trains bit-identical weights to one that draws itself, and any change to what decides
the draw (weights, prompts, RNG state, generation settings) is another key."""

from __future__ import annotations

import pytest

from recode_lib.rewards import REGISTRY, RewardEntry, RewardFunction
from recode_lib.training import shared_generations
from recode_lib.training.grpo import load_recipe, run_fingerprint, train
from recode_lib.training.shared_generations import generation_key


class UntruncatedReward(RewardFunction):
    """A reward that scores a completion cut at the token limit too (the tiny model never
    stops): it keeps no stop ids (recode_lib.training.grpo.give_stop_ids sets them)."""

    stop_token_ids = property(lambda self: None, lambda self, value: None)


def length_reward(name: str, sign: float):
    """A reward with variance inside every group (the completion's length in characters,
    signed), so each step's update depends on which completions were drawn."""

    def factory():
        def compute(prompts, completions, kwargs):
            return [{"reward": sign * len(str(c)) / 10.0} for c in completions]

        return UntruncatedReward(name, compute, ())

    return RewardEntry(name, factory)


def recipe(tiny, reward, share, **kw):
    base = dict(
        model=str(tiny),
        rewards=[{"name": reward}],
        max_steps=2,
        max_completion_length=12,
        num_generations=4,
        per_device_train_batch_size=8,
        learning_rate=1e-3,
        save_steps=100,
        sandbox_workers=1,
        share_first_generations=share,
    )
    base.update(kw)
    return load_recipe("cg_grpo_smoke", **base)


def final_state(run_dir):
    import torch
    from transformers import AutoModelForCausalLM

    net = AutoModelForCausalLM.from_pretrained(run_dir / "final", dtype=torch.float32)
    return {k: v.clone() for k, v in net.state_dict().items()}


@pytest.mark.slow
def test_a_reused_draw_trains_bit_identical_weights(
    tiny_model_dir, tmp_path, monkeypatch, toy_problems
):
    import torch

    from recode_lib.core.run_files import read_metrics

    monkeypatch.setitem(REGISTRY, "long", length_reward("long", 1.0))
    monkeypatch.setitem(REGISTRY, "short", length_reward("short", -1.0))
    monkeypatch.setattr(shared_generations, "STORE", type(shared_generations.STORE)())
    stats = {"hits": 0, "misses": 0}
    monkeypatch.setattr(shared_generations, "STATS", stats)
    # 04's pattern: two runs from one start, seed and prompts, differing in their reward
    train(recipe(tiny_model_dir, "long", True), toy_problems(), tmp_path / "long")
    assert stats == {"hits": 0, "misses": 1}  # only the first step's draw is looked up
    train(recipe(tiny_model_dir, "short", True), toy_problems(), tmp_path / "shared")
    assert stats == {"hits": 1, "misses": 1}
    shared_generations.STORE.clear()
    train(recipe(tiny_model_dir, "short", False), toy_problems(), tmp_path / "drawn")
    assert stats == {"hits": 1, "misses": 1}  # sharing off: not even looked up
    shared, drawn = final_state(tmp_path / "shared"), final_state(tmp_path / "drawn")
    start = final_state_of_start(tiny_model_dir)
    assert any(not torch.equal(shared[k], start[k]) for k in start)  # it trained
    assert all(torch.equal(shared[k], drawn[k]) for k in drawn)  # bit-identical
    other = final_state(tmp_path / "long")
    assert any(not torch.equal(shared[k], other[k]) for k in other)  # the reward mattered
    keys = ("reward", "reward_std", "loss", "grad_norm")
    rows = [
        [{k: r.get(k) for k in keys} for r in read_metrics(tmp_path / d)]
        for d in ("shared", "drawn")
    ]
    assert rows[0] == rows[1] and len(rows[0]) == 2  # step 2 drew the same (the RNG was restored)


def final_state_of_start(tiny_model_dir):
    import torch
    from transformers import AutoModelForCausalLM

    net = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)
    return {k: v.clone() for k, v in net.state_dict().items()}


@pytest.fixture
def tiny_policy(tiny_model_dir):
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)


def test_the_key_is_stable_for_the_same_draw(tiny_policy):
    import torch

    torch.manual_seed(0)
    a = generation_key(tiny_policy, [[1, 2, 3]], 4, {"temperature": 1.0})
    torch.manual_seed(0)
    assert generation_key(tiny_policy, [[1, 2, 3]], 4, {"temperature": 1.0}) == a


def test_one_changed_weight_is_another_key(tiny_policy):
    import torch

    torch.manual_seed(0)
    a = generation_key(tiny_policy, [[1, 2, 3]], 4, {})
    with torch.no_grad():
        p = next(tiny_policy.parameters())
        p.view(-1)[0] = torch.nextafter(p.view(-1)[0], torch.tensor(1e9))  # one ulp
    torch.manual_seed(0)
    assert generation_key(tiny_policy, [[1, 2, 3]], 4, {}) != a


def test_another_rng_state_is_another_key(tiny_policy):
    import torch

    torch.manual_seed(0)
    a = generation_key(tiny_policy, [[1, 2, 3]], 4, {})
    torch.manual_seed(1)
    assert generation_key(tiny_policy, [[1, 2, 3]], 4, {}) != a


def test_other_prompts_or_counts_are_another_key(tiny_policy):
    import torch

    torch.manual_seed(0)
    a = generation_key(tiny_policy, [[1, 2, 3]], 4, {})
    for prompts, n in (([[1, 2, 4]], 4), ([[1, 2, 3], [5]], 4), ([[1, 2, 3]], 2)):
        torch.manual_seed(0)
        assert generation_key(tiny_policy, prompts, n, {}) != a


def test_other_generation_settings_are_another_key(tiny_policy):
    import torch

    torch.manual_seed(0)
    a = generation_key(tiny_policy, [[1, 2, 3]], 4, {"temperature": 1.0})
    torch.manual_seed(0)
    assert generation_key(tiny_policy, [[1, 2, 3]], 4, {"temperature": 0.9}) != a


def test_sharing_leaves_the_run_fingerprint_alone(tiny_model_dir, toy_problems):
    on = recipe(tiny_model_dir, "outcome_only", True)
    unset = load_recipe(
        "cg_grpo_smoke",
        model=str(tiny_model_dir),
        rewards=[{"name": "outcome_only"}],
        max_steps=2,
        max_completion_length=12,
        num_generations=4,
        per_device_train_batch_size=8,
        learning_rate=1e-3,
        save_steps=100,
        sandbox_workers=1,
    )  # a run trained before the field existed
    assert run_fingerprint(on, toy_problems()) == run_fingerprint(unset, toy_problems())
