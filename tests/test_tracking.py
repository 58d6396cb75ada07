"""Training curves go to a local tracker out of the box: every shipped GRPO recipe and the
reward model's trainer log to TensorBoard, whose event files land in the run folder (a GRPO
run's <output_dir>/runs/<time>_<host>/, the RM's 02_reward_model/tb/<name>/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recode_lib.data.schema import Problem
from recode_lib.training.grpo import RECIPES_DIR, load_recipe, train

LOCAL_TRACKERS = {"tensorboard", "trackio"}


def scalar_tags(folder: Path) -> set[str]:
    """Every scalar tag in the TensorBoard event files under folder."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tags = set()
    for events in folder.rglob("events.out.tfevents.*"):
        acc = EventAccumulator(str(events.parent))
        acc.Reload()
        tags |= set(acc.Tags()["scalars"])
    return tags


@pytest.mark.parametrize("name", sorted(p.stem for p in RECIPES_DIR.glob("*.yaml")))
def test_every_recipe_logs_to_a_local_tracker(name):
    assert set(load_recipe(name).report_to) & LOCAL_TRACKERS, (
        f"{name}.yaml: report_to {load_recipe(name).report_to} has no local tracker"
    )


def test_the_reward_model_trainer_logs_to_tensorboard():
    from recode_lib.process_reward.model import RMConfig, reward_config, tracker_dir

    cfg = RMConfig(backbone="m", output_dir="runs/x/02_reward_model/rm")
    assert "tensorboard" in reward_config(cfg).report_to
    assert tracker_dir(cfg) == Path("runs/x/02_reward_model/tb/rm")


def test_one_grpo_step_writes_tensorboard_event_files(tiny_model_dir, tmp_path):
    problems = [
        Problem(
            id=f"toy/{i}",
            source="toy",
            prompt=f"Write f() returning {i}.",
            tests={"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": i}]},
            time_limit_s=2.0,
        )
        for i in range(2)
    ]
    recipe = load_recipe(
        "cg_grpo_smoke",
        model=str(tiny_model_dir),
        rewards=[{"name": "outcome_only"}],
        max_steps=1,
        max_completion_length=8,
        num_generations=4,
        per_device_train_batch_size=8,
        save_steps=100,
        sandbox_workers=1,
    )
    assert "tensorboard" in recipe.report_to  # the default, nothing set here
    out = tmp_path / "run"
    train(recipe, problems, out)
    events = list((out / "runs").rglob("events.out.tfevents.*"))
    assert events, f"no TensorBoard event files under {out / 'runs'}"
    tags = scalar_tags(out / "runs")
    assert {"train/reward", "train/loss"} <= tags, sorted(tags)
    assert any(t.startswith("train/outcome_only/") for t in tags), sorted(tags)


def test_a_finished_reward_model_run_keeps_its_curves(tiny_model_dir, tmp_path):
    from recode_lib.core.prompts import format_response
    from recode_lib.process_reward.model import RMConfig, tracker_dir, train_reward_model

    good = format_response("Sum with +.", "def add(a, b):\n    return a + b")
    bad = format_response("Subtract.", "def add(a, b):\n    return a - b")
    pairs = [
        {"id": f"p{i}", "prompt": f"Write add #{i}.", "chosen": good, "rejected": bad}
        for i in range(4)
    ]
    cfg = RMConfig(
        backbone=str(tiny_model_dir),
        output_dir=str(tmp_path / "02" / "rm"),
        max_length=200,
        max_steps=2,
        per_device_train_batch_size=2,
        logging_steps=1,
    )
    train_reward_model(pairs, cfg)
    assert "train/loss" in scalar_tags(tracker_dir(cfg))
