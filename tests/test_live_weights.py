"""recode_lib.weights.live / .sweep: theta_alpha in memory, pushed into one live model."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file

from recode_lib.weights import live as L
from recode_lib.weights.merge import MergeConfig, MergeError, alpha_dirname, merge_grid


@pytest.fixture(scope="module")
def ends(perturbed_checkpoint, tmp_path_factory):
    root = tmp_path_factory.mktemp("ends")
    return (
        perturbed_checkpoint(root / "low", 1, torch.bfloat16, complete=False),
        perturbed_checkpoint(root / "high", 2, torch.bfloat16, complete=False),
    )


def test_theta_equals_merge_grid_output_bit_for_bit(ends, tmp_path):
    low, high = ends
    alphas = (-2.5, 0.3, 3.5)
    merged = merge_grid(
        MergeConfig(str(low), str(high), alphas, str(tmp_path / "m"), progress=False)
    )
    pair = L.EndpointPair.load(low, high)
    for a in alphas:
        want = load_file(merged[a] / "model.safetensors")
        got = dict(pair.theta(a))
        assert set(got) == set(want)
        for k in want:
            assert got[k].dtype == want[k].dtype
            assert torch.equal(got[k], want[k]), (a, k)


def test_metadata_announces_what_theta_streams(ends):
    pair = L.EndpointPair.load(*ends)
    meta = pair.metadata()
    streamed = list(pair.theta(0.5))
    assert [m[0] for m in meta] == [n for n, _ in streamed]
    assert all(m[1] == "bfloat16" for m in meta)
    assert [m[2] for m in meta] == [list(t.shape) for _, t in streamed]
    assert "lm_head.weight" not in [m[0] for m in meta]  # tied: not in the checkpoint


def test_incompatible_endpoints_raise_like_merge(ends, tmp_path):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    low, _ = ends
    cfg = Qwen2Config.from_pretrained(low)
    cfg.tie_word_embeddings = False
    untied = tmp_path / "untied"
    Qwen2ForCausalLM(cfg).to(torch.bfloat16).save_pretrained(untied)
    with pytest.raises(MergeError, match="tied embeddings"):
        L.EndpointPair.load(low, untied)


def test_hf_sink_sets_every_weight_and_follows_tied_embeddings(ends, tmp_path):
    from recode_lib.core.models import load_model

    low, high = ends
    merged = merge_grid(
        MergeConfig(str(low), str(high), (2.5,), str(tmp_path / "m"), progress=False)
    )
    ref, _ = load_model(str(merged[2.5]))
    net, _ = load_model(str(low))
    L.HFModelSink(net).load(L.EndpointPair.load(low, high), 2.5)
    got, want = net.state_dict(), ref.state_dict()
    assert set(got) == set(want)
    for k in want:
        assert torch.equal(got[k], want[k]), k
    assert net.lm_head.weight.data_ptr() == net.model.embed_tokens.weight.data_ptr()
    assert torch.equal(net.lm_head.weight, want["model.embed_tokens.weight"])


def test_hf_sink_refuses_an_untied_model_fed_a_tied_checkpoint(ends):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config.from_pretrained(ends[0])
    cfg.tie_word_embeddings = False
    with pytest.raises(L.LiveWeightsError, match="lm_head.weight"):
        L.HFModelSink(Qwen2ForCausalLM(cfg)).check(L.EndpointPair.load(*ends))


class _RecordingModel:
    def __init__(self):
        self.loaded = []

    def load_weights(self, weights):
        self.loaded.extend((n, t.clone()) for n, t in weights)


class _RecordingLLM:
    """Stand-in for vllm.LLM (vllm is absent on CPU): collective_rpc runs the callable on two
    fake tensor-parallel workers the way vLLM does (worker first)."""

    def __init__(self):
        self.workers = [
            type("W", (), {"model_runner": type("R", (), {})(), "device": "cpu"})()
            for _ in range(2)
        ]
        for w in self.workers:
            w.model_runner.model = _RecordingModel()
        self.resets = 0

    def collective_rpc(self, method, timeout=None, args=(), kwargs=None):
        return [method(w, *args, **(kwargs or {})) for w in self.workers]

    def reset_prefix_cache(self):
        self.resets += 1


def test_vllm_engine_sink_ships_only_alpha_and_workers_load_theta(ends):
    import pickle

    pair = L.EndpointPair.load(*ends)
    llm = _RecordingLLM()
    L.VLLMEngineSink(llm).load(pair, -2.5)
    want = dict(pair.theta(-2.5))
    for w in llm.workers:
        got = dict(w.model_runner.model.loaded)
        assert list(got) == pair.names
        assert all(torch.equal(got[k], want[k]) for k in want)
    assert llm.resets == 1
    # the RPC is a module-level function + plain args: it pickles (vLLM ships it to processes)
    pickle.dumps((L.load_alpha_on_worker, (str(pair.low), str(pair.high), -2.5, None)))
    # the worker reads the endpoints once and reuses them for the next alpha
    cached = llm.workers[0]._recode_endpoints
    L.VLLMEngineSink(llm).load(pair, 0.5)
    assert llm.workers[0]._recode_endpoints is cached and llm.resets == 2


def test_vllm_engine_sink_colocate_path_without_collective_rpc(ends):
    pair = L.EndpointPair.load(*ends)
    model = _RecordingModel()
    worker = type("DW", (), {"model_runner": type("R", (), {"model": model})()})()
    llm = type("LLM", (), {})()
    llm.llm_engine = type("E", (), {"model_executor": type("X", (), {"driver_worker": worker})()})()
    llm.reset_prefix_cache = lambda: None
    L.VLLMEngineSink(llm).load(pair, 1.5)
    assert [n for n, _ in model.loaded] == pair.names


class _RecordingClient:
    """Stand-in for trl's VLLMClient: records the metadata and streamed tensors."""

    def __init__(self):
        self.communicator = None
        self.calls = []

    def init_communicator(self, device=0):
        self.communicator = ("init", device)

    def update_named_params(self, metadata, named_params):
        self.calls.append(("update", metadata, [(n, t.clone()) for n, t in named_params]))

    def reset_prefix_cache(self):
        self.calls.append(("reset",))


def test_server_sink_announces_then_streams_then_resets(ends):
    pair = L.EndpointPair.load(*ends)
    client = _RecordingClient()
    sink = L.VLLMServerSink(client, device="cpu")
    assert client.communicator == ("init", "cpu")
    sink.load(pair, 3.5)
    (kind, meta, streamed), reset = client.calls
    assert kind == "update" and reset == ("reset",)
    assert [m[0] for m in meta] == [n for n, _ in streamed] == pair.names
    assert [m[2] for m in meta] == [list(t.shape) for _, t in streamed]
    want = dict(pair.theta(3.5))
    assert all(torch.equal(t, want[n]) for n, t in streamed)


def test_sweep_in_memory_equals_evaluating_merged_checkpoints(ends, tmp_path, monkeypatch):
    """The in-memory sweep gives the same samples as writing each checkpoint and evaluating it,
    writes a checkpoint only for save_alphas, and resumes without loading anything."""
    from recode_lib.data import load_benchmark
    from recode_lib.evaluation.spec import EvalSpec
    from recode_lib.weights import sweep as S

    low, high = ends
    problems = load_benchmark("microbench", limit=2)
    spec = EvalSpec(
        backend="hf",
        temperature=0.0,
        max_new_tokens=8,
        n=1,
        batch_size=4,
        workers=1,
        progress=False,
    )
    alphas = (-2.5, 0.5, 3.5)
    res = S.sweep_alphas(
        low,
        high,
        alphas,
        problems,
        spec,
        tmp_path / "eval",
        save_alphas=(0.5,),
        save_dir=tmp_path / "saved",
        log=None,
    )
    assert sorted(res.summaries) == list(alphas)
    assert sorted(res.seconds["push"]) == list(alphas)
    assert [p.name for p in (tmp_path / "saved").iterdir() if not p.name.startswith(".")] == [
        alpha_dirname(0.5)
    ]
    merged = merge_grid(
        MergeConfig(str(low), str(high), alphas, str(tmp_path / "m"), progress=False)
    )
    for a in alphas:
        ref = spec.evaluate(merged[a], problems, tmp_path / "ref" / alpha_dirname(a))
        mine = [
            json.loads(x)
            for x in (tmp_path / "eval" / alpha_dirname(a) / "samples.jsonl")
            .read_text()
            .splitlines()
        ]
        theirs = [
            json.loads(x)
            for x in (tmp_path / "ref" / alpha_dirname(a) / "samples.jsonl")
            .read_text()
            .splitlines()
        ]
        key = lambda r: r["id"]  # noqa: E731
        assert [r["response"] for r in sorted(mine, key=key)] == [
            r["response"] for r in sorted(theirs, key=key)
        ], a
        assert res.summaries[a]["pass@1"] == ref["pass@1"]

    def boom(*a, **k):
        raise AssertionError("a fully cached sweep must not load a model")

    monkeypatch.setattr("recode_lib.core.models.load_model", boom)
    again = S.sweep_alphas(low, high, alphas, problems, spec, tmp_path / "eval", log=None)
    assert again.seconds["push"] == {} and again.seconds["load_model"] == 0.0
    assert {a: s["pass@1"] for a, s in again.summaries.items()} == {
        a: s["pass@1"] for a, s in res.summaries.items()
    }


def test_sweep_rejects_save_alphas_outside_the_grid(ends, tmp_path):
    from recode_lib.evaluation.spec import EvalSpec
    from recode_lib.weights.sweep import sweep_alphas

    with pytest.raises(ValueError, match=r"save_alphas \[2.0\]"):
        sweep_alphas(*ends, [0.0, 1.0], [], EvalSpec(), tmp_path, save_alphas=[2.0])


def test_alpha_model_id_changes_when_an_endpoint_is_rewritten(ends, tmp_path):
    low = shutil.copytree(ends[0], tmp_path / "low")
    before = L.alpha_model_id(low, ends[1], 0.5)
    assert before != L.alpha_model_id(low, ends[1], 1.5)
    import os

    f = low / "model.safetensors"
    os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 10**9))
    assert L.alpha_model_id(low, ends[1], 0.5) != before


@pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="needs CUDA and vllm (vLLM's CPU build: tests/test_vllm_real_live.py)",
)
def test_vllm_engine_updated_in_place_matches_merged_checkpoint(ends, tmp_path):
    pytest.importorskip("vllm")
    from recode_lib.generation import SamplingConfig
    from recode_lib.generation.vllm_backend import VLLMGenerator

    low, high = ends
    merged = merge_grid(
        MergeConfig(str(low), str(high), (1.5,), str(tmp_path / "m"), progress=False)
    )
    prompts = [[{"role": "user", "content": "def add(a, b):"}]]
    sampling = SamplingConfig(temperature=0.0, max_new_tokens=16)
    L.allow_worker_functions()
    live = VLLMGenerator(str(low), enforce_eager=True, gpu_memory_utilization=0.3)
    L.VLLMEngineSink(live.engine()).load(L.EndpointPair.load(low, high), 1.5)
    got = live.generate(prompts, sampling)[0][0].text
    live.close()
    ref = VLLMGenerator(str(merged[1.5]), enforce_eager=True, gpu_memory_utilization=0.3)
    assert got == ref.generate(prompts, sampling)[0][0].text


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_interpolate_matches_the_merge_formula_for_every_float_dtype(dtype):
    g = torch.Generator().manual_seed(0)
    lo = torch.randn(3, L.CHUNK // 2 + 7, generator=g).to(dtype)  # spans two chunks
    hi = torch.randn(3, L.CHUNK // 2 + 7, generator=g).to(dtype)
    work = torch.float64 if dtype == torch.float64 else torch.float32
    for a in (-2.5, 0.3, 3.5):
        want = (lo.to(work) + a * (hi.to(work) - lo.to(work))).to(dtype)
        assert torch.equal(L.interpolate(lo, hi, a), want)
        wide = torch.empty(lo.shape, dtype=torch.float64)
        L.interpolate_into(lo, hi, a, wide)  # rounded to dtype, then widened
        assert torch.equal(wide, want.to(torch.float64))
        strided = torch.empty(lo.shape[::-1], dtype=dtype).t()  # non-contiguous destination
        L.interpolate_into(lo, hi, a, strided)
        assert torch.equal(strided, want)
    ints = torch.arange(5)
    assert L.interpolate(ints, ints + 1, 0.5) is ints


def test_dry_run_backend_sweeps_through_the_vllm_request_path(ends, tmp_path):
    """backend vllm_standin (the paper profile's dry run): the vLLM generator's request path
    generates, theta_alpha is pushed into the stand-in engine's weights, and each alpha's
    greedy samples equal evaluating its merged checkpoint with the same backend."""
    from recode_lib.data import load_benchmark
    from recode_lib.evaluation.spec import EvalSpec
    from recode_lib.weights import sweep as S

    low, high = ends
    problems = load_benchmark("microbench", limit=1)
    spec = EvalSpec(
        backend="vllm_standin", temperature=0.0, max_new_tokens=6, n=1, workers=1, progress=False
    )
    res = S.sweep_alphas(low, high, (-2.5, 1.0), problems, spec, tmp_path / "eval", log=None)
    merged = merge_grid(
        MergeConfig(str(low), str(high), (-2.5,), str(tmp_path / "m"), progress=False)
    )
    ref = spec.evaluate(merged[-2.5], problems, tmp_path / "ref")
    mine = (tmp_path / "eval" / alpha_dirname(-2.5) / "samples.jsonl").read_text().splitlines()
    theirs = (tmp_path / "ref" / "samples.jsonl").read_text().splitlines()
    assert [json.loads(x)["response"] for x in mine] == [json.loads(x)["response"] for x in theirs]
    assert res.summaries[-2.5]["pass@1"] == ref["pass@1"]
