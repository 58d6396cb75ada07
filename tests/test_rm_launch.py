"""The reward model's multi-GPU route (recode_lib.training.rm_launch, `recode rm`): the accelerate
command, the CPU dry run through the same entry point, reuse of a finished RM, a failed launch,
resuming from a checkpoint, and the plan's 16 B/param for notebook 02. CPU only, tiny model."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from recode_lib.core.paths import PROJECT_ROOT
from recode_lib.process_reward.model import (
    ProcessRewardScorer,
    RMConfig,
    finished_record,
    pairwise_accuracy,
    record_path,
    train_or_reuse,
    trainer_dir,
)
from recode_lib.runner.pipeline import profile_parameters
from recode_lib.training.launch_configs import (
    DEFAULT_ACCELERATE_CONFIG,
    LaunchConfigError,
    entry_point_command,
)
from recode_lib.training.rm_launch import (
    ENTRY_POINT,
    launch_reward_model,
    load_rm_config,
    rm_command,
    run_dir,
)


def _pairs(n=4):
    return [
        {
            "id": f"p{i}",
            "prompt": f"Write add #{i}.",
            "pair_type": "strong_contrast",
            "chosen": "Add a and b, then return the sum.",
            "rejected": "Return a.",
        }
        for i in range(n)
    ]


def _cfg(tiny, out, **kw):
    fields = dict(
        backbone=str(tiny),
        output_dir=str(out),
        max_length=128,
        max_steps=2,
        learning_rate=1e-3,
        per_device_train_batch_size=2,
        logging_steps=1,
    )
    return RMConfig(**{**fields, **kw})


def _no_launch(*args, **kwargs):
    raise AssertionError(f"nothing should be launched: {args}")


def test_the_accelerate_command_names_the_rm_entry_point_config_and_processes(tmp_path):
    cmd = rm_command(
        tmp_path / "rm_config.json",
        tmp_path / "p.jsonl",
        tmp_path / "rm",
        num_processes=8,
        save_steps=100,
    )
    assert cmd[:4] == ["accelerate", "launch", "--config_file", str(DEFAULT_ACCELERATE_CONFIG)]
    assert cmd[cmd.index("--num_processes") + 1] == "8"
    assert cmd[cmd.index("-m") + 1] == ENTRY_POINT == "recode_lib.cli.rm"
    assert cmd[cmd.index("--config") + 1] == str(tmp_path / "rm_config.json")
    assert cmd[cmd.index("--pairs") + 1] == str(tmp_path / "p.jsonl")
    assert cmd[cmd.index("--output-dir") + 1] == str(tmp_path / "rm")
    assert cmd[cmd.index("--save-steps") + 1] == "100" and "--retrain" in cmd
    assert entry_point_command(cmd, "py")[:3] == ["py", "-m", "recode_lib.cli.rm"]
    acc = yaml.safe_load(Path(DEFAULT_ACCELERATE_CONFIG).read_text())
    assert acc["distributed_type"] == "DEEPSPEED"


def test_an_accelerate_launch_writes_the_run_files_and_a_failure_names_the_command(
    tiny_model_dir, tmp_path, monkeypatch
):
    cfg = _cfg(tiny_model_dir, tmp_path / "rm", use_cpu=False, bf16=True)
    leftover = trainer_dir(cfg) / "checkpoint-1"
    leftover.mkdir(parents=True)  # a checkpoint of an earlier, failed launch
    seen = {}

    def fake_run(cmd, cwd=None, **kw):
        seen.update(cmd=cmd, cwd=cwd)
        return subprocess.CompletedProcess(cmd, 3)

    monkeypatch.setattr(subprocess, "run", fake_run)
    with pytest.raises(
        RuntimeError,
        match=r"`accelerate launch .*-m recode_lib\.cli\.rm .*` "
        r"failed \(exit 3",
    ):
        launch_reward_model(
            _pairs(), cfg, launcher="accelerate", num_processes=8, log=lambda *_: None
        )
    cmd = seen["cmd"]
    assert seen["cwd"] == PROJECT_ROOT and cmd[cmd.index("--num_processes") + 1] == "8"
    run = run_dir(cfg)
    assert cmd[cmd.index("--config") + 1] == str(run / "rm_config.json")
    assert load_rm_config(run / "rm_config.json", output_dir=cfg.output_dir) == cfg
    assert [json.loads(x)["id"] for x in (run / "train_pairs.jsonl").read_text().splitlines()] == [
        "p0",
        "p1",
        "p2",
        "p3",
    ]
    assert leftover.is_dir() and not record_path(cfg).exists()  # checkpoints are kept


def test_the_accelerate_launcher_checks_its_configs_and_refuses_cpu(
    tiny_model_dir, tmp_path, monkeypatch
):
    monkeypatch.setattr(subprocess, "run", _no_launch)
    with pytest.raises(ValueError, match="use_cpu"):
        launch_reward_model(
            _pairs(), _cfg(tiny_model_dir, tmp_path / "rm"), launcher="accelerate", num_processes=8
        )
    ds = json.loads((PROJECT_ROOT / "configs/deepspeed/zero3.json").read_text())
    ds["zero_optimization"]["stage3_gather_16bit_weights_on_model_save"] = False
    (tmp_path / "ds.json").write_text(json.dumps(ds))
    acc = yaml.safe_load(Path(DEFAULT_ACCELERATE_CONFIG).read_text())
    acc["deepspeed_config"]["deepspeed_config_file"] = str(tmp_path / "ds.json")
    (tmp_path / "acc.yaml").write_text(yaml.safe_dump(acc))
    with pytest.raises(LaunchConfigError, match="16bit"):
        launch_reward_model(
            _pairs(),
            _cfg(tiny_model_dir, tmp_path / "rm", use_cpu=False),
            launcher="accelerate",
            num_processes=8,
            accelerate_config=tmp_path / "acc.yaml",
        )
    with pytest.raises(ValueError, match="launcher must be one of"):
        launch_reward_model(_pairs(), _cfg(tiny_model_dir, tmp_path / "rm"), launcher="slurm")


@pytest.mark.timeout(120)
def test_the_dryrun_launcher_trains_through_the_entry_point_as_in_process(
    tiny_model_dir, tmp_path, monkeypatch
):
    """One CPU process of `python -m recode_lib.cli.rm`: the same checkpoint (files, dtype,
    weights) as training in this process, loadable by the scorer; then it is reused."""
    import torch
    from safetensors.torch import load_file

    # the GPU config (use_cpu false, bf16): the dry run makes only those two CPU-safe
    gpu_cfg = _cfg(tiny_model_dir, tmp_path / "dry" / "rm", use_cpu=False, bf16=True)
    info = launch_reward_model(
        _pairs(), gpu_cfg, launcher="dryrun", num_processes=8, log=lambda *_: None
    )
    assert not info["reused"] and info["steps"] == 2 and info["n_train_used"] == 4
    assert info["config"]["use_cpu"] is True and info["config"]["bf16"] is False
    ref_cfg = _cfg(tiny_model_dir, tmp_path / "inproc" / "rm")
    ref = launch_reward_model(_pairs(), ref_cfg, log=lambda *_: None)
    dry, inproc = tmp_path / "dry" / "rm", tmp_path / "inproc" / "rm"
    assert sorted(p.name for p in dry.iterdir()) == sorted(p.name for p in inproc.iterdir())
    a, b = load_file(dry / "model.safetensors"), load_file(inproc / "model.safetensors")
    assert a.keys() == b.keys() and {t.dtype for t in a.values()} == {t.dtype for t in b.values()}
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    assert info["train_loss"] == pytest.approx(ref["train_loss"], abs=1e-5)
    assert not trainer_dir(gpu_cfg).exists()
    acc = pairwise_accuracy(ProcessRewardScorer(dry, batch_size=2), _pairs())
    assert acc["n"] == 4
    monkeypatch.setattr(subprocess, "run", _no_launch)  # finished: skipped
    again = launch_reward_model(
        _pairs(), gpu_cfg, launcher="dryrun", num_processes=8, log=lambda *_: None
    )
    assert again["reused"] and again["fingerprint"] == info["fingerprint"]


@pytest.mark.timeout(300)
def test_the_accelerate_launcher_trains_under_deepspeed_zero3(
    tiny_model_dir, tmp_path, monkeypatch
):
    """The real route: `accelerate launch` with configs/accelerate/zero3.yaml, the RewardTrainer
    under DeepSpeed ZeRO-3 (partitioned as it loads, 16-bit gathered save). Needs deepspeed;
    on CPU one process (DeepSpeed's CPU accelerator; accelerate sets up no CPU process group
    for DeepSpeed, so more ranks need GPUs) in fp32 (bf16 needs a GPU)."""
    import os
    import sys

    pytest.importorskip("deepspeed")
    import torch

    if not torch.cuda.is_available():
        monkeypatch.setenv("DS_ACCELERATOR", "cpu")
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    cfg = _cfg(tiny_model_dir, tmp_path / "rm", use_cpu=False, gradient_checkpointing=True)
    info = launch_reward_model(
        _pairs(),
        cfg,
        launcher="accelerate",
        num_processes=1 if not torch.cuda.is_available() else min(2, torch.cuda.device_count()),
        save_steps=1,
        log=lambda *_: None,
    )
    assert info["zero_stage"] == 3 and info["steps"] == 2 and not info["reused"]
    assert pairwise_accuracy(ProcessRewardScorer(tmp_path / "rm", batch_size=2), _pairs())["n"] == 4
    assert not trainer_dir(cfg).exists()


def test_a_finished_rm_is_skipped_and_new_pairs_launch_again(tiny_model_dir, tmp_path, monkeypatch):
    cfg = _cfg(tiny_model_dir, tmp_path / "rm", use_cpu=False)
    train_or_reuse([], cfg, log=lambda *_: None)  # a finished (untrained) RM
    assert finished_record([], cfg) is not None
    monkeypatch.setattr(subprocess, "run", _no_launch)
    info = launch_reward_model([], cfg, launcher="accelerate", num_processes=8, log=lambda *_: None)
    assert info["reused"] and info["untrained"]
    with pytest.raises(AssertionError, match="nothing should be launched"):
        launch_reward_model(
            _pairs(), cfg, launcher="accelerate", num_processes=8, log=lambda *_: None
        )
    assert not record_path(cfg).exists()  # the stale record is gone


def test_a_run_that_failed_after_its_checkpoint_resumes_from_it(
    tiny_model_dir, tmp_path, monkeypatch
):
    import recode_lib.process_reward.model as model_mod

    cfg = _cfg(tiny_model_dir, tmp_path / "rm")

    def disk_full(bf16):
        raise OSError("disk full")

    with monkeypatch.context() as m:
        m.setattr(model_mod, "saved_dtype", disk_full)
        with pytest.raises(OSError, match="disk full"):
            train_or_reuse(_pairs(), cfg, save_steps=1, log=lambda *_: None)
    assert (trainer_dir(cfg) / "checkpoint-2").is_dir() and not record_path(cfg).exists()
    info = train_or_reuse(_pairs(), cfg, save_steps=1, log=lambda *_: None)
    assert info["resumed_from"].endswith("checkpoint-2") and info["steps"] == 2
    assert not trainer_dir(cfg).exists() and finished_record(_pairs(), cfg) is not None
    other = _cfg(tiny_model_dir, tmp_path / "rm", learning_rate=1e-4)  # another fingerprint
    (trainer_dir(other) / "checkpoint-2").mkdir(parents=True)
    (trainer_dir(other) / "fingerprint.json").write_text(json.dumps({"fingerprint": "old"}))
    assert train_or_reuse(_pairs(), other, log=lambda *_: None)["resumed_from"] is None


def test_the_cli_trains_from_the_run_files(tiny_model_dir, tmp_path, capsys):
    from recode_lib.cli import main

    assert main(["--help"]) == 0 and "  rm " in capsys.readouterr().out
    cfg = _cfg(tiny_model_dir, tmp_path / "rm", max_steps=1)
    (tmp_path / "c.yaml").write_text(
        yaml.safe_dump({"backbone": cfg.backbone, "max_steps": 1, "max_length": 128})
    )
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in _pairs()))
    assert (
        main(
            [
                "rm",
                "--config",
                str(tmp_path / "c.yaml"),
                "--pairs",
                str(tmp_path / "p.jsonl"),
                "--output-dir",
                str(tmp_path / "rm"),
            ]
        )
        == 0
    )
    assert "1 steps, trained" in capsys.readouterr().out
    assert (tmp_path / "rm" / "config.json").is_file()
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump({"backbone": "m", "lr": 1}))
    assert (
        main(
            [
                "rm",
                "--config",
                str(tmp_path / "bad.yaml"),
                "--pairs",
                str(tmp_path / "p.jsonl"),
                "--output-dir",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert "unknown RMConfig field(s) ['lr']" in capsys.readouterr().err


def test_notebook_02_takes_the_launcher_as_parameters():
    from recode_lib.runner.dryrun import dryrun_profile
    from recode_lib.runner.pipeline import declared_parameters, notebooks_dir

    nb = notebooks_dir() / "02_reward_model.ipynb"
    p = declared_parameters(nb)
    assert (p["LAUNCHER"], p["NUM_PROCESSES"], p["SAVE_STEPS"]) == ("inprocess", 1, 0)  # smoke
    paper = profile_parameters("paper")["02_reward_model"]
    assert (paper["LAUNCHER"], paper["NUM_PROCESSES"]) == ("accelerate", 8)
    # the global batch stays 32 pairs: 2 x GRAD_ACCUM x 8 processes
    assert paper["BATCH_SIZE"] * paper["GRAD_ACCUM"] * paper["NUM_PROCESSES"] == 32
    assert dryrun_profile("/tiny")["02_reward_model"]["LAUNCHER"] == "dryrun"
    assert "launch_reward_model(" in nb.read_text() and "launcher=LAUNCHER" in nb.read_text()


def test_the_plan_counts_16_bytes_per_param_for_02_sharded_under_zero3():
    from recode_lib.plan import ClusterSpec, make_plan
    from recode_lib.plan.memory import GB, trainer_need
    from recode_lib.plan.stages import notebook_stages

    paper = profile_parameters("paper")
    [st] = notebook_stages("02_reward_model", paper["02_reward_model"], paper)
    t = st.trainer
    assert t.bytes_per_param == 16 and t.zero3 and t.processes == 8
    need = trainer_need(t, 80 * GB)
    assert need.parts["weights+grads+Adam"] == 16 * t.arch.params / 8 and need.fits
    one = {**paper, "02_reward_model": {**paper["02_reward_model"], "LAUNCHER": "inprocess"}}
    [st1] = notebook_stages("02_reward_model", one["02_reward_model"], one)
    assert st1.trainer.bytes_per_param == 16 and st1.trainer.processes == 1
    assert not trainer_need(st1.trainer, 80 * GB).fits  # tests/test_plan.py: the refusal
    assert make_plan(paper, ClusterSpec(gpus=8, gpu_memory=80), only={"02_reward_model"}).ok
