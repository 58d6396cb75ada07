"""Bradley-Terry RM: training on the tiny model, dropped-too-long counting, scorer, accuracy."""

from __future__ import annotations

import pytest

from recode_lib.core.prompts import format_response
from recode_lib.process_reward.model import (
    ProcessRewardScorer,
    RMConfig,
    encode,
    load_rm_tokenizer,
    pairwise_accuracy,
    train_reward_model,
)


def _pairs(n=8):
    good = format_response("Sum the two numbers with +.", "def add(a, b):\n    return a + b")
    bad = format_response("Subtract, it is the same.", "def add(a, b):\n    return a - b")
    return [
        {
            "id": f"p{i}",
            "prompt": f"Write add #{i}.",
            "chosen": good,
            "rejected": bad,
            "pair_type": "plus_minus" if i % 2 else "base_minus",
        }
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def trained(tiny_model_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("rm") / "rm"
    pairs = _pairs() + [{"id": "too_long", "prompt": "x " * 3000, "chosen": "a", "rejected": "b"}]
    cfg = RMConfig(
        backbone=str(tiny_model_dir),
        output_dir=str(out),
        max_length=200,
        max_steps=4,
        learning_rate=1e-3,
        per_device_train_batch_size=4,
        logging_steps=2,
    )
    return out, train_reward_model(pairs, cfg)


def test_training_counts_dropped_and_saves_hf_folder(trained):
    out, info = trained
    assert info["n_train_used"] == 8 and info["dropped_too_long"] == 1
    assert info["dropped_ids"] == ["too_long"] and info["steps"] == 4
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(out)
    assert model.config.num_labels == 1
    assert not (out.parent / f".{out.name}_trainer").exists()


def test_scorer_batched_equals_unbatched_and_learns(trained):
    out, _ = trained
    pairs = _pairs(6)
    s1 = ProcessRewardScorer(out, batch_size=1)
    s4 = ProcessRewardScorer(out, batch_size=4)
    prompts = [p["prompt"] for p in pairs] + ["short"]
    traces = [p["chosen"] for p in pairs] + ["t"]
    a, b = s1.score(prompts, traces), s4.score(prompts, traces)
    assert a == pytest.approx(b, abs=1e-4) and all(isinstance(x, float) for x in a)
    acc = pairwise_accuracy(s4, pairs)
    assert set(acc["by_type"]) == {"plus_minus", "base_minus"}
    assert acc["overall"] == 1.0  # 4 steps at lr 1e-3 separate these two texts
    with pytest.raises(ValueError, match="prompts but"):
        s1.score(["a"], [])


def test_encode_uses_chat_template(tiny_model_dir):
    tok = load_rm_tokenizer(tiny_model_dir)
    text = tok.decode(encode(tok, "PROMPT", "TRACE"))
    assert text.index("PROMPT") < text.index("TRACE") and "<|im_start|>assistant" in text


def test_missing_field_raises_naming_pair(tiny_model_dir, tmp_path):
    bad = [{"id": "x1", "prompt": "p", "chosen": "", "rejected": "r"}]
    with pytest.raises(ValueError, match="x1.*chosen"):
        train_reward_model(
            bad,
            RMConfig(backbone=str(tiny_model_dir), output_dir=str(tmp_path / "rm"), max_steps=1),
        )


def test_training_fingerprint_changes_with_pairs_and_config():
    from recode_lib.process_reward.model import RMConfig, training_fingerprint

    a = [{"prompt": "p", "chosen": "good", "rejected": "bad"}]
    cfg = RMConfig(backbone="m", output_dir="o")
    assert training_fingerprint(a, cfg) == training_fingerprint(list(a), cfg)
    assert training_fingerprint(a + a, cfg) != training_fingerprint(a, cfg)
    assert training_fingerprint(
        a, RMConfig(backbone="m", output_dir="o", learning_rate=1.0)
    ) != training_fingerprint(a, cfg)


def test_training_twice_with_the_same_seed_gives_the_same_reward_model(
    trained, tiny_model_dir, tmp_path
):
    import torch
    from safetensors.torch import load_file

    first, _ = trained
    torch.manual_seed(12345)  # whatever the process drew before must not matter
    again = tmp_path / "rm"
    train_reward_model(
        _pairs() + [{"id": "too_long", "prompt": "x " * 3000, "chosen": "a", "rejected": "b"}],
        RMConfig(
            backbone=str(tiny_model_dir),
            output_dir=str(again),
            max_length=200,
            max_steps=4,
            learning_rate=1e-3,
            per_device_train_batch_size=4,
            logging_steps=2,
        ),
    )
    a, b = load_file(first / "model.safetensors"), load_file(again / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
