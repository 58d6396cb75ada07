"""The library calls notebooks orchestrate with: parameter lists, the train/held-out split, the
evaluation spec (code and math through the run guard), variant training, RM reuse, endpoint
choice, run statistics, LCB-RB scoring over datasets and rebuilding every figure."""

from __future__ import annotations

import json
import os

import pytest

from recode_lib.jsonl import write_json_atomic, write_jsonl_atomic


# --- parameters and data --------------------------------------------------------------------

def test_parse_list_splits_casts_and_names_a_bad_item():
    from recode_lib.pipeline import parse_list

    assert parse_list(" gated, additive ,,") == ["gated", "additive"]
    assert parse_list("1,2", int) == [1, 2] and parse_list(3, int) == [3]
    assert parse_list(["a", " b"]) == ["a", "b"] and parse_list("") == []
    with pytest.raises(ValueError, match="'x' is not a valid int"):
        parse_list("1,x", int)


def test_train_eval_split_is_disjoint_and_names_an_empty_side():
    from recode_lib.data.split import train_eval_split

    train, held = train_eval_split("microbench", 2, 3)
    assert len(train) == 2 and len(held) == 3
    assert not {p.id for p in train} & {p.id for p in held}
    train2, held2 = train_eval_split("microbench", 2, 1, eval_benchmark="microbench")
    assert [p.id for p in held2] == [train[0].id]           # another benchmark: its first n_eval
    with pytest.raises(ValueError, match="no held-out problems.*n_eval=0"):
        train_eval_split("microbench", 2, 0)
    with pytest.raises(ValueError, match="no training and held-out problems"):
        train_eval_split("microbench", 0, 2, require_train=True)


# --- the evaluation spec ----------------------------------------------------------------------

def test_eval_spec_backend_options_and_sampling():
    from recode_lib.evaluation.spec import EvalSpec

    spec = EvalSpec(temperature=0.8, n=4, k=(2, 1, 2), batch_size=3)
    assert spec.k == (1, 2) and spec.sampling().n == 4 and spec.sampling().temperature == 0.8
    assert spec.generator_kwargs() == {"batch_size": 3}
    assert spec.replace(backend="vllm", tensor_parallel_size=2).generator_kwargs() == \
        {"tensor_parallel_size": 2}
    assert set(spec.replace(backend="openai").generator_kwargs()) == {"base_url", "concurrency"}
    with pytest.raises(ValueError, match="backend"):
        EvalSpec(backend="tgi")
    with pytest.raises(ValueError, match="top_p"):
        EvalSpec(top_p=0)


def test_call_samples_keeps_problem_order_and_names_what_is_missing(tmp_path):
    from types import SimpleNamespace

    from recode_lib.evaluation.spec import call_samples

    write_jsonl_atomic(tmp_path / "samples.jsonl", [{"id": i} for i in ("b#0", "a#0", "a#1", "c#0")])
    probs = [SimpleNamespace(id="a"), SimpleNamespace(id="b")]
    assert [r["id"] for r in call_samples(tmp_path, probs, 1)] == ["a#0", "b#0"]
    with pytest.raises(KeyError, match="b#1"):
        call_samples(tmp_path, probs, 2)


def test_math_evaluation_goes_through_the_run_guard(tiny_model_dir, tmp_path):
    """A model retrained into the same folder must not reuse the old generations (issue 13)."""
    import shutil

    from recode_lib.data.schema import Problem
    from recode_lib.evaluation.spec import EvalSpec

    model = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model)
    probs = [Problem(id="m/1", source="m", prompt="What is 1+1?", answer="2",
                     tests={"kind": "script", "script": "pass"})]
    spec = EvalSpec(max_new_tokens=4, batch_size=1, progress=False)
    out = tmp_path / "eval"
    s = spec.evaluate_math(model, probs, out)
    assert s["n_samples"] == 1 and 0.0 <= s["pass@1"] <= 1.0
    assert json.loads((out / "run.json").read_text())["model_stamp"]
    assert spec.evaluate_math(model, probs, out)["n_samples"] == 1       # same model: fine
    weights = next(model.glob("*.safetensors"))
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    with pytest.raises(ValueError, match="model_stamp"):                  # "retrained" in place
        spec.evaluate_math(model, probs, out)
    spec.replace(on_config_change="set_aside").evaluate_math(model, probs, out)
    assert (tmp_path / "eval.stale-1" / "generations.jsonl").is_file()


# --- training -----------------------------------------------------------------------------------

def test_recipe_overrides_map_notebook_parameters():
    from recode_lib.training.launch import recipe_overrides, reward_variants

    params = {"MODEL": "m", "BATCH_SIZE": 8, "CPU_THREADS": 0, "WORKERS": 2, "OTHER": 1}
    assert recipe_overrides(params) == {"model": "m", "per_device_train_batch_size": 8,
                                        "cpu_threads": None, "sandbox_workers": 2}
    assert reward_variants(["gated"]) == {"gated": {"rewards": [{"name": "gated"}]}}


def test_reward_model_options_go_only_to_rewards_that_read_the_reward_model():
    from recode_lib.training.launch import reward_variants

    opts = {"proc_center": 1.5, "proc_temperature": 0.4}
    v = reward_variants(["gated", "additive", "outcome_only"], opts)
    assert v["gated"]["rewards"] == [{"name": "gated", **opts}]
    assert v["additive"]["rewards"] == [{"name": "additive", **opts}]
    assert v["outcome_only"]["rewards"] == [{"name": "outcome_only"}]   # takes no proc_* option


def test_train_variants_checks_every_recipe_before_training(tmp_path):
    from recode_lib.training.launch import train_variants

    variants = {"plain": {"rewards": [{"name": "outcome_only"}]},
                "gated": {"rewards": [{"name": "gated"}]}}
    with pytest.raises(FileNotFoundError, match=r"\['gated'\] need one"):
        train_variants("cg_grpo_smoke", variants, [], tmp_path, rm_path=str(tmp_path / "no_rm"))
    assert not (tmp_path / "plain").exists()          # nothing trained before the check failed
    with pytest.raises(ValueError, match="num_generations"):
        train_variants("cg_grpo_smoke", {"x": {"per_device_train_batch_size": 3}}, [], tmp_path)


def test_reward_model_is_reused_only_for_the_same_pairs_and_config(tiny_model_dir, tmp_path):
    import dataclasses

    from recode_lib.process_reward.model import RMConfig, train_or_reuse

    cfg = RMConfig(backbone=str(tiny_model_dir), output_dir=str(tmp_path / "rm"))
    first = train_or_reuse([], cfg, log=lambda *_: None)        # no pairs: saved untrained
    assert not first["reused"] and first["untrained"] and (tmp_path / "rm_train.json").is_file()
    assert train_or_reuse([], cfg, log=lambda *_: None)["reused"]
    assert not train_or_reuse([], cfg, retrain=True, log=lambda *_: None)["reused"]
    other = dataclasses.replace(cfg, learning_rate=1e-3)
    assert not train_or_reuse([], other, log=lambda *_: None)["reused"]


# --- weights ------------------------------------------------------------------------------------

def test_choose_endpoints_takes_the_sweep_and_its_problems(tmp_path):
    from recode_lib.data import load_benchmark
    from recode_lib.weights.endpoints import choose_endpoints, sweep_eval_problems

    sweep = tmp_path / "06"
    for run in ("k1", "k3", "kinf"):
        (sweep / run / "final").mkdir(parents=True)
        (sweep / run / "final" / ".complete").write_text("")
    ends = choose_endpoints("sweep", sweep, model="m", evaluated=[], out_dir=tmp_path / "ft",
                            finetune_source="microbench")
    assert (ends.source, ends.low.parent.name, ends.high.parent.name) == ("sweep", "k1", "kinf")
    with pytest.raises(ValueError, match="'sweep' or 'finetune'"):
        choose_endpoints("merge", sweep, model="m", evaluated=[], out_dir=tmp_path,
                         finetune_source="microbench")
    assert sweep_eval_problems(sweep) is None                          # no frontier.json yet
    ids = [p.id for p in load_benchmark("microbench", limit=3)]
    write_json_atomic(sweep / "frontier.json", {"rows": [], "eval_problems": ids[1:],
                                                "eval_benchmark": "microbench"})
    bench, probs = sweep_eval_problems(sweep, limit=1)
    assert bench == "microbench" and [p.id for p in probs] == ids[1:2]


# --- analysis ------------------------------------------------------------------------------------

def test_train_stats_summarise_a_run(tmp_path):
    from recode_lib.analysis.reward_curves import train_stats

    write_jsonl_atomic(tmp_path / "metrics.jsonl", [
        {"step": s, "reward": 0.1 * s, "gated/out": 0.5, "other/out": 9, "time/step_s": 10.0 * s}
        for s in (1, 2, 3)])
    st = train_stats(tmp_path, "gated")
    assert st["steps"] == 3 and st["last"] == {"reward": pytest.approx(0.3), "gated/out": 0.5}
    assert st["s_per_step"] == pytest.approx(25.0)                     # warm-up step left out
    assert train_stats(tmp_path / "none", "gated")["steps"] == 0


def test_evaluate_datasets_tags_rows_and_skips_empty_sets():
    from recode_lib.process_reward.lcbrb.scoring import evaluate_datasets, length_method

    pairs = [{"prompt": "p", "chosen": "long trace", "rejected": "short"}] * 3
    rows = evaluate_datasets({"a": pairs, "empty": []}, {"longer": length_method("longer")},
                             n_boot=10, log=None)
    assert {r["dataset"] for r in rows} == {"a"} and rows[0]["accuracy"] == 1.0


def test_rebuild_all_makes_what_exists_and_skips_the_rest(tmp_path):
    from recode_lib.analysis import frontier as F
    from recode_lib.analysis.plots import rebuild_all

    empty = rebuild_all(tmp_path / "nothing", out_dir=tmp_path / "f0")
    assert not empty["made"] and set(empty["skipped"]) == {
        "eval_outcomes", "headline", "sweep_frontier", "frontier", "outcome_classes",
        "ensemble_passk", "setting_frontiers", "reward_curves", "rm_accuracy", "repair"}
    run = tmp_path / "run"
    samples = {a: [{"problem_id": "p", "sample": 0, "outcome": o}]
               for a, o in ((0.0, "correct"), (1.0, "optimization_failure"))}
    F.write_frontier(run / "07_weight_averaging", samples)
    built = rebuild_all(run, out_dir=tmp_path / "figs")
    assert set(built["made"]) == {"frontier", "outcome_classes"}
    assert all(os.path.isfile(p) for files in built["made"].values() for p in files)
    assert set(built["made"]) | set(built["skipped"]) == set(empty["skipped"])


def test_accelerate_launch_runs_the_cli_module_and_the_alias_works(tmp_path, monkeypatch):
    import subprocess
    import sys
    from types import SimpleNamespace

    from recode_lib.data import load_benchmark
    from recode_lib.training.grpo import load_recipe
    from recode_lib.training.launch import launch

    seen = []
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: seen.append(cmd) or
                        SimpleNamespace(returncode=3))
    with pytest.raises(RuntimeError, match="exit 3"):
        launch(load_recipe("cg_grpo_smoke"), load_benchmark("microbench", limit=4), tmp_path / "r",
               launcher="accelerate", num_processes=2)
    cmd = seen[0]
    assert cmd[:2] == ["accelerate", "launch"] and cmd[cmd.index("-m") + 1] == "recode_lib.cli.grpo"
    assert (tmp_path / "r" / "recipe.yaml").is_file()
    monkeypatch.undo()
    for module in ("recode_lib.cli.grpo", "recode_lib.grpo_launch"):
        out = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0 and "--recipe" in out.stdout, out.stderr
