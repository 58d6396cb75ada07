"""The resource plan (recode_lib.plan, `recode plan`): model shapes and the KV-cache formula,
the tensor-parallel choice (the 70B generator never at TP 1 on 80 GB), ZeRO-3 sharding, the
refusal that names notebook, stage and numbers, the notebooks' TP parameters reaching the vLLM
backend, the budget, and the pipeline running the plan before a GPU profile (and not before the
dry run). CPU only: nothing here loads a model."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from recode_lib.core.paths import PROJECT_ROOT
from recode_lib.plan import BudgetOptions, ClusterSpec, PlanError, make_plan, model_arch
from recode_lib.plan.architectures import KNOWN, from_config
from recode_lib.plan.budget import Throughputs, gen_seconds, size_class
from recode_lib.plan.memory import GB, choose_tp, engine_need, trainer_need
from recode_lib.plan.stages import Engine, notebook_stages, read_recipe
from recode_lib.runner.pipeline import (
    PipelineError,
    check_resources,
    profile_parameters,
    variant_parameters,
)

H80 = ClusterSpec(gpus=8, gpu_memory=80)
SMALL = ClusterSpec(gpus=1, gpu_memory=24)


@pytest.fixture(autouse=True)
def _no_measured_file(tmp_path, monkeypatch):
    """The default throughputs, whatever runs/gpu_check holds on this machine."""
    monkeypatch.setenv("RECODE_RUNS_DIR", str(tmp_path / "runs"))


@pytest.fixture(scope="module")
def paper():
    return profile_parameters("paper")


def placement(plan, notebook, stage):
    return next(p for p in plan.placements if p.notebook == notebook and p.stage == stage)


# --- shapes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_known_shapes_agree_with_their_model_cards(name):
    arch = KNOWN[name]
    assert abs(arch.params - arch.stated_params) / arch.stated_params < 0.015, arch.params


def test_parameter_count_is_exact_where_the_card_gives_it():
    assert KNOWN["meta-llama/Llama-3.1-70B-Instruct"].params == 70_553_706_496
    assert KNOWN["Qwen/Qwen2.5-Coder-7B-Instruct"].params == 7_615_616_512  # HF: 7.62B


def test_kv_cache_formula_on_a_known_config():
    """2 x layers x kv_heads x head_dim x bytes per token; split over TP, replicated past the
    KV heads."""
    llama = model_arch("meta-llama/Llama-3.1-70B-Instruct")
    assert llama.kv_bytes_per_token() == 2 * 80 * 8 * 128 * 2 == 327_680
    assert llama.kv_bytes_per_token(tp=4) == 327_680 // 4
    assert llama.kv_bytes_per_token(tp=16) == 2 * 80 * 1 * 128 * 2
    qwen3 = model_arch("Qwen/Qwen3-4B-Instruct-2507")  # head_dim 128, not 2560/32
    assert qwen3.kv_bytes_per_token() == 2 * 36 * 8 * 128 * 2
    e = Engine("llama", llama, seq_len=4096, batch=64, max_model_len=4096)
    need = engine_need(e, tp=4, gpu_bytes=80 * GB)
    assert need.kv_min == 8 * 4096 * 327_680 / 4  # MIN_CONCURRENT sequences of 4,096
    assert need.kv_batch == 64 * 4096 * 327_680  # the stage's batch, all GPUs
    assert need.weights == llama.params * 2 / 4


def test_a_local_config_json_wins_over_the_table(tmp_path, tiny_model_dir):
    cfg = json.loads((tiny_model_dir / "config.json").read_text())
    arch = model_arch(str(tiny_model_dir))
    assert arch.source.endswith("config.json") and arch.hidden_size == cfg["hidden_size"]
    assert arch.num_layers == cfg["num_hidden_layers"]
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(tiny_model_dir))
    assert arch.params == sum(p.numel() for p in model.parameters())
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(
        json.dumps({**cfg, "num_hidden_layers": cfg["num_hidden_layers"] + 1})
    )
    assert model_arch(str(tmp_path / "m")).num_layers == cfg["num_hidden_layers"] + 1


def test_an_unknown_model_is_named():
    from recode_lib.plan import ArchitectureError

    with pytest.raises(ArchitectureError, match="org/unknown-model.*config.json"):
        model_arch("org/unknown-model")


def test_reward_model_drops_the_lm_head():
    b = KNOWN["Qwen/Qwen2.5-Coder-7B-Instruct"]
    assert b.params - b.reward_model().params == b.vocab_size * b.hidden_size - b.hidden_size
    assert from_config(
        {
            "hidden_size": 8,
            "num_attention_heads": 2,
            "num_hidden_layers": 1,
            "vocab_size": 10,
            "architectures": ["Qwen2ForSequenceClassification"],
        },
        "rm",
    ).score_head


# --- placement -----------------------------------------------------------------------------------


def test_the_70b_generator_never_gets_tp_1_on_80_gb(paper):
    llama = model_arch("meta-llama/Llama-3.1-70B-Instruct")
    e = Engine("llama", llama, seq_len=3000, batch=256)
    assert choose_tp(e, 8, 80 * GB) >= 2
    assert not engine_need(e, 1, 80 * GB).fits and not engine_need(e, 2, 80 * GB).fits
    plan = make_plan(paper, H80, profile="paper")
    second = placement(plan, "01_crpl_synthesis", "rewrites [second]")
    assert second.model == "meta-llama/Llama-3.1-70B-Instruct" and second.tp >= 2
    assert second.fits and second.tp_min >= 2
    assert placement(plan, "01_crpl_synthesis", "rewrites [main]").tp >= 2  # 32B: 65 GB


def test_paper_profile_fits_one_8x80_node_and_uses_the_plans_tp_sizes(paper):
    """paper.yaml sets every vLLM TP parameter to what the plan chooses on 8 x 80 GB."""
    plan = make_plan(paper, H80, profile="paper")
    assert plan.ok, plan.problems
    engines = [
        (st, placement(plan, st.notebook, st.name))
        for stem, p in paper.items()
        for st in notebook_stages(stem, p, paper)
        if st.engine is not None
    ]
    tuned = [(st, pl) for st, pl in engines if st.engine.tp_param in paper[st.notebook]]
    assert {st.engine.tp_param for st, _ in tuned} >= {
        "GENERATOR_TP",
        "SECOND_GENERATOR_TP",
        "JUDGE_TP",
        "TENSOR_PARALLEL_SIZE",
    }
    for st, pl in tuned:
        if st.engine.tp_param != "TENSOR_PARALLEL_SIZE":  # a 7B: 1 fits, more is a choice
            assert pl.tp == pl.tp_min, (st.notebook, st.name)
    for p in plan.placements:
        assert p.need_gb <= p.limit_gb


def test_a_too_small_tp_is_refused_naming_notebook_stage_numbers_and_the_fix(paper):
    params = profile_parameters("paper", overrides={"GENERATOR_TP": 1})
    plan = make_plan(params, H80, profile="paper")
    [msg] = plan.problems
    assert msg.startswith("01_crpl_synthesis / rewrites [main] (Qwen/Qwen2.5-Coder-32B-Instruct")
    assert "weights 65.5 GB/GPU" in msg and "> 0.90 x 80 GB = 72.0 GB" in msg
    assert "set GENERATOR_TP: 2" in msg
    with pytest.raises(PlanError, match="01_crpl_synthesis / rewrites \\[main\\]"):
        plan.require()


def test_a_tp_that_does_not_divide_the_heads_is_refused(paper):
    params = profile_parameters("paper", overrides={"TENSOR_PARALLEL_SIZE": 8})
    plan = make_plan(params, H80, profile="paper", only={"05_codegen_eval"})
    assert any("does not divide the model's 28 attention heads" in m for m in plan.problems)


def test_zero3_shards_weights_gradients_and_adam_over_the_processes(paper):
    # the runs that need the RM (gated, additive: each once per seed) share one stage
    [gated] = [
        st
        for st in notebook_stages("04_cg_grpo", paper["04_cg_grpo"], paper)
        if st.name.startswith("GRPO")
        and "gated" in st.name
        and st.trainer.reward_model
        and "transfer" not in st.name
    ]
    t = gated.trainer
    need = trainer_need(t, 80 * GB)
    assert t.zero3 and t.processes == 8 and t.bytes_per_param == 16
    assert need.parts["weights+grads+Adam"] == 16 * t.arch.params / 8
    assert need.parts["reward model"] == 2 * t.reward_model.arch.params  # bf16, per rank
    assert need.parts["vLLM (colocated)"] == 0.3 * 80 * GB
    two = trainer_need(type(t)(**{**t.__dict__, "processes": 2}), 80 * GB)
    assert two.parts["weights+grads+Adam"] == 4 * need.parts["weights+grads+Adam"]
    assert not two.fits  # why notebook 10 runs on 8 processes, not 2


def test_the_reward_model_counts_fp32_master_weights_sharded_over_its_processes(paper):
    """02 keeps fp32 master weights + Adam (16 B/param): ZeRO-3 over NUM_PROCESSES with LAUNCHER
    accelerate (the paper's 8), and one process of a 7B is refused on 80 GB with the numbers."""
    [st] = notebook_stages("02_reward_model", paper["02_reward_model"], paper)
    t = st.trainer
    assert (t.bytes_per_param, t.zero3, t.processes) == (16, True, 8)
    assert trainer_need(t, 80 * GB).parts["weights+grads+Adam"] == 16 * t.arch.params / 8
    p = placement(make_plan(paper, H80, profile="paper"), "02_reward_model", st.name)
    assert p.fits and p.where.startswith("ZeRO-3 x8 mixed 16 B/param")
    one = {**paper, "02_reward_model": {**paper["02_reward_model"], "LAUNCHER": "inprocess"}}
    [msg] = make_plan(one, H80, profile="paper", only={"02_reward_model"}).problems
    assert msg.startswith(
        "02_reward_model / RM training (x2: ablation) (Qwen/Qwen2.5-Coder-7B-Instruct, training): "
    )
    assert "GB per GPU > 80 GB (weights+grads+Adam 113.1 + " in msg and "one process" in msg
    assert "set LAUNCHER: accelerate and NUM_PROCESSES" in msg
    dry = {**paper, "02_reward_model": {**paper["02_reward_model"], "LAUNCHER": "dryrun"}}
    assert notebook_stages("02_reward_model", dry["02_reward_model"], dry) == []  # CPU


def test_a_training_stage_needs_its_processes_on_one_machine(paper):
    plan = make_plan(
        paper, ClusterSpec(gpus=4, gpu_memory=80, nodes=2), profile="paper", only={"04_cg_grpo"}
    )
    assert any("needs 8 GPU(s)" in m and "num_machines 1" in m for m in plan.problems)


def test_cli_places_8x80_and_prints_the_tp_sizes():
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "recode_lib",
            "plan",
            "--profile",
            "paper",
            "--gpus",
            "8",
            "--gpu-memory",
            "80",
        ],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    row = next(ln for ln in r.stdout.splitlines() if "rewrites [second]" in ln)
    assert "Llama-3.1-70B-Instruct" in row and " 4 (4) " in row and row.endswith("ok")
    assert "rewrites [second] (Llama-3.1-70B-Instruct): 4 (4)" in r.stdout
    assert "compute budget on 8 x 80 GB" in r.stdout and "total:" in r.stdout


def test_cli_refuses_1x24_with_a_nonzero_exit_naming_the_notebook(tmp_path):
    out = tmp_path / "plan.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "recode_lib",
            "plan",
            "--profile",
            "paper",
            "--gpus",
            "1",
            "--gpu-memory",
            "24",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        timeout=300,
    )
    assert r.returncode != 0
    assert "01_crpl_synthesis / rewrites [main]" in r.stderr and "GB" in r.stderr
    assert "REFUSED" in r.stdout
    data = json.loads(out.read_text())
    assert not data["ok"] and any(
        p.startswith("02_reward_model / RM training") for p in data["problems"]
    )


def test_cli_lists_plan_and_its_typed_options(capsys):
    from recode_lib.cli import main

    assert main(["--help"]) == 0
    assert "plan" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    help_ = capsys.readouterr().out
    assert "--gpus" in help_ and "--gpu-memory" in help_ and "--nodes" in help_
    assert main(["plan", "--profile", "smoke"]) == 0
    assert "no GPU stage" in capsys.readouterr().out


# --- the TP parameters reach the backend ----------------------------------------------------------


def test_notebook_tp_parameters_reach_the_vllm_backend(tiny_model_dir):
    from recode_lib.generation.chat import make_generator
    from recode_lib.runner.pipeline import declared_parameters, notebooks_dir

    gen = make_generator("vllm_standin", str(tiny_model_dir), tensor_parallel_size=4)
    assert gen.llm_kwargs()["tensor_parallel_size"] == 4  # builds no engine
    assert gen.engine().kwargs["tensor_parallel_size"] == 4  # the CPU stand-in of vllm.LLM
    gen.close()
    with pytest.raises(ValueError, match="vllm backend only"):
        make_generator("hf", str(tiny_model_dir), tensor_parallel_size=2)
    p01 = declared_parameters(notebooks_dir() / "01_crpl_synthesis.ipynb")
    p03 = declared_parameters(notebooks_dir() / "03_lcb_rb.ipynb")
    assert p01["GENERATOR_TP"] == p01["SECOND_GENERATOR_TP"] == p03["JUDGE_TP"] == 1  # smoke
    src = (notebooks_dir() / "03_lcb_rb.ipynb").read_text()
    assert "tensor_parallel_size=JUDGE_TP" in src
    assert "tensor_parallel_size=tp" in (notebooks_dir() / "01_crpl_synthesis.ipynb").read_text()


def test_the_plan_reads_a_notebooks_recipe_fields_as_its_run_does(paper):
    """The plan's GRPO stages take RECIPE_FIELDS (the reader the notebooks use) over
    the recipe file: steps, batch and completion length; 09's steps are per round."""
    from recode_lib.plan.stages import GrpoRuns, run_fields

    p = paper["04_cg_grpo"]
    base = [st for st in notebook_stages("04_cg_grpo", p, paper) if st.trainer is not None]
    changed = {
        **p,
        "RECIPE_FIELDS": {
            "max_steps": 7,
            "per_device_train_batch_size": 16,
            "max_completion_length": 512,
        },
    }
    new = [st for st in notebook_stages("04_cg_grpo", changed, paper) if st.trainer is not None]
    assert base and len(new) == len(base)
    assert {st.work.steps for st in new} == {7} != {st.work.steps for st in base}
    assert {st.trainer.micro_batch for st in new} == {16}
    assert {st.work.completion_tokens for st in new} == {512}
    runs = GrpoRuns("accelerate", 8, changed["RECIPE_FIELDS"], p["BENCHMARK"], p["WORKERS"])
    assert run_fields(runs, "m") == {
        "max_steps": 7,
        "per_device_train_batch_size": 16,
        "max_completion_length": 512,
        "benchmark": p["BENCHMARK"],
        "sandbox_workers": p["WORKERS"],
        "model": "m",
    }
    p9 = {**paper["09_repair"], "RECIPE_FIELDS": {"max_steps": 3}}
    steps = {
        st.work.steps for st in notebook_stages("09_repair", p9, paper) if st.trainer is not None
    }
    assert steps == {3 * int(p9["ROUNDS"])}


def test_a_field_the_recipe_leaves_out_is_the_config_dataclass_default(tmp_path):
    from recode_lib.training.config import RecodeGRPOConfig

    (tmp_path / "bare.yaml").write_text("max_steps: 3\n")
    r = read_recipe(str(tmp_path / "bare.yaml"))
    assert r["max_steps"] == 3 and r["name"] == "bare"
    for name in (
        "per_device_train_batch_size",
        "num_generations",
        "use_vllm",
        "rm_placement",
        "vllm_gpu_memory_utilization",
        "beta",
        "lora",
        "use_cpu",
    ):
        assert r[name] == RecodeGRPOConfig.__dataclass_fields__[name].default, name


# --- the budget ----------------------------------------------------------------------------------


def test_every_seed_is_a_run_in_the_plan(paper):
    one = {
        **paper,
        "04_cg_grpo": {**paper["04_cg_grpo"], "SEEDS": "0"},
        "06_strictness_sweep": {**paper["06_strictness_sweep"], "SEEDS": "0"},
    }
    for stem in ("04_cg_grpo", "06_strictness_sweep"):
        runs3 = sum(
            st.runs
            for st in notebook_stages(stem, paper[stem], paper)
            if st.name.startswith("GRPO")
        )
        runs1 = sum(
            st.runs for st in notebook_stages(stem, one[stem], one) if st.name.startswith("GRPO")
        )
        assert runs3 == 3 * runs1, stem
    # 07 evaluates 06's other runs (every seed's) beside the alphas, for 08's best single
    [a3] = notebook_stages("07_weight_averaging", paper["07_weight_averaging"], paper)
    [a1] = notebook_stages("07_weight_averaging", one["07_weight_averaging"], one)
    assert "sweep runs" in a3.name and a3.work.formula != a1.work.formula


def test_generation_hours_follow_tokens_and_throughput():
    assert gen_seconds(3000 * 3600, 0, 3000, 1, None, 1.0) == pytest.approx(3600)
    assert gen_seconds(3000 * 3600, 0, 3000, 2, None, 0.5) == pytest.approx(900)
    assert gen_seconds(3000 * 3600, 0, 3000, 1, 8, 1.0) == pytest.approx(3600 * 4)  # 8 of 32
    assert size_class(KNOWN["Qwen/Qwen2.5-Coder-32B-Instruct"])[0] == "up_to_40b"


def test_budget_totals_and_the_notebooks_that_dominate(paper):
    plan = make_plan(paper, H80, profile="paper")
    hours = plan.notebook_hours()
    assert plan.total_wall_h == pytest.approx(sum(d["wall_h"] for d in hours.values()))
    assert max(hours, key=lambda k: hours[k]["wall_h"]) == "11_settings_sweep"
    e5 = placement(plan, "05_codegen_eval", "evaluation (Qwen2.5-Coder-7B-Instruct)")
    # the start model + 3 variants x 3 seeds, x every problem of 7 benchmarks x 10 samples x
    # 2,048 tokens, one GPU
    assert e5.formula.startswith("10 checkpoint(s) x") and "10 samples x 2,048 tok" in e5.formula
    half = make_plan(paper, H80, profile="paper", budget=BudgetOptions(length_fraction=0.5))
    assert half.total_wall_h < plan.total_wall_h


def test_measured_throughputs_replace_the_defaults(tmp_path, paper, monkeypatch):
    stage = ("05_codegen_eval", "evaluation (Qwen2.5-Coder-7B-Instruct)")
    base = placement(make_plan(paper, H80, profile="paper"), *stage).hours.generation_h
    measured = tmp_path / "runs" / "gpu_check" / "throughput.json"
    measured.parent.mkdir(parents=True)
    measured.write_text(json.dumps({"generation_tokens_per_s": {"up_to_10b": 6000.0}}))
    plan = make_plan(paper, H80, profile="paper")
    assert plan.throughput_source.startswith("measured")
    assert placement(plan, *stage).hours.generation_h == pytest.approx(base / 2)
    measured.write_text(json.dumps({"generation_tokens_per_s": {"up_to_10b": "fast"}}))
    with pytest.raises(PlanError, match="positive tokens/s"):
        make_plan(paper, H80, profile="paper")
    with pytest.raises(ValueError, match="does not exist"):
        Throughputs.load(tmp_path / "none.json")  # an explicit --throughputs file


# --- the pipeline --------------------------------------------------------------------------------


def test_the_pipeline_refuses_a_gpu_profile_that_does_not_fit_before_any_notebook(tmp_path):
    from recode_lib.runner.pipeline import run_pipeline

    with pytest.raises(PipelineError, match="01_crpl_synthesis / rewrites \\[main\\]"):
        run_pipeline("paper", cluster=SMALL, kernel_name="python3")
    assert not (tmp_path / "runs" / "paper" / "manifest.json").exists()
    plan = check_resources("paper", profile_parameters("paper"), cluster=H80, log=lambda *_: None)
    assert plan.ok and plan.tp_sizes["01_crpl_synthesis / rewrites [second]"] == 4


def test_the_dry_run_and_cpu_profiles_are_not_blocked(tmp_path):
    from recode_lib.runner.dryrun import dryrun_profile, write_dryrun_params

    path = write_dryrun_params(tmp_path / "dryrun.yaml", "/tiny")
    dry = profile_parameters("dryrun", path)
    assert check_resources("dryrun", dry, cluster=None) is None  # no CUDA needed
    assert check_resources("smoke", profile_parameters("smoke")) is None
    # ... while the paper values it derives from place on 8 x 80 GB and not on 1 x 24 GB
    paper_dry = dryrun_profile("/tiny")
    assert paper_dry["01_crpl_synthesis"]["SECOND_GENERATOR_TP"] == 4  # carried over
    assert make_plan(profile_parameters("paper"), H80).ok
    assert not make_plan(profile_parameters("paper"), SMALL).ok


def test_a_gpu_profile_without_a_cluster_on_a_cpu_machine_is_refused(paper):
    from recode_lib.plan import detect_cluster

    if detect_cluster() is not None:
        pytest.skip("this machine has CUDA devices")
    with pytest.raises(PipelineError, match="--gpus N --gpu-memory GB"):
        check_resources("paper", paper)


# --- data-parallel engines and nodes (issue 38) ---------------------------------------------


def by_kind(plan, kind):
    from recode_lib.plan.core import stage_kind

    return [p for p in plan.placements if stage_kind(p) == kind]


def test_every_generation_stage_keeps_the_nodes_gpus_busy(paper):
    """One engine per TP-sized group of GPUs: >= 90% GPU utilisation for every generation
    stage on one 8 x 80 GB node (the sandbox-bound and one-request stages are named as such)."""
    from recode_lib.plan.core import stage_kind, utilisation

    plan = make_plan(paper, H80, profile="paper")
    gen = by_kind(plan, "generation")
    assert len(gen) >= 15
    for p in gen:
        assert p.hours.engines * p.tp == 8, (p.stage, p.hours.engines, p.tp)
        assert p.hours.utilisation >= 0.90, (p.notebook, p.stage, p.hours.utilisation)
    assert utilisation(plan.placements) >= 0.90
    # what is left below is small and says why: sandbox-bound or a single request
    rest = [p for p in plan.placements if stage_kind(p) in ("sandbox-bound", "one request")]
    assert sum(p.hours.wall_h for p in rest) < 0.01 * plan.total_wall_h
    grid = placement(plan, "11_settings_sweep", "tool: alpha grid (17 alphas)")
    one = make_plan(paper, ClusterSpec(gpus=1, gpu_memory=80), profile="paper")
    assert grid.hours.generation_h == pytest.approx(
        placement(one, "11_settings_sweep", "tool: alpha grid (17 alphas)").hours.generation_h / 8
    )


def test_nodes_divide_the_generation_bound_stages_and_spread_independent_runs(paper):
    totals = {
        n: make_plan(paper, ClusterSpec(gpus=8, gpu_memory=80, nodes=n), profile="paper")
        for n in (1, 2, 8)
    }
    assert totals[1].total_wall_h / totals[2].total_wall_h >= 1.8
    assert totals[1].total_wall_h / totals[8].total_wall_h >= 6
    # 06's 21 independent GRPO runs: one per node, in ceil(21 / nodes) waves
    name = next(
        p.stage
        for p in totals[1].placements
        if p.notebook == "06_strictness_sweep" and p.stage.startswith("GRPO 21")
    )
    w1 = placement(totals[1], "06_strictness_sweep", name).hours
    w8 = placement(totals[8], "06_strictness_sweep", name).hours
    assert w8.concurrent_runs == 8 and w8.wall_h == pytest.approx(w1.wall_h * 3 / 21)
    assert w8.gpu_h == pytest.approx(w1.gpu_h)  # the same work, spread
    e8 = placement(totals[8], "11_settings_sweep", "tool: alpha grid (17 alphas)").hours
    assert e8.engines == 64


def test_measured_data_parallel_efficiency_slows_the_spread(tmp_path, paper):
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"data_parallel_efficiency": 0.5}))
    rates = Throughputs.load(f)
    stage = ("11_settings_sweep", "tool: alpha grid (17 alphas)")
    base = placement(make_plan(paper, H80, profile="paper"), *stage).hours.generation_h
    slow = placement(make_plan(paper, H80, profile="paper", rates=rates), *stage).hours
    assert slow.generation_h == pytest.approx(2 * base)
    f.write_text(json.dumps({"data_parallel_efficiency": 0}))
    with pytest.raises(ValueError, match="data_parallel_efficiency"):
        Throughputs.load(f)


def budget_figures(paper) -> dict:
    """The README's and docs' budget figures, computed from the plan (default throughputs)."""
    plan = make_plan(paper, H80, profile="paper", rates=Throughputs())
    hours = plan.notebook_hours()
    from recode_lib.plan.core import utilisation

    eight = make_plan(
        paper, ClusterSpec(gpus=8, gpu_memory=80, nodes=8), profile="paper", rates=Throughputs()
    )
    half = make_plan(
        paper, H80, profile="paper", rates=Throughputs(), budget=BudgetOptions(length_fraction=0.5)
    )
    variant = make_plan(
        paper,
        H80,
        profile="paper",
        rates=Throughputs(),
        variants=variant_parameters("paper", None, {}),
    )
    return {
        "total": f"{round(plan.total_wall_h, -2):,.0f}",
        "share11": f"{100 * hours['11_settings_sweep']['wall_h'] / plan.total_wall_h:.0f}",
        "util": f"{100 * utilisation(plan.placements):.0f}",
        "upto05": f"{sum(d['wall_h'] for s, d in hours.items() if s[:2] <= '05'):.0f}",
        "nodes8": f"{round(eight.total_wall_h, -1):,.0f}",
        "half": f"{round(half.total_wall_h, -2):,.0f}",
        "variant": f"{round(variant.variant_wall_h['scale_32b'], -2):,.0f}",
    }


def test_readme_and_docs_budget_figures_are_the_plans(paper):
    import re

    want = budget_figures(paper)
    readme = (PROJECT_ROOT / "README.md").read_text()
    words = [
        "about",
        r"([\d,]+)",
        "node-hours",
        "as",
        "configured",
        r"\(upper",
        "bounds,",
        r"(\d+)%",
        "of",
        "it",
        "notebook",
        "11,",
        r"(\d+)%",
        "GPU",
        r"utilisation\);",
        "notebooks",
        "00-05",
        r"\(up",
        "to",
        "ReCode's",
        "headline",
        r"table\)",
        "are",
        "about",
        r"(\d+)",
        "h",
        "of",
        "that",
        "bound,",
        "and",
        "on",
        "8",
        "nodes",
        r"\(`--nodes",
        r"8`\)",
        "the",
        "whole",
        "study",
        "takes",
        "about",
        r"([\d,]+)",
        "h",
    ]
    pattern = r"\s+".join(words)
    m = re.search(pattern, readme)
    assert m, "README.md's budget sentence (Quickstart: one GPU node) not found"
    assert dict(zip(("total", "share11", "util", "upto05", "nodes8"), m.groups(), strict=True)) == {
        k: want[k] for k in ("total", "share11", "util", "upto05", "nodes8")
    }
    m = re.search(r"`--variant\s+scale_32b`,\s+about\s+([\d,]+)\s+h\s+more", readme)
    assert m and m.group(1) == want["variant"], "README.md's scale_32b figure is not the plan's"
    doc = (PROJECT_ROOT / "docs" / "paper_profile.md").read_text()
    block = re.search(r"```\n(compute budget on 8 x 80 GB.*?)```", doc, re.S)
    assert block, "docs/paper_profile.md's budget block not found"
    from recode_lib.plan import format_budget

    printed = format_budget(make_plan(paper, H80, profile="paper", rates=Throughputs()))
    assert block.group(1).strip() == printed.strip()
    m = re.search(r"about ([\d,]+) node-hours\s+as configured \(([\d,]+) at half-length", doc)
    assert m and m.groups() == (want["total"], want["half"])
