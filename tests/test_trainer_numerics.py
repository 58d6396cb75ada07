"""Every trainer keeps fp32 master weights when it computes in bf16 (models.training_dtype).

Pure bf16 weights round small optimizer steps away: on the tiny model, 6 Bradley-Terry steps at
the paper's RM learning rate (1e-5) with the backbone loaded in bf16 changed ~16% of the
non-embedding weights, against ~100% in float32. Each test runs a trainer of the project a few
steps at its paper profile's learning rate and bf16 setting (on CPU: bf16 autocast with
use_cpu=True, which the installed transformers accepts) and checks that the trainable weights
are float32, that the compute really ran in bf16, and that the weights moved as fp32 master
weights move: at least 99% of the trainable elements changed (embeddings are left out where
their gradient is sparse: rows of tokens that never occur get none).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from recode_lib.core.prompts import format_response

PAPER = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "notebooks" / "params" / "paper.yaml").read_text()
)
MASTER = 0.99  # fraction of trainable elements an fp32-master run moves (pure bf16: ~0.16)


def _snapshot(model, skip_embeddings: bool):
    return {
        n: p.detach().clone()
        for n, p in model.named_parameters()
        if p.requires_grad and not (skip_embeddings and "embed" in n)
    }


def changed_fraction(before: dict, after: dict) -> float:
    changed = sum(int((after[n] != before[n]).sum()) for n in before)
    return changed / sum(t.numel() for t in before.values())


def update_cosine(a: dict, b: dict) -> float:
    """Cosine between two recorded runs' updates (after - before) over the same parameters."""
    import torch

    def delta(run):
        return torch.cat(
            [
                (run["after"][n].float() - run["before"][n].float()).flatten()
                for n in sorted(run["before"])
            ]
        )

    da, db = delta(a), delta(b)
    return float(torch.nn.functional.cosine_similarity(da, db, dim=0))


class Recorder:
    """Wraps a trainer class: snapshots the trainable weights around train() and the dtype of
    the first linear layer's output during it (bf16 under autocast)."""

    def __init__(self, skip_embeddings: bool):
        self.skip_embeddings = skip_embeddings
        self.runs: list[dict] = []

    def wrap(self, base):
        rec = self

        class Recording(base):
            def train(self, *args, **kwargs):
                import torch

                run = {"before": _snapshot(self.model, rec.skip_embeddings), "compute": set()}
                linear = next(m for m in self.model.modules() if isinstance(m, torch.nn.Linear))
                hook = linear.register_forward_hook(
                    lambda _m, _i, out: run["compute"].add(out.dtype)
                )
                try:
                    result = super().train(*args, **kwargs)
                finally:
                    hook.remove()
                run["after"] = _snapshot(self.model, rec.skip_embeddings)
                run["dtypes"] = {p.dtype for p in self.model.parameters() if p.requires_grad}
                rec.runs.append(run)
                return result

        return Recording


# --------------------------------------------------------------------------- reward model (02)


def _pairs(n=12):
    good = format_response("Sum the two numbers with +.", "def add(a, b):\n    return a + b")
    bad = format_response("Subtract, it is the same.", "def add(a, b):\n    return a - b")
    return [
        {"id": f"p{i}", "prompt": f"Write add #{i}.", "chosen": good, "rejected": bad}
        for i in range(n)
    ]


def _train_rm(tiny, out, monkeypatch, *, bf16: bool):
    import trl

    from recode_lib.process_reward.model import RMConfig, train_reward_model

    rec = Recorder(skip_embeddings=True)
    monkeypatch.setattr(trl, "RewardTrainer", rec.wrap(trl.RewardTrainer))
    p = PAPER["02_reward_model"]
    cfg = RMConfig(
        backbone=str(tiny),
        output_dir=str(out),
        max_length=200,
        max_steps=6,
        learning_rate=float(p["LEARNING_RATE"]),
        per_device_train_batch_size=2,
        use_cpu=True,
        bf16=bf16,
        logging_steps=100,
    )
    train_reward_model(_pairs(), cfg)
    return rec.runs[0]


def test_reward_model_in_the_paper_dtype_trains_fp32_master_weights(
    tiny_model_dir, tmp_path, monkeypatch
):
    import torch
    from safetensors.torch import load_file

    bf16 = bool(PAPER["02_reward_model"]["BF16"])
    assert bf16 and float(PAPER["02_reward_model"]["LEARNING_RATE"]) <= 1e-5  # what is tested
    run = _train_rm(tiny_model_dir, tmp_path / "rm_bf16", monkeypatch, bf16=bf16)
    assert run["dtypes"] == {torch.float32}  # master weights (pure bf16 before)
    assert torch.bfloat16 in run["compute"]  # the compute is bf16 (autocast)
    frac = changed_fraction(run["before"], run["after"])
    assert frac >= MASTER, f"only {frac:.1%} of the RM's weights moved: pure bf16 updates?"
    ref = _train_rm(tiny_model_dir, tmp_path / "rm_fp32", monkeypatch, bf16=False)
    assert ref["compute"] == {torch.float32}
    assert changed_fraction(ref["before"], ref["after"]) >= MASTER
    cos = update_cosine(run, ref)
    print(f"RM: bf16 run moved {frac:.4f}, cosine to the fp32 run's update {cos:.4f}")
    assert cos > 0.9  # the bf16 run moves as fp32 does
    saved = load_file(str(tmp_path / "rm_bf16" / "model.safetensors"))
    assert {t.dtype for t in saved.values()} == {torch.bfloat16}  # saved as before: bf16


def test_a_reward_model_trained_in_pure_bf16_is_not_reused():
    """bf16 RMs saved before the fp32-master rule get a new fingerprint (retrained);
    float32 ones keep theirs (reused)."""
    from recode_lib.core.stamps import fingerprint
    from recode_lib.process_reward.model import RMConfig, training_fingerprint

    pairs = _pairs(2)
    rows = [[p["prompt"], p["chosen"], p["rejected"]] for p in pairs]
    fp32, bf16 = (
        RMConfig(backbone="m", output_dir="o"),
        RMConfig(backbone="m", output_dir="o", bf16=True),
    )
    assert training_fingerprint(pairs, fp32) == fingerprint(fp32, rows)  # as before
    assert training_fingerprint(pairs, bf16) != fingerprint(bf16, rows)  # retrained


# --------------------------------------------------------------------------- GRPO (04, 06, 09-11)


def _toy_problems(n=4):
    from recode_lib.data.schema import Problem

    return [
        Problem(
            id=f"toy/{i}",
            source="toy",
            prompt=f"Write f() returning {i}.",
            tests={"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": i}]},
            time_limit_s=2.0,
        )
        for i in range(n)
    ]


def _spread_reward():
    """A reward that differs between completions (the tiny model's are gibberish and would all
    score 0 on the code rewards: zero advantages, zero gradients). It reads the token ids: the
    text of a completion cut at max_completion_length reaches rewards as ""."""
    from recode_lib.rewards import RewardFunction

    def compute(prompts, completions, kwargs):
        return [
            {"reward": sum(ids) % 7 / 7.0, "ids": float(sum(ids))}
            for ids in kwargs["completion_ids"]
        ]

    return RewardFunction("spread", compute, ("ids",))


def _train_grpo(tiny, out, monkeypatch, *, bf16: bool, lr: float, steps: int = 2, **kw):
    import recode_lib.training.callbacks as callbacks
    from recode_lib.rewards import REGISTRY, RewardEntry
    from recode_lib.training.grpo import load_recipe, train

    monkeypatch.setitem(REGISTRY, "spread", RewardEntry("spread", _spread_reward))
    rec = Recorder(skip_embeddings=False)
    timed = callbacks.timed_trainer_class
    monkeypatch.setattr(callbacks, "timed_trainer_class", lambda: rec.wrap(timed()))
    r = load_recipe(
        "cg_grpo_smoke",
        model=str(tiny),
        rewards=[{"name": "spread"}],
        max_steps=steps,
        max_completion_length=8,
        num_generations=4,
        per_device_train_batch_size=8,
        save_steps=100,
        sandbox_workers=1,
        learning_rate=lr,
        bf16=bf16,
        use_cpu=True,
        **kw,
    )
    train(r, _toy_problems(), out)
    return rec.runs[0]


def _paper_grpo():
    from recode_lib.training.grpo import load_recipe
    from recode_lib.training.recipe_check import recipe_fields

    section = PAPER["04_cg_grpo"]
    r = load_recipe(section["RECIPE"], **recipe_fields(section.get("RECIPE_FIELDS")))
    assert r.bf16 and r.learning_rate <= 1e-5  # the paper run's: recipe file and RECIPE_FIELDS
    return r


def test_grpo_full_in_the_paper_dtype_trains_fp32_master_weights(
    tiny_model_dir, tmp_path, monkeypatch
):
    import torch

    paper = _paper_grpo()
    run = _train_grpo(
        tiny_model_dir, tmp_path / "grpo", monkeypatch, bf16=paper.bf16, lr=paper.learning_rate
    )
    assert run["dtypes"] == {torch.float32}
    assert torch.bfloat16 in run["compute"]
    frac = changed_fraction(run["before"], run["after"])
    assert frac >= MASTER, f"only {frac:.1%} of the policy's weights moved"


def test_grpo_lora_in_bf16_trains_fp32_adapters(tiny_model_dir, tmp_path, monkeypatch):
    """LoRA (the laptop recipes' `lora:`) under the paper's bf16 and learning rate: every adapter
    element moves, A included (B starts at 0, so A's updates are the ones bf16 rounds away)."""
    import torch

    paper = _paper_grpo()
    run = _train_grpo(
        tiny_model_dir,
        tmp_path / "lora",
        monkeypatch,
        bf16=paper.bf16,
        lr=paper.learning_rate,
        steps=3,
        lora={"r": 4, "alpha": 8},
    )
    assert run["before"] and all("lora_" in n for n in run["before"])  # only adapters train
    assert run["dtypes"] == {torch.float32}
    assert torch.bfloat16 in run["compute"]
    a = {n: t for n, t in run["before"].items() if "lora_A" in n}
    assert changed_fraction(a, run["after"]) >= MASTER
    assert changed_fraction(run["before"], run["after"]) >= MASTER


def test_grpo_loads_the_policy_through_the_rule_and_refuses_half_weights(tmp_path):
    import torch

    from recode_lib.training.grpo import grpo_config, load_recipe, replace_fields

    r = load_recipe("cg_grpo_paper")
    args = grpo_config(replace_fields(r, use_cpu=True), tmp_path)
    assert args.bf16 and args.model_init_kwargs["dtype"] == torch.float32
    with pytest.raises(ValueError, match="fp32 master"):
        grpo_config(
            replace_fields(r, use_cpu=True, model_init_kwargs={"dtype": "bfloat16"}), tmp_path
        )


# --------------------------------------------------------------------------- the rule itself


def test_training_dtype_rule():
    import torch

    from recode_lib.core.models import saved_dtype, training_dtype

    assert training_dtype(True) == training_dtype(False) == torch.float32
    assert saved_dtype(True) == torch.bfloat16 and saved_dtype(False) == torch.float32
    assert "16%" in training_dtype.__doc__


# --------------------------------------------------------------------------- stand-ins (07)


def test_finetune_endpoints_train_fp32_weights(tiny_model_dir, tmp_path):
    """The stand-in fine-tunes of notebook 07 (a plain AdamW loop, always float32, CPU) at its
    learning rate: every non-embedding weight moves."""
    import torch
    from safetensors.torch import load_file

    from recode_lib.training.plain_sft import finetune_one

    text = (
        "<|im_start|>user\nWrite f.<|im_end|>\n<|im_start|>assistant\ndef f(): return 1<|im_end|>"
    )
    out = finetune_one(
        str(tiny_model_dir),
        [text] * 4,
        tmp_path / "low",
        steps=4,
        lr=1e-5,
        seed=0,
        max_length=64,
        batch_size=2,
    )
    after = load_file(str(out / "model.safetensors"))
    before = load_file(str(tiny_model_dir / "model.safetensors"))
    keys = [k for k in before if "embed" not in k]
    assert {after[k].dtype for k in keys} == {torch.float32}
    assert changed_fraction({k: before[k] for k in keys}, after) >= MASTER
