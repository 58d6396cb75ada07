"""The paper profile's dry run: notebooks/params/paper.yaml with only the model, counts, steps
and backends shrunk (recode_lib.runner.dryrun) runs every notebook on CPU (marker `notebooks`, CI),
so a typo in a paper-only key, path or branch fails here and not on a cluster. The unit tests
(default suite) check the derivation, the launch configs and the vLLM request path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from dryrun_helpers import run_dryrun

from recode_lib.core.paths import PROJECT_ROOT, data_dir
from recode_lib.runner.dryrun import (
    ADDED,
    BACKEND_KEYS,
    BACKEND_MAP,
    CLASSIFIER_KEYS,
    COUNTS,
    ENDPOINT_KEYS,
    ENGINES,
    LAUNCHER_MAP,
    MODEL_KEYS,
    NOT_ON_CPU,
    SECTION_COUNTS,
    TP_KEYS,
    VLLM_LAUNCHER_MAP,
    changed_keys,
    dryrun_profile,
    engine_report,
    write_dryrun_params,
)
from recode_lib.runner.pipeline import list_notebooks, load_profile
from recode_lib.runner.variants import VARIANTS_KEY

NOTEBOOKS = list_notebooks()
SHRUNK = (
    set(COUNTS)
    | set(MODEL_KEYS)
    | {
        "BACKEND",
        "GENERATOR_BACKEND",
        "JUDGE_BACKEND",
        "LAUNCHER",
        "KS",
        "ALPHAS",
        "SAVE_ALPHAS",
        "PASS_K",
        "SEEDS",
        "RECIPE_FIELDS",
    }
    | {k for s in SECTION_COUNTS.values() for k in s}
    | {k for s in ADDED.values() for k in s}
    | set(ENDPOINT_KEYS)
    | set(CLASSIFIER_KEYS)
)


def test_dryrun_changes_only_models_counts_steps_and_backends():
    paper = load_profile("paper")
    dry = dryrun_profile("/tiny")
    assert set(dry) == {k for k in paper if not k.startswith("_")} | {VARIANTS_KEY}
    for stem, keys in changed_keys(dry, paper).items():
        assert set(keys) <= SHRUNK, f"{stem}: the dry run changes {set(keys) - SHRUNK}"
    for stem, params in paper.items():
        if stem.startswith("_"):
            continue
        for key, value in params.items():
            assert key in dry[stem], f"{stem}.{key} is dropped by the dry run"
            if key not in SHRUNK:
                assert dry[stem][key] == value
    assert (
        dry["common"]["MODEL"] == "/tiny" and dry["01_crpl_synthesis"]["GENERATOR_MODEL"] == "/tiny"
    )
    assert dry["common"]["BACKEND"] == BACKEND_MAP["vllm"]
    assert dry["04_cg_grpo"]["LAUNCHER"] == LAUNCHER_MAP["accelerate"]
    assert dry["04_cg_grpo"]["RECIPE"] == "cg_grpo_paper"
    assert dry["04_cg_grpo"]["NUM_PROCESSES"] == paper["04_cg_grpo"]["NUM_PROCESSES"]
    assert dry["02_reward_model"]["LAUNCHER"] == LAUNCHER_MAP["accelerate"] == "dryrun"
    assert dry["02_reward_model"]["NUM_PROCESSES"] == paper["02_reward_model"]["NUM_PROCESSES"]
    assert dry["03_lcb_rb"]["ADJUDICATION"] == "widget"
    assert dry["01_crpl_synthesis"]["RULE_FALLBACK"] is False
    assert (
        dry["05_codegen_eval"]["API_MODEL"]
        == paper["05_codegen_eval"]["API_MODEL"]
        == "gpt-4-turbo"
    )


def test_dryrun_carries_the_scale_32b_variant_shrunk(tmp_path):
    """The paper's scale_32b variant (06-08 again at 32B) is in the dry run too: its 32B start
    becomes the tiny model, its 32B recipe kept with the dry run's steps, and its parameters
    resolve for every notebook it runs under PROFILE "dryrun@scale_32b"."""
    from recode_lib.runner.pipeline import profile_parameters

    paper = load_profile("paper")
    dry = dryrun_profile("/tiny")
    v = dry[VARIANTS_KEY]["scale_32b"]
    assert set(v) == set(paper[VARIANTS_KEY]["scale_32b"])
    assert v["06_strictness_sweep"]["MODEL"] == "/tiny"
    assert v["06_strictness_sweep"]["RECIPE"] == "strictness_paper_32b"
    assert "max_steps" in v["06_strictness_sweep"]["RECIPE_FIELDS"]
    assert set(changed_keys(dry, paper)["06_strictness_sweep@scale_32b"]) <= SHRUNK
    path = write_dryrun_params(tmp_path / "dryrun.yaml", "/tiny")
    params = profile_parameters("dryrun", path, variant="scale_32b")
    assert params["06_strictness_sweep"]["PROFILE"] == "dryrun@scale_32b"
    assert params["06_strictness_sweep"]["MODEL"] == "/tiny"


def test_real_engine_dryrun_keeps_vllm_and_changes_only_tp_and_launchers():
    """engine="vllm": the stand-in profile except that the backends stay "vllm", a GRPO
    notebook launches with dryrun_vllm (02's RM keeps dryrun: no vLLM there) and every
    tensor-parallel size is 1 (NOT_ON_CPU says why)."""
    paper = load_profile("paper")
    standin, real = dryrun_profile("/tiny"), dryrun_profile("/tiny", engine="vllm")
    assert real["common"]["BACKEND"] == "vllm" and real["03_lcb_rb"]["JUDGE_BACKEND"] == "vllm"
    assert real["01_crpl_synthesis"]["GENERATOR_BACKEND"] == "vllm"
    for stem in GRPO_NOTEBOOKS + ("11_settings_sweep",):
        assert real[stem]["LAUNCHER"] == VLLM_LAUNCHER_MAP["accelerate"] == "dryrun_vllm"
        assert real[stem]["RECIPE_FIELDS"]["vllm_tensor_parallel_size"] == 1
    assert real["02_reward_model"]["LAUNCHER"] == "dryrun"
    assert real["01_crpl_synthesis"]["SECOND_GENERATOR_TP"] == 1
    v = real[VARIANTS_KEY]["scale_32b"]
    assert v["07_weight_averaging"]["TENSOR_PARALLEL_SIZE"] == 1
    assert v["06_strictness_sweep"]["RECIPE_FIELDS"]["vllm_tensor_parallel_size"] == 1
    for stem, keys in changed_keys(real, paper).items():
        assert set(keys) <= SHRUNK | set(TP_KEYS), stem
    for stem, params in real.items():
        if stem == VARIANTS_KEY:
            continue
        for key, value in params.items():
            if key in BACKEND_KEYS or key in TP_KEYS or key in ("LAUNCHER", "RECIPE_FIELDS"):
                continue
            assert standin[stem][key] == value, (stem, key)
    with pytest.raises(ValueError, match="dry-run engine"):
        dryrun_profile("/tiny", engine="cuda")


def test_dryrun_params_name_what_does_not_run_on_the_real_engine(tmp_path):
    text = write_dryrun_params(tmp_path / "d.yaml", "/tiny", engine="vllm").read_text()
    assert "# engine: vllm" in text and all(f"#   {k}: " in text for k in NOT_ON_CPU)
    assert yaml.safe_load(text)["common"]["BACKEND"] == "vllm"
    report = engine_report("standin")
    assert not report["real_engine"] and set(report["not_real_engine"]) == set(
        engine_report("vllm")["real_engine"]
    )


def test_dryrun_vllm_launcher_refuses_server_mode_and_the_reward_model(tiny_model_dir, tmp_path):
    """launcher dryrun_vllm: GRPO only, colocate only (server mode's weight sync is NCCL);
    the refusals come before anything is written or trained."""
    from recode_lib.process_reward.model import RMConfig
    from recode_lib.training.grpo import load_recipe, replace_fields
    from recode_lib.training.launch import launch, single_process_env
    from recode_lib.training.rm_launch import launch_reward_model

    recipe = load_recipe(
        "cg_grpo_paper", model=str(tiny_model_dir), vllm_mode="server", num_generations=2
    )
    recipe = replace_fields(recipe, per_device_train_batch_size=2)
    with pytest.raises(ValueError, match="NCCL"):
        launch(recipe, [object()] * 4, tmp_path / "run", launcher="dryrun_vllm")
    assert not (tmp_path / "run").exists()
    cfg = RMConfig(backbone=str(tiny_model_dir), output_dir=str(tmp_path / "rm"))
    with pytest.raises(ValueError, match="launcher must be one of"):
        launch_reward_model([], cfg, launcher="dryrun_vllm")
    env = single_process_env({"PATH": "/bin"})
    assert env["PATH"] == "/bin" and env["WORLD_SIZE"] == "1" and int(env["MASTER_PORT"]) > 0


def test_dryrun_follows_a_new_paper_key():
    """Derived, not copied: a key added to paper.yaml appears in the dry run unchanged."""
    paper = load_profile("paper")
    paper["05_codegen_eval"] = {**paper["05_codegen_eval"], "SOME_NEW_KEY": 7}
    assert dryrun_profile("/tiny", paper)["05_codegen_eval"]["SOME_NEW_KEY"] == 7


def test_dryrun_list_counts_keep_valid_members():
    dry = dryrun_profile("/tiny")
    grid = [float(a) for a in dry["07_weight_averaging"]["ALPHAS"].split(",")]
    assert min(grid) < -2 and max(grid) > 2 and {0.0, 1.0} <= set(grid)  # both extrapolations
    saved = [float(a) for a in dry["07_weight_averaging"]["SAVE_ALPHAS"].split(",")]
    assert saved and set(saved) <= set(grid)
    assert dry["06_strictness_sweep"]["KS"] == "1"
    for stem in ("05_codegen_eval", "08_ensemble_passk"):
        ks = [int(k) for k in dry[stem]["PASS_K"].split(",")]
        assert max(ks) <= dry["07_weight_averaging"]["N_SAMPLES"]
    per_setting = dry["11_settings_sweep"]  # its ensembles split the alpha grid's samples
    assert (
        max(int(k) for k in per_setting["PASS_K"].split(","))
        <= per_setting["ALPHA_N_SAMPLES"]
        < 250
    )
    assert {0.0, 1.0} <= {float(a) for a in per_setting["ALPHAS"].split(",")}
    math = dry["10_math_domain"]  # pass@k needs k <= the samples drawn per problem
    assert max(int(k) for k in math["PASS_K"].split(",")) <= math["EVAL_N_SAMPLES"]


@pytest.mark.parametrize("engine", ENGINES)
def test_dryrun_params_file_resolves_for_every_notebook(tmp_path, engine):
    from recode_lib.runner.pipeline import resolve_parameters

    path = write_dryrun_params(tmp_path / "dryrun.yaml", "/tiny", engine=engine)
    spec = load_profile("dryrun", path)
    for nb in NOTEBOOKS:
        assert resolve_parameters(nb, "dryrun", spec)["PROFILE"] == "dryrun"


def test_dryrun_profile_goes_through_the_plan_and_the_staging_list(tmp_path):
    """What a paper run does before its first notebook, on the dry-run profile (CPU): the
    resource plan finds no GPU stage to gate, and `recode stage`'s list names the profile's
    model (the tiny stand-in) and every benchmark it reads, without downloading anything."""
    from recode_lib.runner.pipeline import check_resources, profile_parameters
    from recode_lib.runner.staging import stage_items

    path = write_dryrun_params(tmp_path / "dryrun.yaml", "/tiny")
    params = profile_parameters("dryrun", params_file=path)
    assert check_resources("dryrun", params) is None  # a CPU profile is never gated
    items = stage_items(params, "dryrun")
    models = {i.name for i in items if i.kind == "model"}
    datasets = {i.name for i in items if i.kind == "dataset"}
    assert "/tiny" in models and not any("Qwen" in m or "Llama" in m for m in models)
    paper = {
        i.name for i in stage_items(profile_parameters("paper"), "paper") if i.kind == "dataset"
    }
    assert datasets == paper  # the dry run reads the paper's benchmarks


DRYRUN_ENGINE = os.environ.get("RECODE_DRYRUN_ENGINE", "standin")  # vllm: make test-dryrun-vllm


@pytest.fixture(scope="module")
def dryrun(tiny_model_dir, tmp_path_factory):
    """The whole dry run on the stand-in, or with RECODE_DRYRUN_ENGINE=vllm on the real vLLM
    engine (which must then import: a failure names why, it is not skipped)."""
    if data_dir() is None:
        pytest.skip(
            "the dry run needs the benchmark files: set RECODE_DATA_DIR or place them "
            "at ../shared/data"
        )
    if DRYRUN_ENGINE == "vllm":
        from conftest import vllm_unavailable

        why = vllm_unavailable()
        if why:
            pytest.fail(f"RECODE_DRYRUN_ENGINE=vllm but the real vLLM engine is unavailable: {why}")
    return run_dryrun(tmp_path_factory.mktemp("dryrun"), tiny_model_dir, engine=DRYRUN_ENGINE)


@pytest.mark.notebooks
# the first test's setup runs the whole dry run (~9 min on 2 cores; far longer on the real engine)
@pytest.mark.timeout(2400 if DRYRUN_ENGINE == "standin" else 14400)
@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_paper_profile_dryrun_executes(nb, dryrun):
    run, error = dryrun
    manifest = json.loads((run / "manifest.json").read_text())
    entry = manifest.get(nb.stem)
    if entry is None:
        pytest.fail(f"{nb.stem} did not run; the dry run stopped earlier: {error}")
    assert entry["status"] == "completed", entry.get("error")
    assert (run / nb.stem / "headline.json").is_file()


@pytest.mark.notebooks
def test_dryrun_trains_and_evaluates_the_cross_model_transfer(dryrun, tiny_model_dir):
    """04's paper branch: TRANSFER_MODEL (the 4B stand-in) trained with cg_grpo_transfer_paper
    and 02's RM, beside its outcome-only run; 05 puts both and their start model in the
    headline table, the transfer's gain over its own start and outcome-only rows."""
    run, error = dryrun
    h4_path, h5_path = (
        run / "04_cg_grpo" / "headline.json",
        run / "05_codegen_eval" / "headline.json",
    )
    if not h5_path.is_file():
        pytest.fail(f"05 did not finish; the dry run stopped earlier: {error}")
    h4, h5 = json.loads(h4_path.read_text()), json.loads(h5_path.read_text())
    t = h4["transfer"]
    assert t["model"] == str(tiny_model_dir) and t["recipe"] == "cg_grpo_transfer_paper"
    assert t["reward"] == "gated" and t["steps"] >= 1
    assert t["rm_path"].endswith("02_reward_model/rm") and t["rm_policy"] == str(tiny_model_dir)
    assert {"transfer", "transfer_start", "transfer_outcome_only"} <= set(h4["pass@1"])
    assert t["baseline_reward"] == "outcome_only" and t["baseline_final"].endswith(
        "transfer_outcome_only/final"
    )
    assert h5["policies"][-3:] == ["transfer_start", "transfer", "transfer_outcome_only"]
    assert h5["transfer"]["model"] == t["model"] and h5["transfer"]["final"] == t["final"]
    assert set(h5["table"]["transfer"]) == set(h5["benchmarks"])
    assert h5["relative_gain_over_start"]["transfer"]["reference"] == "transfer_start"
    assert h5["relative_gain_over_outcome_only"]["transfer"]["reference"] == "transfer_outcome_only"


def _dry_headline(dryrun, stem):
    run, error = dryrun
    path = run / stem / "headline.json"
    if not path.is_file():
        pytest.fail(f"{stem} did not finish; the dry run stopped earlier: {error}")
    return json.loads(path.read_text())


@pytest.mark.notebooks
def test_dryrun_headline_measures_what_the_paper_measures(dryrun):
    """05 on the paper's benchmarks: EvalPlus's MBPP (mbppplus_base) in the average, the two
    relative gains with paired CIs over problems (computed: every pass@1 is 0 here, so the
    values are None but the problems are counted), greedy pass@1 beside the sampled one, the
    LiveCodeBench window recorded and applied."""
    run, _ = dryrun
    h5 = _dry_headline(dryrun, "05_codegen_eval")
    assert "mbppplus_base" in h5["benchmarks"] and "mbpp" not in h5["benchmarks"]
    assert set(h5["relative_gain_over_start"]) >= {"gated", "outcome_only", "additive"}
    assert set(h5["relative_gain_over_outcome_only"]) >= {"gated", "additive"}
    for g in h5["relative_gain_over_start"].values():
        assert g["n_problems"] == sum(
            h5["table"]["start"][b]["n_problems"] for b in h5["benchmarks"]
        )
    for cells in h5["table"].values():
        assert all(c["greedy_pass@1"] is not None for c in cells.values())
    assert h5["lcb_start_date"] == load_profile("paper")["05_codegen_eval"]["LCB_START_DATE"]
    lcb = [
        json.loads(x)["problem_id"]
        for x in (run / "05_codegen_eval" / "livecodebench" / "samples.jsonl")
        .read_text()
        .splitlines()
    ]
    assert lcb and all(pid.endswith("-late") for pid in lcb)  # only problems in the window
    h4 = _dry_headline(dryrun, "04_cg_grpo")
    assert h4["seeds"] == [0] and h4["seed_runs"]["gated"] == {"0": "gated"}
    used = h4["proc_scale_used"]  # paper: PROC_SCALE start; the untrained RM falls back
    assert used["mode"] == "start" and used["used"] == "sigmoid" and "untrained" in used["fallback"]


@pytest.mark.notebooks
def test_dryrun_refuses_the_api_row_without_a_key_and_says_so(dryrun):
    """05's GPT-4-Turbo row (paper: API_MODEL gpt-4-turbo) without $OPENAI_API_KEY and
    $OPENAI_BASE_URL: not run, the reason naming both in headline.json and headline.csv; the
    other rows are unchanged."""
    run, _ = dryrun
    h5 = _dry_headline(dryrun, "05_codegen_eval")
    model = load_profile("paper")["05_codegen_eval"]["API_MODEL"]
    rec = h5["api_row"]
    assert rec["model"] == model and rec["base_url"] is None
    assert rec["status"].startswith("not run: OPENAI_API_KEY, OPENAI_BASE_URL unset")
    assert model not in h5["policies"] and h5["not_run"] == {model: rec["status"]}
    rows = (run / "05_codegen_eval" / "headline.csv").read_text()
    assert f"{model},{rec['status']}" in rows.replace('"', "")


@pytest.mark.notebooks
def test_dryrun_11_records_the_recipe_fields_its_parameters_override(dryrun):
    """11's MAX_TOOL_CALLS 4 / MAX_TURNS 5 against agentic_paper's 8 / 8: recorded, not silent."""
    h11 = _dry_headline(dryrun, "11_settings_sweep")
    got = {
        (r["recipe"], r["parameter"]): (r["recipe_value"], r["value"])
        for r in h11["overridden_recipe_fields"]
    }
    assert got[("agentic_paper", "MAX_TOOL_CALLS")] == (8, 4)
    assert got[("agentic_paper", "MAX_TURNS")] == (8, 5)


@pytest.mark.notebooks
def test_dryrun_judges_fall_back_without_network_and_say_so(dryrun):
    h3 = _dry_headline(dryrun, "03_lcb_rb")
    judges = h3["judges"]
    paper = load_profile("paper")["03_lcb_rb"]
    assert judges["consistency"]["requested"] == paper["CONSISTENCY_JUDGE_MODEL"]
    assert judges["consistency"]["used"] != paper["CONSISTENCY_JUDGE_MODEL"]
    assert "JUDGE_BASE_URL is empty" in judges["consistency"]["fallback"] and h3["judge_fallback"]
    assert any(r.startswith("api:") and j["fallback"] for r, j in judges.items())
    assert any(r.startswith("rm:run:") for r in judges)
    assert h3["tie_rule"]["headline"] == "half" and "reward-bench" in h3["tie_rule"]["anchor"]
    assert h3["accuracy_headline"] == h3["accuracy_ties_half"]
    if h3["accuracy"]:
        assert set(h3["accuracy_ties_half"]) == set(h3["accuracy"])
        assert all(h3["accuracy_ties_half"][m] >= h3["accuracy"][m] for m in h3["accuracy"])


@pytest.mark.notebooks
def test_dryrun_math_and_crpl_record_the_papers_measures(dryrun):
    h10 = _dry_headline(dryrun, "10_math_domain")
    assert set(h10["relative_gain_over_outcome_only"]) == {"math_gated"}
    g = h10["relative_gain_over_outcome_only"]["math_gated"]
    assert g["reference"] == "math_outcome_only" and g["n_problems"] == h10["n_eval"]
    assert h10["paper_gain"] == pytest.approx(0.074) and set(h10["truncated"]) == set(h10["pass@1"])
    h1 = _dry_headline(dryrun, "01_crpl_synthesis")
    paper = load_profile("paper")
    assert h1["source"] == paper["01_crpl_synthesis"]["SOURCE"] == paper["04_cg_grpo"]["BENCHMARK"]
    assert set(paper["05_codegen_eval"]["BENCHMARKS"].split(",")) <= set(h1["held_out_benchmarks"])


GRPO_NOTEBOOKS = ("04_cg_grpo", "06_strictness_sweep", "09_repair", "10_math_domain")


@pytest.mark.parametrize("stem", GRPO_NOTEBOOKS)
def test_paper_counts_fill_one_grpo_step(stem):
    """TRL drops an incomplete generation batch: fewer training problems than one step takes
    train 0 steps and save the start model as final/ (found by the dry run)."""
    from recode_lib.training.grpo import load_recipe, prompts_per_step
    from recode_lib.training.recipe_check import recipe_fields

    p = load_profile("paper")[stem]
    recipe = load_recipe(p["RECIPE"], **recipe_fields(p.get("RECIPE_FIELDS")))
    if p["N_TRAIN"]:  # 0: every problem of the benchmark
        assert p["N_TRAIN"] >= prompts_per_step(recipe, p["NUM_PROCESSES"])


def test_too_few_problems_for_one_step_raise(tmp_path):
    from recode_lib.training.grpo import check_enough_problems, load_recipe, prompts_per_step
    from recode_lib.training.launch import launch

    recipe = load_recipe("cg_grpo_paper", num_generations=2, per_device_train_batch_size=2)
    assert prompts_per_step(recipe, 1) == 4 and prompts_per_step(recipe, 8) == 32
    check_enough_problems(recipe, 4, 1)
    with pytest.raises(ValueError, match="0 steps"):
        launch(recipe, [object()] * 3, tmp_path / "run", launcher="dryrun")
    assert not (tmp_path / "run").exists()


def test_launch_configs_load_and_validate(tmp_path):
    from recode_lib.training.launch_configs import (
        LaunchConfigError,
        accelerate_command,
        check_launch_configs,
        entry_point_command,
    )

    rep = check_launch_configs(num_processes=8, bf16=True, gradient_accumulation_steps=4)
    assert rep["accelerate"]["distributed_type"] == "DEEPSPEED"
    assert rep["deepspeed"]["zero_optimization"]["stage"] == 3
    assert Path(rep["deepspeed_file"]).is_file()
    cmd = accelerate_command("r.yaml", "out", "p.jsonl", num_processes=8)
    assert cmd[:2] == ["accelerate", "launch"] and cmd[cmd.index("--num_processes") + 1] == "8"
    assert cmd[cmd.index("-m") + 1] == "recode_lib.cli.grpo"
    assert entry_point_command(cmd, "py")[:3] == ["py", "-m", "recode_lib.cli.grpo"]
    ds = json.loads((PROJECT_ROOT / "configs/deepspeed/zero3.json").read_text())
    ds["zero_optimization"]["stage3_gather_16bit_weights_on_model_save"] = False
    (tmp_path / "ds.json").write_text(json.dumps(ds))
    acc = yaml.safe_load((PROJECT_ROOT / "configs/accelerate/zero3.yaml").read_text())
    acc["deepspeed_config"]["deepspeed_config_file"] = str(tmp_path / "ds.json")
    (tmp_path / "acc.yaml").write_text(yaml.safe_dump(acc))
    with pytest.raises(LaunchConfigError, match="16bit"):
        check_launch_configs(tmp_path / "acc.yaml")
    ds["zero_optimization"]["stage3_gather_16bit_weights_on_model_save"] = True
    ds["zero_optimization"]["stage3_max_live_parameters"] = "auto"  # not filled by HF
    (tmp_path / "ds.json").write_text(json.dumps(ds))
    with pytest.raises(LaunchConfigError, match="auto"):
        check_launch_configs(tmp_path / "acc.yaml")
    acc["deepspeed_config"]["deepspeed_config_file"] = "configs/deepspeed/typo.json"
    (tmp_path / "acc.yaml").write_text(yaml.safe_dump(acc))
    with pytest.raises(LaunchConfigError, match="does not exist"):
        check_launch_configs(tmp_path / "acc.yaml")


@pytest.mark.parametrize(
    "recipe",
    ["cg_grpo_paper", "cg_grpo_transfer_paper", "strictness_paper", "math_paper", "repair_paper"],
)
def test_paper_recipe_builds_its_grpo_config_with_vllm_on(recipe, tmp_path):
    """Every paper key reaches GRPOConfig; on CPU only use_cpu and bf16 differ."""
    from recode_lib.training.grpo import load_recipe
    from recode_lib.training.launch import check_grpo_config

    r = load_recipe(recipe)
    args = check_grpo_config(r, tmp_path)
    assert args.use_vllm is True and args.vllm_mode == r.vllm_mode
    assert args.gradient_checkpointing == r.gradient_checkpointing is True
    assert list(args.report_to) == list(r.report_to)
    assert args.max_completion_length == r.max_completion_length
    assert args.gradient_accumulation_steps == r.gradient_accumulation_steps


def test_vllm_standin_runs_the_vllm_request_path(tiny_model_dir):
    from recode_lib.generation import SamplingConfig, get_generator
    from recode_lib.generation.vllm_backend import sampling_params_kwargs
    from recode_lib.generation.vllm_standin import SAMPLING_KEYWORDS, StandinError, StandinLLM

    assert set(sampling_params_kwargs(SamplingConfig(), 0)) <= SAMPLING_KEYWORDS
    gen = get_generator("vllm_standin", str(tiny_model_dir), tensor_parallel_size=2)
    assert gen.llm_kwargs()["tensor_parallel_size"] == 2
    msgs = [{"role": "user", "content": "write f"}]
    outs = gen.generate([msgs, msgs], SamplingConfig(temperature=0.8, n=2, max_new_tokens=5))
    assert [len(o) for o in outs] == [2, 2]
    assert all(0 < c.n_tokens <= 5 or c.finish_reason == "stop" for o in outs for c in o)
    again = get_generator("vllm_standin", str(tiny_model_dir)).generate(
        [msgs], SamplingConfig(temperature=0.8, n=2, max_new_tokens=5)
    )
    assert [c.text for c in again[0]] == [c.text for c in outs[0]]  # per-sample seeds
    with pytest.raises(StandinError, match="gpu_memory_utilisation"):
        StandinLLM(str(tiny_model_dir), gpu_memory_utilisation=0.3)
    with pytest.raises(StandinError, match="max_new_tokens"):
        StandinLLM(str(tiny_model_dir)).generate(
            [{"prompt_token_ids": [1]}], [{"n": 1, "max_new_tokens": 3}]
        )


def test_paper_reward_model_settings_train(tiny_model_dir, tmp_path):
    """The random model writes no usable traces, so in the notebook dry run 02 saves an
    untrained RM (through the dry-run launcher's entry point); here the paper's 02 settings
    (MAX_LENGTH, gradient checkpointing, SCORE_BATCH_SIZE, the accelerate launcher as its CPU
    dry run over NUM_PROCESSES; CPU: use_cpu/bf16 only) train and score on hand-made pairs."""
    from recode_lib.process_reward.model import ProcessRewardScorer, RMConfig, pairwise_accuracy
    from recode_lib.training.rm_launch import launch_reward_model

    p = load_profile("paper")["02_reward_model"]
    pairs = [
        {
            "id": f"p{i}",
            "prompt": f"Write add #{i}.",
            "pair_type": "strong_contrast",
            "chosen": "Add a and b, then return the sum.",
            "rejected": "Return a.",
        }
        for i in range(4)
    ]
    cfg = RMConfig(
        backbone=str(tiny_model_dir),
        output_dir=str(tmp_path / "rm"),
        max_length=p["MAX_LENGTH"],
        learning_rate=p["LEARNING_RATE"],
        num_train_epochs=p["EPOCHS"],
        max_steps=1,
        per_device_train_batch_size=p["BATCH_SIZE"],
        gradient_accumulation_steps=1,
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=p["GRADIENT_CHECKPOINTING"],
        seed=0,
    )
    info = launch_reward_model(
        pairs,
        cfg,
        launcher=LAUNCHER_MAP[p["LAUNCHER"]],
        num_processes=p["NUM_PROCESSES"],
        save_steps=p["SAVE_STEPS"],
        log=lambda *_: None,
    )
    assert info["n_train_used"] == 4 and not info.get("untrained")
    acc = pairwise_accuracy(
        ProcessRewardScorer(tmp_path / "rm", batch_size=p["SCORE_BATCH_SIZE"]), pairs
    )
    assert acc["n"] == 4 and 0.0 <= acc["overall"] <= 1.0


def test_paper_recipe_server_mode_config(tmp_path):
    """docs/scale_out.md's second launch (`--set vllm_mode=server`, `trl vllm-serve` on its own
    GPU)."""
    from recode_lib.training.grpo import load_recipe
    from recode_lib.training.launch import check_grpo_config

    args = check_grpo_config(load_recipe("cg_grpo_paper", vllm_mode="server"), tmp_path)
    assert args.use_vllm is True and args.vllm_mode == "server"


def test_train_refuses_a_run_of_zero_steps(tiny_model_dir, tmp_path):
    from recode_lib.data import load_benchmark
    from recode_lib.training.grpo import load_recipe, train

    recipe = load_recipe(
        "cg_grpo_smoke",
        model=str(tiny_model_dir),
        rewards=[{"name": "format"}],
        max_steps=1,
        num_generations=2,
        per_device_train_batch_size=4,
        max_completion_length=4,
        save_steps=100,
    )
    with pytest.raises(ValueError, match="TRL would train 0 steps"):
        train(recipe, load_benchmark("microbench", limit=1), tmp_path / "run")
    assert not (tmp_path / "run" / "final").exists()
