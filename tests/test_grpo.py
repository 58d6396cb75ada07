"""GRPO training: real GRPOTrainer steps on the tiny model with the real sandbox-backed reward."""

from __future__ import annotations

import json

import pytest

from recode_lib.core.errors import RecodeError
from recode_lib.core.run_files import read_metrics
from recode_lib.data.schema import Problem
from recode_lib.rewards import REGISTRY, RewardEntry, RewardFunction
from recode_lib.training.grpo import RECIPES_DIR, build_dataset, load_recipe, train


def problems(n=4):
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


def recipe(tiny, **kw):
    base = dict(
        model=str(tiny),
        rewards=[{"name": "outcome_only"}],
        max_steps=2,
        max_completion_length=12,
        num_generations=4,
        per_device_train_batch_size=8,
        save_steps=1,
        save_total_limit=1,
        sandbox_workers=2,
    )
    base.update(kw)
    return load_recipe("cg_grpo_smoke", **base)


def test_two_steps_write_metrics_checkpoint_and_final(tiny_model_dir, tmp_path):
    from transformers import AutoModelForCausalLM

    out = tmp_path / "run"
    res = train(recipe(tiny_model_dir), problems(), out)
    assert not res.skipped and res.final_dir == out / "final"
    AutoModelForCausalLM.from_pretrained(res.final_dir)  # a loadable HF folder
    assert (res.final_dir / "tokenizer_config.json").is_file()
    rows = read_metrics(out)
    assert [r["step"] for r in rows] == [1, 2]
    for r in rows:  # reward components, the time split and the sandbox throughput per step
        assert {"outcome_only/fmt", "outcome_only/out", "rewards/outcome_only/mean"} <= set(r)
        assert r["time/step_s"] >= r["time/generation_s"] + r["time/reward_s"] - 1e-6
        assert r["time/generation_s"] > 0 and r["time/optimizer_s"] >= 0
        # per-step counts (not cumulative): at most one sandbox run or cache hit per completion,
        # and a completion can only pass its tests if it ran
        ran = r["sandbox/executed"] + r["sandbox/cache_hits"]
        assert 0 <= ran <= 8 and (r["outcome_only/out"] == 0 or ran > 0)
    prov = json.loads((out / "run.json").read_text())
    assert prov["config"]["rewards"] == [{"name": "outcome_only"}]
    again = train(recipe(tiny_model_dir), problems(), out)  # finished: skipped, not retrained
    assert again.skipped and len(read_metrics(out)) == 2


def test_a_changed_recipe_or_problem_set_sets_the_old_run_aside(tmp_path):
    from recode_lib.training.grpo import retire_stale_run, run_fingerprint

    r = load_recipe("cg_grpo_smoke")
    fp = run_fingerprint(r, problems())
    out = tmp_path / "run"
    assert retire_stale_run(out, fp) is None
    (out / "final").mkdir()
    (out / "final" / ".complete").write_text("")
    assert retire_stale_run(out, fp) is None and (out / "final").is_dir()  # same: kept
    assert run_fingerprint(load_recipe("cg_grpo_smoke", max_steps=7), problems()) != fp
    # the tracker is not what the run trained: switching it keeps the finished run
    assert (
        run_fingerprint(
            load_recipe("cg_grpo_smoke", report_to=["wandb"], logging_steps=5), problems()
        )
        == fp
    )
    assert run_fingerprint(load_recipe("cg_grpo_smoke", keep_checkpoints=True), problems()) == fp
    new_fp = run_fingerprint(r, problems(3))
    assert new_fp != fp
    moved = retire_stale_run(out, new_fp)
    assert moved == tmp_path / "run.stale-1" and (moved / "final" / ".complete").is_file()
    assert not (out / "final").exists()
    assert json.loads((out / "fingerprint.json").read_text())["fingerprint"] == new_fp
    legacy = tmp_path / "legacy"
    (legacy / "final").mkdir(parents=True)  # trained before fingerprints
    assert retire_stale_run(legacy, fp) == tmp_path / "legacy.stale-1"


def test_fingerprint_survives_the_accelerate_round_trip(tmp_path):
    import yaml

    from recode_lib.training.grpo import recipe_dict, run_fingerprint

    r = load_recipe("strictness_paper")
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(recipe_dict(r)))
    back = load_recipe(tmp_path / "r.yaml")
    probs = [Problem.from_dict(json.loads(json.dumps(p.to_dict()))) for p in problems()]
    assert run_fingerprint(back, probs) == run_fingerprint(r, problems())


class BackendDied(RecodeError, RuntimeError):
    """A reward's own failure that stops training: a RecodeError (any other exception is kept
    to its samples as a logged None, recode_lib.rewards.base.guarded_rows)."""


def test_crash_saves_a_checkpoint_and_the_rerun_resumes(tiny_model_dir, tmp_path, monkeypatch):
    calls = {"n": 0}

    def flaky():
        def compute(prompts, completions, kwargs):
            calls["n"] += 1
            if calls["n"] == 2:
                raise BackendDied("reward backend died")
            return [{"reward": 0.0, "fmt": 0.0} for _ in completions]

        return RewardFunction("flaky", compute, ("fmt",))

    monkeypatch.setitem(REGISTRY, "flaky", RewardEntry("flaky", flaky))
    out = tmp_path / "run"
    with pytest.raises(RuntimeError, match="reward backend died"):
        train(recipe(tiny_model_dir, rewards=[{"name": "flaky"}], save_steps=100), problems(), out)
    ckpt = out / "checkpoint-1"  # saved on the way down, with
    assert {"optimizer.pt", "scheduler.pt", "trainer_state.json", "config.json"} <= {
        p.name for p in ckpt.iterdir()
    }  # what resuming reads
    res = train(
        recipe(tiny_model_dir, rewards=[{"name": "flaky"}], save_steps=100), problems(), out
    )
    assert res.resumed_from.endswith("checkpoint-1")
    assert [r["step"] for r in read_metrics(out)] == [1, 2]  # no step logged twice
    assert (out / "final" / ".complete").is_file()
    assert not list(out.glob("checkpoint-*"))  # finished: its checkpoints go


def test_no_checkpoint_is_written_at_the_last_step(tiny_model_dir, tmp_path, monkeypatch):
    import recode_lib.training.grpo as grpo

    monkeypatch.setattr(grpo, "drop_checkpoints", lambda out: [])  # see what was written
    out = tmp_path / "run"
    train(recipe(tiny_model_dir, save_steps=100), problems(), out)
    assert (out / "final" / ".complete").is_file()
    assert not list(out.glob("checkpoint-*"))  # the end save, deleted right after, is not made
    kept = tmp_path / "kept"
    train(recipe(tiny_model_dir, save_steps=100, keep_checkpoints=True), problems(), kept)
    assert [d.name for d in kept.glob("checkpoint-*")] == ["checkpoint-2"]  # asked to keep


def test_final_failing_saves_the_last_step(tiny_model_dir, tmp_path, monkeypatch):
    import recode_lib.training.grpo as grpo

    real = grpo.save_final

    def disk_full(*a, **k):
        raise OSError("No space left on device")

    monkeypatch.setattr(grpo, "save_final", disk_full)
    out = tmp_path / "run"
    with pytest.raises(OSError, match="No space"):
        train(recipe(tiny_model_dir, save_steps=100), problems(), out)
    assert (out / "checkpoint-2" / "optimizer.pt").is_file()  # the step is not lost
    monkeypatch.setattr(grpo, "save_final", real)
    res = train(recipe(tiny_model_dir, save_steps=100), problems(), out)
    assert res.resumed_from.endswith("checkpoint-2")
    assert [r["step"] for r in read_metrics(out)] == [1, 2]  # nothing trained twice
    assert (out / "final" / ".complete").is_file()


def test_checkpoints_go_only_once_final_is_complete(tmp_path):
    from recode_lib.training.grpo import drop_checkpoints

    out = tmp_path / "run"
    for n in (1, 2):
        (out / f"checkpoint-{n}").mkdir(parents=True)
        (out / f"checkpoint-{n}" / "optimizer.pt").write_bytes(b"x")
    (out / "final").mkdir()
    assert drop_checkpoints(out) == []  # final/ not complete: resumable
    assert len(list(out.glob("checkpoint-*"))) == 2
    (out / "final" / ".complete").write_text("{}")
    assert [d.name for d in drop_checkpoints(out)] == ["checkpoint-1", "checkpoint-2"]
    assert not list(out.glob("checkpoint-*")) and (out / "final").is_dir()


@pytest.mark.parametrize("name", sorted(p.stem for p in RECIPES_DIR.glob("*.yaml")))
def test_shipped_recipes_build_into_grpo_configs(name, tmp_path):
    """Every key of every recipe reaches a real (TRL-validated) GRPOConfig; GPU recipes are
    built with use_cpu so that TRL's bf16 check passes on this machine."""
    from trl import GRPOConfig

    from recode_lib.training.grpo import grpo_config, recipe_values, replace_fields

    r = load_recipe(name)
    gpu = not r.use_cpu
    cfg = grpo_config(replace_fields(r, use_cpu=True) if gpu else r, tmp_path)
    assert isinstance(cfg, GRPOConfig) and cfg.output_dir == str(tmp_path)
    for key, value in recipe_values(r).items():  # nothing dropped on the way
        if key not in ("use_cpu", "report_to"):  # (report_to: TRL maps none -> [])
            assert getattr(cfg, key) == value, key
    assert cfg.generation_batch_size % cfg.num_generations == 0  # whole groups per generation
    assert cfg.run_name == r.name and cfg.reward_weights == [1.0] * len(r.rewards)
    if gpu:  # paper profile: bf16, vLLM, and the RM on the accelerator (never CPU float32)
        assert r.bf16 and r.use_vllm and r.vllm_mode in ("colocate", "server")
        if r.rm_path:
            assert r.rm_placement == "trainer" and r.rm_dtype == "bfloat16"
    elif r.rm_path is not None or "rm_placement" in r.set_fields:
        assert r.rm_placement == "cpu"


def test_a_micro_batch_may_hold_part_of_a_group_when_accumulation_completes_it(tmp_path):
    """CPU memory: 4 completions per backward pass, 4 accumulated, groups of 8 (TRL generates
    the 16 at once and trains them in 4 micro-batches); a generation batch that would split a
    group is refused before TRL sees it."""
    from recode_lib.training.grpo import grpo_config, prompts_per_step

    r = load_recipe(
        "cg_grpo_smoke",
        per_device_train_batch_size=4,
        gradient_accumulation_steps=4,
        num_generations=8,
    )
    cfg = grpo_config(r, tmp_path)
    assert cfg.generation_batch_size == 16 and prompts_per_step(r) == 2
    with pytest.raises(ValueError, match="whole groups"):
        load_recipe(
            "cg_grpo_smoke",
            per_device_train_batch_size=4,
            gradient_accumulation_steps=1,
            num_generations=8,
        )


def test_recipe_passes_any_grpo_config_field_through(tmp_path):
    from recode_lib.training.grpo import grpo_config

    r = load_recipe(
        "cg_grpo_smoke",
        epsilon_high=0.28,
        mask_truncated_completions=True,
        scale_rewards="batch",
        rewards=[{"name": "outcome_only", "weight": 2.0}],
    )
    cfg = grpo_config(r, tmp_path)
    assert cfg.epsilon_high == 0.28 and cfg.mask_truncated_completions is True
    assert cfg.scale_rewards == "batch" and cfg.reward_weights == [2.0]
    assert cfg.rewards == [{"name": "outcome_only", "weight": 2.0}]  # the project's fields too
    assert cfg.model == "smollm2" and cfg.rm_placement == "cpu"
    assert load_recipe("cg_grpo_smoke").num_iterations == 1  # TRL's default, unset


def test_a_recipe_is_an_unbuilt_config_that_round_trips(tmp_path):
    """A recipe is a RecodeGRPOConfig made without TRL's __post_init__ (no derived field, no
    accelerator state); replace_fields makes a new one, the YAML of recipe_dict reads back to an
    equal recipe, copies and pickles stay unbuilt, and grpo_config builds it."""
    import copy
    import pickle

    import yaml

    from recode_lib.training.config import RecodeGRPOConfig
    from recode_lib.training.grpo import grpo_config, recipe_dict, replace_fields

    r = load_recipe("cg_grpo_smoke", max_steps=3)
    assert isinstance(r, RecodeGRPOConfig) and r.generation_batch_size is None  # not derived
    assert "max_steps" in r.set_fields and "num_iterations" not in r.set_fields
    r2 = replace_fields(r, max_steps=4)
    assert (r.max_steps, r2.max_steps) == (3, 4)
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(recipe_dict(r2)))
    assert load_recipe(tmp_path / "r.yaml") == r2
    assert recipe_dict(load_recipe(tmp_path / "r.yaml")) == recipe_dict(r2)
    for clone in (copy.deepcopy(r2), pickle.loads(pickle.dumps(r2))):
        assert clone == r2 and clone.generation_batch_size is None
        assert recipe_dict(clone) == recipe_dict(r2)
    built = grpo_config(r2, tmp_path)
    assert built.generation_batch_size and r2.generation_batch_size is None  # r2 left unbuilt
    with pytest.raises(AttributeError, match="nosuch"):
        _ = r.nosuch
    for own in ("build", "set_fields"):  # the config's own bookkeeping is no recipe field
        with pytest.raises(ValueError, match="unknown recipe field"):
            load_recipe("cg_grpo_smoke", **{own: True})


def test_an_assigned_field_is_part_of_the_runs_identity():
    """A recipe is a mutable dataclass, as TRL's configs are: a field assigned after loading,
    even one the recipe file leaves unset, is in recipe_dict (so in the fingerprint), not
    silently trained without changing the run's identity."""
    from recode_lib.training.grpo import recipe_dict, run_fingerprint

    r = load_recipe("cg_grpo_smoke")
    fp = run_fingerprint(r, problems())
    assert "epsilon_high" not in recipe_dict(r)
    r.epsilon_high = 0.28
    assert recipe_dict(r)["epsilon_high"] == 0.28 and run_fingerprint(r, problems()) != fp


def test_recipe_validation_names_the_problem(tiny_model_dir, tmp_path):
    with pytest.raises(
        ValueError, match=r"per_device_train_batch_size \(6, .*num_generations \(4\)"
    ):
        recipe(tiny_model_dir, per_device_train_batch_size=6)
    with pytest.raises(ValueError, match=r"unknown recipe field\(s\) \['lr'\]"):
        load_recipe("cg_grpo_smoke", lr=1.0)
    with pytest.raises(
        ValueError,
        match=r"cg_grpo_smoke.yaml: unknown .*'max_step': did you mean "
        r"'max_steps'",
    ):
        load_recipe("cg_grpo_smoke", max_step=3)
    with pytest.raises(FileNotFoundError, match="recipe 'nosuch' not found"):
        load_recipe("nosuch")
    with pytest.raises(ValueError, match="unknown reward 'nope'"):
        load_recipe("cg_grpo_smoke", rewards=[{"name": "nope"}])
    with pytest.raises(ValueError, match="gets the reward model from the recipe's rm_path"):
        load_recipe("cg_grpo_smoke", rewards=[{"name": "gated", "rm_path": "x"}])
    with pytest.raises(ValueError, match="rm_placement must be one of .*'gpu'"):
        load_recipe("cg_grpo_smoke", rm_placement="gpu")
    with pytest.raises(ValueError, match="endpoint needs rm_endpoint"):
        load_recipe("cg_grpo_smoke", rm_placement="endpoint")
    bad = problems(2)
    bad[1].tests = {"kind": "call", "fn_name": "f", "cases": []}
    with pytest.raises(ValueError, match="problem 'toy/1' .*has no tests"):
        build_dataset(bad)


def test_which_runs_need_a_reward_model_comes_from_the_registry(tmp_path):
    from recode_lib.rewards import REGISTRY, Need, reward_needs
    from recode_lib.training.launch import require_reward_model

    require_reward_model(["outcome_only", "strict_2", "partial_discrete"], None)
    with pytest.raises(FileNotFoundError, match=r"\['math_gated'\] need one"):
        require_reward_model(["math_gated", "outcome_only"], tmp_path / "no_rm")
    needs_rm = {n for n in REGISTRY if Need.REWARD_MODEL in reward_needs(n)}
    assert {"gated", "additive", "process", "math_gated"} <= needs_rm
    assert not {"outcome_only", "strict", "format"} & needs_rm


def test_gated_run_scores_with_the_rm_on_the_trainer_device(tiny_model_dir, tmp_path):
    """rm_placement: trainer on a CPU run: the RM sits on the trainer's device (here the CPU)
    and the gated reward's process term is logged."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    rm = tmp_path / "rm"
    model = AutoModelForSequenceClassification.from_pretrained(tiny_model_dir, num_labels=1)
    model.config.pad_token_id = AutoTokenizer.from_pretrained(tiny_model_dir).pad_token_id
    model.save_pretrained(rm)
    AutoTokenizer.from_pretrained(tiny_model_dir).save_pretrained(rm)
    r = recipe(
        tiny_model_dir,
        rewards=[{"name": "gated"}, {"name": "process", "weight": 0.5}],
        rm_path=str(rm),
        rm_placement="trainer",
        rm_batch_size=4,
        max_steps=1,
        save_steps=100,
    )
    res = train(r, problems(), tmp_path / "run")
    rows = read_metrics(res.output_dir)
    assert len(rows) == 1 and {"gated/proc", "process/proc", "rewards/process/mean"} <= set(rows[0])
    assert 0.0 < rows[0]["process/proc"] < 1.0  # the RM scored every completion


def test_vllm_grpo_step_on_gpu(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA (the vLLM generation path)")
    pytest.importorskip("vllm", reason="vllm is not installed (pip install -e .[gpu])")
    import os

    model = os.environ.get("RECODE_GPU_TEST_MODEL", "Qwen/Qwen2.5-Coder-0.5B-Instruct")
    r = load_recipe(
        "cg_grpo_paper",
        model=model,
        rewards=[{"name": "outcome_only"}],
        max_steps=1,
        max_completion_length=64,
        gradient_accumulation_steps=1,
        vllm_gpu_memory_utilization=0.3,
        report_to=["none"],
        save_steps=100,
    )
    res = train(r, problems(2), tmp_path / "gpu")
    assert (res.final_dir / "config.json").is_file() and len(read_metrics(res.output_dir)) == 1


def test_grpo_step_with_the_rm_on_the_gpu(tiny_model_dir, tmp_path):
    """One GRPO step on CUDA, the RM in bf16 on the trainer's GPU (no vLLM needed)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA (the RM on the trainer's accelerator)")
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    rm = tmp_path / "rm"
    model = AutoModelForSequenceClassification.from_pretrained(tiny_model_dir, num_labels=1)
    model.config.pad_token_id = AutoTokenizer.from_pretrained(tiny_model_dir).pad_token_id
    model.save_pretrained(rm)
    AutoTokenizer.from_pretrained(tiny_model_dir).save_pretrained(rm)
    r = recipe(
        tiny_model_dir,
        rewards=[{"name": "process"}],
        rm_path=str(rm),
        rm_placement="trainer",
        use_cpu=False,
        bf16=True,
        max_steps=1,
        save_steps=100,
    )
    res = train(r, problems(), tmp_path / "gpu_rm")
    rows = read_metrics(res.output_dir)
    assert len(rows) == 1 and 0.0 < rows[0]["process/proc"] < 1.0


def test_dataset_rows_per_domain():
    p = problems(1)[0]
    row = build_dataset([p]).to_list()[0]
    assert Problem.from_json(row["problem"]) == p and row["problem_id"] == "toy/0"
    assert row["prompt"][-1]["role"] == "user"
    with pytest.raises(ValueError, match=r"problem 'toy/0' \(row 0\) has no answer"):
        build_dataset([p], domain="math")
    p.answer = "25"
    assert build_dataset([p], domain="math").to_list()[0]["answer"] == "25"
    with pytest.raises(ValueError, match="domain must be one of"):
        build_dataset([p], domain="prose")


def test_cli_names_an_unknown_key(tmp_path, capsys):
    from recode_lib.cli.grpo import main

    assert main(["--output-dir", str(tmp_path), "--set", "max_step=3"]) == 2
    err = capsys.readouterr().err
    assert "unknown recipe field(s) ['max_step']" in err and "did you mean 'max_steps'" in err
    assert main(["--output-dir", str(tmp_path), "--set", "rm_placement=gpu"]) == 2
    assert "rm_placement must be one of" in capsys.readouterr().err


def test_a_start_or_reward_model_retrained_in_place_changes_the_fingerprint(
    tiny_model_dir, tmp_path
):
    import os
    import shutil

    from recode_lib.training.grpo import run_fingerprint

    start, rm = tmp_path / "start", tmp_path / "rm"
    shutil.copytree(tiny_model_dir, start)
    shutil.copytree(tiny_model_dir, rm)
    r = load_recipe("cg_grpo_smoke", model=str(start), rm_path=str(rm))
    fp = run_fingerprint(r, problems())
    assert run_fingerprint(r, problems()) == fp  # stable while nothing moves
    for folder in (rm, start):  # 02 / 00 re-run in place
        w = folder / "model.safetensors"
        os.utime(w, ns=(w.stat().st_atime_ns, w.stat().st_mtime_ns + 10**9))
        new = run_fingerprint(r, problems())
        assert new != fp
        fp = new
    alias = load_recipe("cg_grpo_smoke", model="smollm2")  # no folder: no stamp
    from recode_lib.core.stamps import fingerprint
    from recode_lib.training.grpo import LOGGING_FIELDS, recipe_dict

    fields = {k: v for k, v in recipe_dict(alias).items() if k not in LOGGING_FIELDS}
    assert run_fingerprint(alias, problems()) == fingerprint(
        fields, [p.to_dict() for p in problems()]
    )
