"""`make gpu-check` on a machine without a GPU: the degraded mode completes, names the GPU
steps it skipped and why, runs the CPU steps, and prints a table that parses back; what the GPU
steps measure becomes the throughput file `recode plan` reads (a fake one changes the budget)."""

from __future__ import annotations

import json

import pytest

from recode_lib.core.paths import data_dir
from recode_lib.runner import gpu_check

GPU_STEPS = {
    "vllm_generate",
    "vllm_generate_code",
    "grpo_vllm_colocate",
    "grpo_rm_gpu",
    "passk_vllm",
}
CPU_STEPS = {"vllm_request_path", "grpo_cpu", "merge", "passk_cpu"}


def test_table_round_trip():
    rows = [
        gpu_check.CheckRow("merge", 1.5, "ok", "3 alphas"),
        gpu_check.CheckRow("passk_vllm", 0.0, "skipped", "GPU step: no CUDA device"),
    ]
    parsed = gpu_check.parse_table("noise\n" + gpu_check.format_table(rows) + "\n")
    assert parsed == [
        {"step": "merge", "seconds": 1.5, "result": "ok", "reason": "3 alphas"},
        {
            "step": "passk_vllm",
            "seconds": 0.0,
            "result": "skipped",
            "reason": "GPU step: no CUDA device",
        },
    ]


@pytest.mark.slow  # ~35 s on 2 cores (tiny model)
def test_cpu_run_completes_in_degraded_mode(tiny_model_dir, tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the degraded mode is not what runs here")
    rc = gpu_check.main(["--model", str(tiny_model_dir), "--work", str(tmp_path)])
    out = capsys.readouterr().out
    rows = {r["step"]: r for r in gpu_check.parse_table(out)}
    assert set(rows) == GPU_STEPS | CPU_STEPS
    assert "degraded" in out
    for step in GPU_STEPS:
        assert rows[step]["result"] == "skipped" and "GPU step" in rows[step]["reason"]
    expected_ok = CPU_STEPS if data_dir() is not None else CPU_STEPS - {"passk_cpu"}
    for step in expected_ok:
        assert rows[step]["result"] == "ok", rows[step]
    assert rc == 0
    assert (tmp_path / "merged" / "alpha_1.5" / "config.json").is_file()


# --- the throughput file the plan reads ----------------------------------------------------------


def test_grpo_train_rate_is_the_last_steps_tokens_over_its_optimizer_time():
    records = [
        {"step": 1, "num_tokens": 1000.0, "time/optimizer_s": 4.0},  # warm-up
        {"step": 2, "num_tokens": 3000.0, "time/optimizer_s": 0.5, "time/steps_averaged": 1},
    ]
    assert gpu_check.grpo_train_rate(records) == pytest.approx(2000 / 0.5)
    assert gpu_check.grpo_train_rate(records, processes=2) == pytest.approx(2000)
    assert gpu_check.grpo_train_rate([{"step": 1, "loss": 0.1}]) is None


def test_measured_rates_are_keyed_the_way_the_plan_looks_them_up():
    assert gpu_check.hub_id("smollm2") == "HuggingFaceTB/SmolLM2-135M-Instruct"
    snap = "/h/hub/models--Qwen--Qwen2.5-Coder-7B-Instruct/snapshots/0123abc"
    assert gpu_check.hub_id(snap) == "Qwen/Qwen2.5-Coder-7B-Instruct"
    assert gpu_check.class_key("Qwen/Qwen2.5-Coder-7B-Instruct") == "up_to_10b"
    assert gpu_check.class_key("smollm2") is None  # a 135M rate says nothing of a 7B's
    table = {}
    gpu_check.record_rate(table, "Qwen/Qwen2.5-Coder-7B-Instruct", 2500.04)
    assert table == {"Qwen/Qwen2.5-Coder-7B-Instruct": 2500.0, "up_to_10b": 2500.0}


def test_a_measured_file_changes_the_plans_budget(tmp_path, monkeypatch):
    from recode_lib.plan import ClusterSpec, make_plan
    from recode_lib.runner.pipeline import profile_parameters

    monkeypatch.setenv("RECODE_RUNS_DIR", str(tmp_path / "runs"))
    paper, cluster = profile_parameters("paper"), ClusterSpec(8, 80)

    def hours(plan):  # 04's outcome-only runs (one per seed): the 7B, no reward model
        return next(
            p.hours
            for p in plan.placements
            if p.notebook == "04_cg_grpo" and p.stage.startswith("GRPO outcome_only")
        )

    base = make_plan(paper, cluster, profile="paper")
    assert base.throughput_source == "defaults"
    assert gpu_check.write_throughputs(gpu_check.Measured(sandbox={"records": 3})) is None
    m = gpu_check.Measured()
    gpu_check.record_rate(m.generation, "Qwen/Qwen2.5-Coder-7B-Instruct", 1500.0)
    gpu_check.record_rate(m.train, "Qwen/Qwen2.5-Coder-7B-Instruct", 900.0)
    out = gpu_check.write_throughputs(m, gpu="NVIDIA H200")
    assert out == tmp_path / "runs" / "gpu_check" / "throughput.json"
    plan = make_plan(paper, cluster, profile="paper")
    assert plan.throughput_source.startswith("measured")
    assert hours(plan).generation_h == pytest.approx(2 * hours(base).generation_h)  # 3000 -> 1500
    assert hours(plan).train_h != pytest.approx(hours(base).train_h)
    # a second run (another model) is merged in, the first one's figures stay
    m2 = gpu_check.Measured(train={"Qwen/Qwen3-4B-Instruct-2507": 4000.0})
    gpu_check.write_throughputs(m2)
    data = json.loads(out.read_text())
    assert data["train_tokens_per_s"] == {
        "Qwen/Qwen2.5-Coder-7B-Instruct": 900.0,
        "up_to_10b": 900.0,
        "Qwen/Qwen3-4B-Instruct-2507": 4000.0,
    }
    assert data["gpu"] == "NVIDIA H200"


def test_data_parallel_step_measures_one_engine_against_several(tiny_model_dir):
    """The vllm_data_parallel step's arithmetic and path, on the stand-in engine (CPU): one
    engine, then two side by side with twice the prompts; the speed-up and efficiency land in
    Measured, and the plan's factor is written capped at 1."""
    m = gpu_check.Measured()
    msg = gpu_check.step_data_parallel(
        str(tiny_model_dir),
        engines=2,
        prompts=2,
        n=1,
        max_new_tokens=4,
        measured=m,
        engine="standin",
    )
    dp = m.data_parallel
    assert dp["engines"] == 2 and dp["speedup"] > 0
    # speed-up rounded to 2 decimals, efficiency (from the unrounded one) to 3: they agree to
    # within half a hundredth over 2 engines plus half a thousandth
    assert dp["efficiency"] == pytest.approx(dp["speedup"] / 2, abs=0.0026 + 0.0005)
    assert "speed-up" in msg


def test_data_parallel_step_skips_on_one_gpu(monkeypatch):
    monkeypatch.setattr(gpu_check, "visible_devices", lambda kind: [0])
    with pytest.raises(gpu_check.Skip, match="one GPU"):
        gpu_check.step_data_parallel("smollm2")


def test_measured_data_parallel_efficiency_reaches_the_plan(tmp_path):
    from recode_lib.plan.budget import Throughputs

    out = tmp_path / "t.json"
    m = gpu_check.Measured(data_parallel={"engines": 4, "speedup": 3.6, "efficiency": 0.9})
    gpu_check.write_throughputs(m, out)
    assert Throughputs.load(out).data_parallel_efficiency == 0.9
    m.data_parallel["efficiency"] = 1.3  # super-linear: not credited
    gpu_check.write_throughputs(m, out)
    assert Throughputs.load(out).data_parallel_efficiency == 1.0
