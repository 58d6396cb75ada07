"""`make gpu-check` on a machine without a GPU: the degraded mode completes, names the GPU
steps it skipped and why, runs the CPU steps, and prints a table that parses back."""

from __future__ import annotations

import pytest

from recode_lib import gpu_check
from recode_lib.paths import data_dir

GPU_STEPS = {"vllm_generate", "vllm_generate_code", "grpo_vllm_colocate", "grpo_rm_gpu",
             "passk_vllm"}
CPU_STEPS = {"vllm_request_path", "grpo_cpu", "merge", "passk_cpu"}


def test_table_round_trip():
    rows = [gpu_check.CheckRow("merge", 1.5, "ok", "3 alphas"),
            gpu_check.CheckRow("passk_vllm", 0.0, "skipped", "GPU step: no CUDA device")]
    parsed = gpu_check.parse_table("noise\n" + gpu_check.format_table(rows) + "\n")
    assert parsed == [{"step": "merge", "seconds": 1.5, "result": "ok", "reason": "3 alphas"},
                      {"step": "passk_vllm", "seconds": 0.0, "result": "skipped",
                       "reason": "GPU step: no CUDA device"}]


@pytest.mark.slow           # ~35 s on 2 cores (tiny model)
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
