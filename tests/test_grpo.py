"""GRPO training: real GRPOTrainer steps on the tiny model with the real sandbox-backed reward."""

from __future__ import annotations

import json

import pytest

from recode_lib.data.schema import Problem
from recode_lib.training.grpo import RECIPES_DIR, build_dataset, load_recipe, read_metrics, train
from recode_lib.rewards import REGISTRY, RewardEntry, RewardFunction


def problems(n=4):
    return [Problem(id=f"toy/{i}", source="toy", prompt=f"Write f() returning {i}.",
                    tests={"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": i}]},
                    time_limit_s=2.0)
            for i in range(n)]


def recipe(tiny, **kw):
    base = dict(model=str(tiny), rewards=[{"name": "outcome_only"}], max_steps=2,
                max_completion_length=12, num_generations=4, per_device_train_batch_size=8,
                save_steps=1, save_total_limit=1, sandbox_workers=2)
    base.update(kw)
    return load_recipe("cg_grpo_smoke", **base)


def test_two_steps_write_metrics_checkpoint_and_final(tiny_model_dir, tmp_path):
    from transformers import AutoModelForCausalLM

    out = tmp_path / "run"
    res = train(recipe(tiny_model_dir), problems(), out)
    assert not res.skipped and res.final_dir == out / "final"
    AutoModelForCausalLM.from_pretrained(res.final_dir)          # a loadable HF folder
    assert (res.final_dir / "tokenizer_config.json").is_file()
    rows = read_metrics(out)
    assert [r["step"] for r in rows] == [1, 2]
    for r in rows:   # reward components, the time split and the sandbox throughput per step
        assert {"outcome_only/fmt", "outcome_only/out", "rewards/outcome_only/mean"} <= set(r)
        assert r["time/step_s"] >= r["time/generation_s"] + r["time/reward_s"] - 1e-6
        assert r["time/generation_s"] > 0 and r["time/optimizer_s"] >= 0
        # per-step counts (not cumulative): at most one sandbox run or cache hit per completion,
        # and a completion can only pass its tests if it ran
        ran = r["sandbox/executed"] + r["sandbox/cache_hits"]
        assert 0 <= ran <= 8 and (r["outcome_only/out"] == 0 or ran > 0)
    prov = json.loads((out / "run.json").read_text())
    assert prov["config"]["rewards"] == [{"name": "outcome_only"}]
    again = train(recipe(tiny_model_dir), problems(), out)     # finished: skipped, not retrained
    assert again.skipped and len(read_metrics(out)) == 2


def test_a_changed_recipe_or_problem_set_sets_the_old_run_aside(tmp_path):
    from recode_lib.training.grpo import retire_stale_run, run_fingerprint

    r = load_recipe("cg_grpo_smoke")
    fp = run_fingerprint(r, problems())
    out = tmp_path / "run"
    assert retire_stale_run(out, fp) is None
    (out / "final").mkdir()
    (out / "final" / ".complete").write_text("")
    assert retire_stale_run(out, fp) is None and (out / "final").is_dir()   # same: kept
    assert run_fingerprint(load_recipe("cg_grpo_smoke", max_steps=7), problems()) != fp
    new_fp = run_fingerprint(r, problems(3))
    assert new_fp != fp
    moved = retire_stale_run(out, new_fp)
    assert moved == tmp_path / "run.stale-1" and (moved / "final" / ".complete").is_file()
    assert not (out / "final").exists()
    assert json.loads((out / "fingerprint.json").read_text())["fingerprint"] == new_fp
    legacy = tmp_path / "legacy"
    (legacy / "final").mkdir(parents=True)                    # trained before fingerprints
    assert retire_stale_run(legacy, fp) == tmp_path / "legacy.stale-1"


def test_fingerprint_survives_the_accelerate_round_trip(tmp_path):
    import yaml

    from recode_lib.training.grpo import run_fingerprint

    r = load_recipe("strictness_paper")
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(r.to_dict()))
    back = load_recipe(tmp_path / "r.yaml")
    probs = [Problem.from_dict(json.loads(json.dumps(p.to_dict()))) for p in problems()]
    assert run_fingerprint(back, probs) == run_fingerprint(r, problems())


def test_crash_saves_a_checkpoint_and_the_rerun_resumes(tiny_model_dir, tmp_path, monkeypatch):
    calls = {"n": 0}

    def flaky():
        def compute(prompts, completions, kwargs):
            calls["n"] += 1
            if calls["n"] == 2:
                raise RuntimeError("reward backend died")
            return [{"reward": 0.0, "fmt": 0.0} for _ in completions]
        return RewardFunction("flaky", compute, ("fmt",))

    monkeypatch.setitem(REGISTRY, "flaky", RewardEntry("flaky", flaky))
    out = tmp_path / "run"
    with pytest.raises(RuntimeError, match="reward backend died"):
        train(recipe(tiny_model_dir, rewards=[{"name": "flaky"}], save_steps=100), problems(), out)
    assert (out / "checkpoint-1").is_dir()                   # saved on the way down
    res = train(recipe(tiny_model_dir, rewards=[{"name": "flaky"}], save_steps=100), problems(), out)
    assert res.resumed_from.endswith("checkpoint-1")
    assert [r["step"] for r in read_metrics(out)] == [1, 2]  # no step logged twice
    assert (out / "final" / ".complete").is_file()


def test_recipe_validation_names_the_problem(tiny_model_dir, tmp_path):
    with pytest.raises(ValueError, match=r"per_device_train_batch_size \(6\).*num_generations \(4\)"):
        recipe(tiny_model_dir, per_device_train_batch_size=6)
    with pytest.raises(ValueError, match=r"unknown recipe field\(s\) \['lr'\]"):
        load_recipe("cg_grpo_smoke", lr=1.0)
    with pytest.raises(FileNotFoundError, match="recipe 'nosuch' not found"):
        load_recipe("nosuch")
    bad = problems(2)
    bad[1].tests = {"kind": "call", "fn_name": "f", "cases": []}
    with pytest.raises(ValueError, match="problem 'toy/1' .*has no tests"):
        build_dataset(bad)


@pytest.mark.parametrize("name", sorted(p.stem for p in RECIPES_DIR.glob("*.yaml")))
def test_shipped_recipes_load_into_grpo_configs(name, tmp_path):
    from recode_lib.training.grpo import grpo_config

    r = load_recipe(name)
    if r.use_vllm or r.bf16:      # GPU recipes: check the fields, not a CUDA-only GRPOConfig
        assert r.vllm_mode in ("colocate", "server") and r.bf16
        return
    cfg = grpo_config(r, tmp_path)
    assert cfg.per_device_train_batch_size % cfg.num_generations == 0 and cfg.use_cpu


def test_vllm_grpo_step_on_gpu(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA (the vLLM generation path)")
    pytest.importorskip("vllm", reason="vllm is not installed (pip install -e .[gpu])")
    import os

    model = os.environ.get("RECODE_GPU_TEST_MODEL", "Qwen/Qwen2.5-Coder-0.5B-Instruct")
    r = load_recipe("cg_grpo_paper", model=model, rewards=[{"name": "outcome_only"}], max_steps=1,
                    max_completion_length=64, gradient_accumulation_steps=1,
                    vllm_gpu_memory_utilization=0.3, report_to=["none"], save_steps=100)
    res = train(r, problems(2), tmp_path / "gpu")
    assert (res.final_dir / "config.json").is_file() and len(read_metrics(res.output_dir)) == 1
