"""`recode stage`: the paper profile's models and datasets with sizes and license gates, the
offline path (HF_HUB_OFFLINE, a connection error) and `--list`, with the network replaced."""

from __future__ import annotations

import json
from collections import namedtuple
from pathlib import Path

import huggingface_hub
import pytest
import yaml

from recode_lib.cli import main
from recode_lib.runner import staging
from recode_lib.runner.pipeline import profile_parameters

POLICY, GENERATOR, LLAMA = (
    "Qwen/Qwen2.5-Coder-7B-Instruct",
    "Qwen/Qwen2.5-Coder-32B-Instruct",
    "meta-llama/Llama-3.1-70B-Instruct",
)


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("RECODE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RECODE_DATA_DIR", str(tmp_path / "data_default"))
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def paper_items():
    return {i.name: i for i in staging.stage_items(profile_parameters("paper"), "paper")}


def no_network(*args, **kwargs):
    import requests

    raise requests.ConnectionError("Failed to resolve 'huggingface.co' (no network here)")


def test_the_paper_profile_names_its_models_with_sizes_and_gates(paper_items):
    policy, gen, llama = paper_items[POLICY], paper_items[GENERATOR], paper_items[LLAMA]
    # weights x dtype from the plan's architectures (bf16)
    assert policy.size_bytes == pytest.approx(2 * 7.6e9, rel=0.01)
    assert gen.size_bytes == pytest.approx(2 * 32.8e9, rel=0.01)
    assert llama.size_bytes == pytest.approx(2 * 70.6e9, rel=0.01)
    assert {"00_data_and_models", "02_reward_model", "04_cg_grpo"} <= set(policy.used_by)
    assert set(gen.used_by) == {"01_crpl_synthesis", "03_lcb_rb"}
    assert llama.gated and not policy.gated and not gen.gated
    assert "huggingface.co/meta-llama/Llama-3.1-70B-Instruct" in llama.gate
    assert "HF_TOKEN" in llama.gate and "Apache-2.0" in policy.gate
    for name in ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-Math-7B", "Qwen/Qwen3-4B-Instruct-2507"):
        assert paper_items[name].fetch.kind == "hf_model"


def test_the_paper_profile_names_its_datasets_with_their_sources(paper_items):
    assert paper_items["humanevalplus"].fetch.kind == "url"
    assert paper_items["humanevalplus"].size_bytes == 925_932
    lcb = paper_items["livecodebench"]
    assert lcb.fetch.source == "livecodebench/code_generation_lite" and lcb.size_bytes > 3e9
    assert paper_items["codecontests_plus"].fetch.allow == ["ccplus_1x/*"]
    assert paper_items["math_train"].fetch.source == "DigitalLearningGmbH/MATH-lighteval"
    assert paper_items["microbench"].fetch.kind == "none"  # in the repository
    # the headline table's MBPP is EvalPlus's (mbppplus_base, MBPP+'s file); 03's classifier
    # baselines are staged models
    assert {"aime24", "mbppplus", "mbppplus_base", "bigcodebench", "humaneval"} <= set(paper_items)
    assert "Skywork/Skywork-Reward-Llama-3.1-8B-v0.2" in paper_items
    assert not any(name.startswith("run:") for name in paper_items)


def test_list_prints_everything_and_never_downloads(monkeypatch, capsys):
    def forbidden(*a, **k):
        raise AssertionError("--list downloaded something")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", forbidden)
    monkeypatch.setattr(staging.urllib.request, "urlretrieve", forbidden)
    assert main(["stage", "--profile", "paper", "--list"]) == 0
    out = capsys.readouterr().out
    for name in (POLICY, GENERATOR, LLAMA, "livecodebench", "codecontests_plus"):
        assert name in out
    assert "15.2 GB" in out and "65.5 GB" in out and "141.1 GB" in out
    assert "GATED" in out and "https://huggingface.co/meta-llama/Llama-3.1-70B-Instruct" in out


@pytest.mark.parametrize("how", ["HF_HUB_OFFLINE", "connection error"])
def test_offline_prints_the_list_and_exits_non_zero_naming_what_is_missing(
    how, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(huggingface_hub, "snapshot_download", no_network)
    monkeypatch.setattr(staging.urllib.request, "urlretrieve", no_network)
    if how == "HF_HUB_OFFLINE":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    rc = main(["stage", "--profile", "paper", "--to", str(tmp_path / "stage"), "--ignore-space"])
    cap = capsys.readouterr()
    assert rc != 0
    assert POLICY in cap.out and "141.1 GB" in cap.out  # the list came first
    assert "could not fetch" in cap.err
    for name in (POLICY, GENERATOR, LLAMA, "livecodebench", "humanevalplus"):
        assert f"  {name}: " in cap.err
    assert ("HF_HUB_OFFLINE=1 is set" if how == "HF_HUB_OFFLINE" else "no network") in cap.err
    assert "machine with internet" in cap.err


shutil_usage = namedtuple("usage", "total used free")


def test_too_little_disk_is_refused_before_any_download(tmp_path, monkeypatch, capsys):
    fetched = []
    monkeypatch.setattr(
        huggingface_hub, "snapshot_download", lambda *a, **k: fetched.append(a) or no_network()
    )
    monkeypatch.setattr(
        staging.shutil,
        "disk_usage",
        lambda p: shutil_usage(total=10**12, used=10**12 - 5 * 10**9, free=5 * 10**9),
    )
    rc = main(["stage", "--profile", "paper", "--to", str(tmp_path / "stage")])
    err = capsys.readouterr().err
    assert rc == 2 and not fetched
    assert "not enough disk space" in err and "5 GB free" in err and "--ignore-space" in err
    assert len(err.strip().splitlines()) == 1


def fake_snapshot(repo_id, *, local_dir=None, local_files_only=False, repo_type=None, **kw):
    """What snapshot_download leaves: a model folder, or a dataset's train parquet."""
    if local_files_only:
        raise FileNotFoundError(repo_id)
    folder = Path(local_dir)
    folder.mkdir(parents=True, exist_ok=True)
    if repo_type == "dataset":
        (folder / "data").mkdir(exist_ok=True)
        (folder / "data" / "train-00000-of-00001.parquet").write_bytes(b"PAR1")
    else:
        (folder / "config.json").write_text("{}")
        (folder / "model.safetensors").write_bytes(b"\0")
    return str(folder)


def test_staging_with_to_writes_the_params_file_and_then_works_offline(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot)
    monkeypatch.setattr(
        staging.urllib.request, "urlretrieve", lambda url, dest: Path(dest).write_text(url)
    )
    to = tmp_path / "stage"
    only = f"{POLICY},Qwen/Qwen2.5-Math-7B,humanevalplus,math_train"
    assert main(["stage", "--profile", "paper", "--to", str(to), "--only", only]) == 0
    out = capsys.readouterr().out
    policy_dir = to / "models" / POLICY
    assert (policy_dir / "config.json").is_file()
    assert (to / "data" / "HumanEvalPlus.jsonl.gz").is_file()
    assert "HF_HUB_OFFLINE=1" in out and f"RECODE_DATA_DIR={to / 'data'}" in out
    params_file = to / "paper.staged.yaml"
    assert f"--params {params_file}" in out
    spec = yaml.safe_load(params_file.read_text())
    assert spec["common"]["MODEL"] == str(policy_dir)
    assert spec["10_math_domain"]["MODEL"] == str(to / "models" / "Qwen/Qwen2.5-Math-7B")
    # the pipeline reads it: every notebook's models are the staged folders
    staged = profile_parameters("paper", params_file)
    assert staged["04_cg_grpo"]["MODEL"] == str(policy_dir)
    assert staged["01_crpl_synthesis"]["GENERATOR_MODEL"] == GENERATOR  # not staged here

    # on the offline compute node: everything is here, nothing is fetched, exit 0
    monkeypatch.setattr(huggingface_hub, "snapshot_download", no_network)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["stage", "--profile", "paper", "--to", str(to), "--only", only]) == 0
    assert "already here" in capsys.readouterr().out


def test_only_refuses_a_name_the_profile_does_not_use(capsys):
    assert main(["stage", "--profile", "paper", "--only", "gpt2"]) == 2
    assert "gpt2" in capsys.readouterr().err


def test_a_gated_model_without_access_says_how_to_get_it(tmp_path, monkeypatch):
    class GatedRepoError(Exception):
        pass

    def gated(repo_id, **kw):
        if kw.get("local_files_only"):
            raise FileNotFoundError(repo_id)
        raise GatedRepoError("401 Client Error: access to this model is restricted")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", gated)
    items = [staging.model_item(LLAMA)]
    rep = staging.fetch_items(items, staging.Destination.make(tmp_path), log=None)
    assert "accept the license at https://huggingface.co/" + LLAMA in rep.failed[LLAMA]
    assert rep.offline is None  # a gate is not a network failure
    assert json.dumps(rep.failed)  # plain strings
