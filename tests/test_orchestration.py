"""The library calls notebooks orchestrate with: parameter lists, the train/held-out split, the
evaluation spec (code and math through the run guard), variant training, RM reuse, endpoint
choice, run statistics, LCB-RB scoring over datasets and rebuilding every figure."""

from __future__ import annotations

import json
import os

import pytest

from recode_lib.core.jsonl import write_json_atomic, write_jsonl_atomic

# --- parameters and data --------------------------------------------------------------------


def test_parse_list_splits_casts_and_names_a_bad_item():
    from recode_lib.runner.pipeline import parse_list

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
    assert [p.id for p in held2] == [train[0].id]  # another benchmark: its first n_eval
    with pytest.raises(ValueError, match="no held-out problems.*n_eval=0"):
        train_eval_split("microbench", 2, 0)
    with pytest.raises(ValueError, match="no training and held-out problems"):
        train_eval_split("microbench", 0, 2, require_train=True)


# --- the evaluation spec ----------------------------------------------------------------------


def test_eval_spec_backend_options_and_sampling():
    from recode_lib.evaluation.spec import EvalSpec

    spec = EvalSpec(temperature=0.8, n=4, k=(2, 1, 2), batch_size=3)
    assert spec.k == (1, 2) and spec.sampling().n == 4 and spec.sampling().temperature == 0.8
    assert spec.generator_kwargs() == {"batch_size": 3, "precision": "native"}
    assert spec.replace(backend="vllm", tensor_parallel_size=2).generator_kwargs() == {
        "tensor_parallel_size": 2,
        "data_parallel_size": 0,
    }  # 0: an engine per 2 GPUs
    assert set(spec.replace(backend="openai").generator_kwargs()) == {"base_url", "concurrency"}
    with pytest.raises(ValueError, match="backend"):
        EvalSpec(backend="tgi")
    with pytest.raises(ValueError, match="top_p"):
        EvalSpec(top_p=0)


def test_call_samples_keeps_problem_order_and_names_what_is_missing(tmp_path):
    from types import SimpleNamespace

    from recode_lib.evaluation.spec import call_samples

    write_jsonl_atomic(
        tmp_path / "samples.jsonl", [{"id": i} for i in ("b#0", "a#0", "a#1", "c#0")]
    )
    probs = [SimpleNamespace(id="a"), SimpleNamespace(id="b")]
    assert [r["id"] for r in call_samples(tmp_path, probs, 1)] == ["a#0", "b#0"]
    with pytest.raises(KeyError, match="b#1"):
        call_samples(tmp_path, probs, 2)


def test_math_evaluation_goes_through_the_run_guard(tiny_model_dir, tmp_path):
    """A model retrained into the same folder must not reuse the old generations."""
    import shutil

    from recode_lib.data.schema import Problem
    from recode_lib.evaluation.spec import EvalSpec

    model = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model)
    probs = [
        Problem(
            id="m/1",
            source="m",
            prompt="What is 1+1?",
            answer="2",
            tests={"kind": "script", "script": "pass"},
        )
    ]
    spec = EvalSpec(max_new_tokens=4, batch_size=1, progress=False)
    out = tmp_path / "eval"
    s = spec.evaluate_math(model, probs, out)
    assert s["n_samples"] == 1 and 0.0 <= s["pass@1"] <= 1.0
    assert json.loads((out / "run.json").read_text())["model_stamp"]
    assert spec.evaluate_math(model, probs, out)["n_samples"] == 1  # same model: fine
    weights = next(model.glob("*.safetensors"))
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    with pytest.raises(ValueError, match="model_stamp"):  # "retrained" in place
        spec.evaluate_math(model, probs, out)
    spec.replace(on_config_change="set_aside").evaluate_math(model, probs, out)
    assert (tmp_path / "eval.stale-1" / "generations.jsonl").is_file()


# --- training -----------------------------------------------------------------------------------


def test_recipe_fields_and_the_notebooks_own_fields_are_the_run_fields():
    from recode_lib.training.launch import reward_variants
    from recode_lib.training.recipe_check import recipe_fields

    assert recipe_fields(
        {"per_device_train_batch_size": 8, "cpu_threads": None}, model="m", sandbox_workers=2
    ) == {"model": "m", "per_device_train_batch_size": 8, "cpu_threads": None, "sandbox_workers": 2}
    assert reward_variants(["gated"]) == {"gated": {"rewards": [{"name": "gated"}]}}


def test_reward_model_options_go_only_to_rewards_that_read_the_reward_model():
    from recode_lib.training.launch import reward_variants

    opts = {"proc_center": 1.5, "proc_temperature": 0.4}
    v = reward_variants(["gated", "additive", "outcome_only"], opts)
    assert v["gated"]["rewards"] == [{"name": "gated", **opts}]
    assert v["additive"]["rewards"] == [{"name": "additive", **opts}]
    assert v["outcome_only"]["rewards"] == [{"name": "outcome_only"}]  # takes no proc_* option


def test_train_variants_checks_every_recipe_before_training(tmp_path):
    from recode_lib.training.launch import train_variants

    variants = {
        "plain": {"rewards": [{"name": "outcome_only"}]},
        "gated": {"rewards": [{"name": "gated"}]},
    }
    with pytest.raises(FileNotFoundError, match=r"\['gated'\] need one"):
        train_variants("cg_grpo_smoke", variants, [], tmp_path, rm_path=str(tmp_path / "no_rm"))
    assert not (tmp_path / "plain").exists()  # nothing trained before the check failed
    with pytest.raises(ValueError, match="num_generations"):
        train_variants("cg_grpo_smoke", {"x": {"per_device_train_batch_size": 3}}, [], tmp_path)


def test_slurm_runs_are_submitted_at_once_and_a_failure_is_named(tmp_path, monkeypatch):
    """The Slurm route's independent runs are concurrent sbatch jobs (Slurm spreads them over
    nodes): two fake launches that each wait for the other pass only when both run at once;
    RECODE_SLURM_MAX_JOBS=1 keeps them one after another; a failed run is named after the
    others were delivered."""
    import threading

    from recode_lib.training import launch as L

    variants = {
        "a": {"rewards": [{"name": "outcome_only"}]},
        "b": {"rewards": [{"name": "outcome_only"}]},
    }
    both = threading.Barrier(2, timeout=20)
    lock, running, peak, done = threading.Lock(), [0], [0], []

    def result(out):
        return L.TrainResult(out, out / "final", out / "metrics.jsonl", None, True)

    def together(recipe, problems, out, **kw):
        both.wait()  # BrokenBarrierError when run alone
        done.append(recipe.name)
        return result(out)

    monkeypatch.setattr(L, "launch", together)
    res = L.train_variants("cg_grpo_smoke", variants, [], tmp_path, launcher="slurm", log=None)
    assert sorted(res) == ["a", "b"] and sorted(done) == ["a", "b"]

    def counted(recipe, problems, out, **kw):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            if recipe.name == "b":
                raise RuntimeError("sbatch exited 1")
            return result(out)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(L, "launch", counted)
    with pytest.raises(RuntimeError, match=r"1 of 2 GRPO runs failed: b: RuntimeError: sbatch"):
        L.train_variants("cg_grpo_smoke", variants, [], tmp_path, launcher="slurm", log=None)
    monkeypatch.setenv("RECODE_SLURM_MAX_JOBS", "1")
    peak[0] = 0
    with pytest.raises(RuntimeError):
        L.train_variants("cg_grpo_smoke", variants, [], tmp_path, launcher="slurm", log=None)
    assert peak[0] == 1  # one after another
    assert L.slurm_jobs(21, {}) == 21 and L.slurm_jobs(21, {"RECODE_SLURM_MAX_JOBS": "8"}) == 8
    with pytest.raises(ValueError, match="RECODE_SLURM_MAX_JOBS"):
        L.slurm_jobs(3, {"RECODE_SLURM_MAX_JOBS": "0"})


def test_reward_model_is_reused_only_for_the_same_pairs_and_config(tiny_model_dir, tmp_path):
    import dataclasses

    from recode_lib.process_reward.model import RMConfig, train_or_reuse

    cfg = RMConfig(backbone=str(tiny_model_dir), output_dir=str(tmp_path / "rm"))
    first = train_or_reuse([], cfg, log=lambda *_: None)  # no pairs: saved untrained
    assert not first["reused"] and first["untrained"] and (tmp_path / "rm_train.json").is_file()
    assert train_or_reuse([], cfg, log=lambda *_: None)["reused"]
    assert not train_or_reuse([], cfg, retrain=True, log=lambda *_: None)["reused"]
    other = dataclasses.replace(cfg, learning_rate=1e-3)
    assert not train_or_reuse([], other, log=lambda *_: None)["reused"]


# --- weights ------------------------------------------------------------------------------------


def test_choose_endpoints_takes_the_sweep_and_its_problems(tmp_path):
    from recode_lib.data import load_benchmark
    from recode_lib.orchestration.endpoints import choose_endpoints, sweep_eval_problems

    sweep = tmp_path / "06"
    for run in ("k1", "k3", "kinf"):
        (sweep / run / "final").mkdir(parents=True)
        (sweep / run / "final" / ".complete").write_text("")
    ends = choose_endpoints(
        "sweep",
        sweep,
        model="m",
        evaluated=[],
        out_dir=tmp_path / "ft",
        finetune_source="microbench",
    )
    assert (ends.source, ends.low.parent.name, ends.high.parent.name) == ("sweep", "k1", "kinf")
    with pytest.raises(ValueError, match="'sweep' or 'finetune'"):
        choose_endpoints(
            "merge", sweep, model="m", evaluated=[], out_dir=tmp_path, finetune_source="microbench"
        )
    assert sweep_eval_problems(sweep) is None  # no frontier.json yet
    ids = [p.id for p in load_benchmark("microbench", limit=3)]
    write_json_atomic(
        sweep / "frontier.json",
        {"rows": [], "eval_problems": ids[1:], "eval_benchmark": "microbench"},
    )
    bench, probs = sweep_eval_problems(sweep, limit=1)
    assert bench == "microbench" and [p.id for p in probs] == ids[1:2]


# --- analysis ------------------------------------------------------------------------------------


def test_train_stats_summarise_a_run(tmp_path):
    from recode_lib.analysis.run_tables import train_stats

    write_jsonl_atomic(
        tmp_path / "metrics.jsonl",
        [
            {
                "step": s,
                "reward": 0.1 * s,
                "gated/out": 0.5,
                "other/out": 9,
                "time/step_s": 10.0 * s,
            }
            for s in (1, 2, 3)
        ],
    )
    st = train_stats(tmp_path, "gated")
    assert st["steps"] == 3 and st["last"] == {"reward": pytest.approx(0.3), "gated/out": 0.5}
    assert st["s_per_step"] == pytest.approx(25.0)  # warm-up step left out
    assert train_stats(tmp_path / "none", "gated")["steps"] == 0


def test_evaluate_datasets_tags_rows_and_skips_empty_sets():
    from recode_lib.process_reward.lcbrb.scoring import evaluate_datasets, length_method

    pairs = [{"prompt": "p", "chosen": "long trace", "rejected": "short"}] * 3
    rows = evaluate_datasets(
        {"a": pairs, "empty": []}, {"longer": length_method("longer")}, n_boot=10, log=None
    )
    assert {r["dataset"] for r in rows} == {"a"} and rows[0]["accuracy"] == 1.0


def test_rebuild_all_makes_what_exists_and_skips_the_rest(tmp_path):
    from recode_lib.analysis import frontier as F
    from recode_lib.analysis.plots import rebuild_all

    empty = rebuild_all(tmp_path / "nothing", out_dir=tmp_path / "f0")
    assert not empty["made"] and set(empty["skipped"]) == {
        "eval_outcomes",
        "headline",
        "sweep_frontier",
        "frontier",
        "outcome_classes",
        "ensemble_passk",
        "setting_frontiers",
        "reward_curves",
        "rm_accuracy",
        "repair",
    }
    run = tmp_path / "run"
    samples = {
        a: [{"problem_id": "p", "sample": 0, "outcome": o}]
        for a, o in ((0.0, "correct"), (1.0, "optimization_failure"))
    }
    F.write_frontier(run / "07_weight_averaging", samples)
    built = rebuild_all(run, out_dir=tmp_path / "figs")
    assert set(built["made"]) == {"frontier", "outcome_classes"}
    assert all(os.path.isfile(p) for files in built["made"].values() for p in files)
    assert set(built["made"]) | set(built["skipped"]) == set(empty["skipped"])


def test_accelerate_launch_runs_the_cli_module(tmp_path, monkeypatch):
    import subprocess
    import sys
    from types import SimpleNamespace

    from recode_lib.data import load_benchmark
    from recode_lib.training.grpo import load_recipe
    from recode_lib.training.launch import launch

    seen = []
    monkeypatch.setattr(
        subprocess, "run", lambda cmd, **kw: seen.append(cmd) or SimpleNamespace(returncode=3)
    )
    with pytest.raises(RuntimeError, match="exit 3"):
        launch(
            load_recipe("cg_grpo_smoke"),
            load_benchmark("microbench", limit=4),
            tmp_path / "r",
            launcher="accelerate",
            num_processes=2,
        )
    cmd = seen[0]
    assert cmd[:2] == ["accelerate", "launch"] and cmd[cmd.index("-m") + 1] == "recode_lib.cli.grpo"
    assert (tmp_path / "r" / "recipe.yaml").is_file()
    monkeypatch.undo()
    out = subprocess.run(
        [sys.executable, "-m", "recode_lib.cli.grpo", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and "--recipe" in out.stdout, out.stderr


# --- the orchestration tier: step functions, records, the run-folder layout ---------------------


def _fake_stages(monkeypatch, pass_at_1):
    """strictness_sweep's training and evaluation replaced: train_variants makes each run's
    final/ (with .complete) and records its recipe fields; evaluate_models returns a summary
    whose pass@1 is pass_at_1[run]. Returns the recorded {run: fields}."""
    from types import SimpleNamespace

    from recode_lib.orchestration import sweep as S

    trained = {}

    def train_variants(recipe, variants, problems, out_dir, **kw):
        out = {}
        for run, own in variants.items():
            trained[run] = dict(own)
            final = out_dir / run / "final"
            final.mkdir(parents=True, exist_ok=True)
            (final / ".complete").write_text("")
            out[run] = SimpleNamespace(output_dir=out_dir / run, final_dir=final)
        return out

    def evaluate_models(models, problems, spec, out_root, benchmark=None):
        p = {run: pass_at_1[run] for run in models}
        return {
            run: {
                "pass@1": v,
                "n_problems": 2,
                "n_samples": 1,
                "solved": [],
                "outcomes": {"correct": v, "correctness_failure": 1 - v},
                "tokens": {"mean": 1.0, "truncated_rate": 0.0},
            }
            for run, v in p.items()
        }

    monkeypatch.setattr(S, "train_variants", train_variants)
    monkeypatch.setattr(S, "evaluate_models", evaluate_models)
    return trained


def test_strictness_sweep_trains_every_variant_per_seed_and_reports_gains_beside_the_spread(
    tmp_path, monkeypatch
):
    from types import SimpleNamespace

    from recode_lib.evaluation.spec import EvalSpec
    from recode_lib.orchestration.endpoints import sweep_endpoints, sweep_runs
    from recode_lib.orchestration.records import write_records
    from recode_lib.orchestration.sweep import strictness_sweep

    p1 = {
        "k1_seed0": 0.5,
        "k1_seed1": 0.7,
        "kinf_seed0": 0.2,
        "kinf_seed1": 0.6,
        "partial_discrete_seed0": 0.4,
        "partial_discrete_seed1": 0.4,
    }
    trained = _fake_stages(monkeypatch, p1)
    held = [SimpleNamespace(id="p0"), SimpleNamespace(id="p1")]
    sweep = strictness_sweep(
        "strictness_smoke",
        [1, "inf"],
        [],
        held,
        tmp_path,
        spec=EvalSpec(),
        partial=["discrete"],
        seeds="0,1",
        log=None,
        benchmark="microbench",
    )
    assert trained == {
        "k1_seed0": {"rewards": [{"name": "strict_1"}], "seed": 0},
        "k1_seed1": {"rewards": [{"name": "strict_1"}], "seed": 1},
        "kinf_seed0": {"rewards": [{"name": "strict_inf"}], "seed": 0},
        "kinf_seed1": {"rewards": [{"name": "strict_inf"}], "seed": 1},
        # partial credit averages R_k over the sweep's own finite levels
        "partial_discrete_seed0": {"rewards": [{"name": "partial_discrete", "ks": [1]}], "seed": 0},
        "partial_discrete_seed1": {"rewards": [{"name": "partial_discrete", "ks": [1]}], "seed": 1},
    }
    h = sweep.headline
    assert h["runs"] == ["k1", "kinf"] and h["partial_runs"] == ["partial_discrete"]
    assert h["pass@1"] == pytest.approx({"k1": 0.6, "kinf": 0.4, "partial_discrete": 0.4})
    assert h["seed_std"]["kinf"]["pass@1"] == pytest.approx(0.4 / 2**0.5)
    gain = h["gain_vs_strict"]["k1"]["pass@1"]  # seed by seed: 0.5-0.2, 0.7-0.6
    assert gain["gain"] == pytest.approx(0.2) and gain["per_seed"] == pytest.approx([0.3, 0.1])
    assert gain["seed_std"] == pytest.approx(0.2 / 2**0.5) and gain["n_seeds"] == 2
    assert h["strict_run"] == "kinf" and "kinf" not in h["gain_vs_strict"]
    assert sum(h["outcomes"]["k1"].values()) == pytest.approx(1.0)
    front = json.loads((tmp_path / "frontier.json").read_text())
    assert front["seeds"] == [0, 1] and front["eval_problems"] == ["p0", "p1"]
    assert len(front["rows"]) == 6
    write_records(tmp_path, sweep.metrics, sweep.headline)
    assert json.loads((tmp_path / "headline.json").read_text()) == json.loads(json.dumps(h))
    meta = json.loads((tmp_path / "metrics.json").read_text())
    assert meta["runs"]["k1_seed1"] == {
        "k": "1",
        "seed": 1,
        "variant": "k1",
        "final": str(tmp_path / "k1_seed1" / "final"),
    }
    # 07's endpoints are the first seed's; the other seeds' runs are best-single candidates
    low, high = sweep_endpoints(tmp_path)
    assert (low.parent.name, high.parent.name) == ("k1_seed0", "kinf_seed0")
    assert sorted(sweep_runs(tmp_path, grid=[0.0, 0.5, 1.0])) == [
        "k1_seed1",
        "kinf_seed1",
        "partial_discrete_seed0",
        "partial_discrete_seed1",
    ]


def test_one_seed_keeps_the_single_run_layout_and_no_seed_keeps_the_recipes(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from recode_lib.evaluation.spec import EvalSpec
    from recode_lib.orchestration.sweep import strictness_sweep

    trained = _fake_stages(monkeypatch, {"k1": 0.5, "kinf": 0.25})
    held = [SimpleNamespace(id="p0")]
    one = strictness_sweep(
        "r", [1, "inf"], [], held, tmp_path / "a", spec=EvalSpec(), seeds=[3], log=None
    )
    assert sorted(trained) == ["k1", "kinf"] and trained["k1"]["seed"] == 3
    assert one.headline["pass@1"] == {"k1": 0.5, "kinf": 0.25}
    assert one.headline["gain_vs_strict"]["k1"]["pass@1"] == {
        "gain": 0.25,
        "seed_std": None,
        "per_seed": None,
        "n_seeds": 1,
    }
    trained.clear()
    plain = strictness_sweep(
        "r", [1, "inf"], [], held, tmp_path / "b", spec=EvalSpec(), setting="tool", log=None
    )
    assert trained["k1"] == {"rewards": [{"name": "strict_1"}], "setting": "tool"}  # no seed
    assert plain.metrics["runs"]["k1"] == {"k": "1", "final": str(tmp_path / "b" / "k1" / "final")}
    assert "seeds" not in plain.headline and plain.headline["setting"] == "tool"
    assert json.loads((tmp_path / "b" / "frontier.json").read_text())["setting"] == "tool"


def test_write_records_writes_what_it_is_given_and_refuses_a_non_record(tmp_path):
    from recode_lib.orchestration.records import write_records

    (tmp_path / "metrics.json").write_text('{"old": 1}')
    assert write_records(tmp_path, None, {"a": 1}) == [tmp_path / "headline.json"]
    assert json.loads((tmp_path / "metrics.json").read_text()) == {"old": 1}  # left alone
    with pytest.raises(TypeError, match="metrics.json"):
        write_records(tmp_path, [1, 2], None)


def test_the_run_folder_layout_names_every_notebook_and_nothing_else():
    from recode_lib.core.run_files import STEPS, calibrated_path, step_dir
    from recode_lib.runner.pipeline import list_notebooks

    assert list(STEPS) == [nb.stem for nb in list_notebooks()]
    with pytest.raises(ValueError, match="06_sweep"):
        step_dir("runs/x", "06_sweep")
    assert calibrated_path("lap").parts[-2:] == ("00_data_and_models", "calibrated.jsonl")


def test_notebooks_06_to_08_and_11_call_the_same_step_functions_and_build_no_record_by_hand():
    import inspect

    import nbformat

    from recode_lib.orchestration import settings
    from recode_lib.runner.pipeline import notebooks_dir

    def code(stem):
        nb = nbformat.read(notebooks_dir() / f"{stem}.ipynb", as_version=4)
        return "\n".join(c.source for c in nb.cells if c.cell_type == "code")

    calls = {
        "06_strictness_sweep": "strictness_sweep(",
        "07_weight_averaging": "alpha_grid(",
        "08_ensemble_passk": "ensemble_step(",
    }
    for stem, call in calls.items():
        src = code(stem)
        assert call in src and "write_records(" in src, stem
        assert "write_json_atomic" not in src and "headline.json" not in src, stem
    src11 = code("11_settings_sweep")
    assert "write_records(" in src11 and "write_json_atomic" not in src11
    body = inspect.getsource(settings)  # 11's steps are 06-08's, given the setting
    assert all(f in body for f in ("strictness_sweep(", "alpha_grid(", "ensemble_step("))
