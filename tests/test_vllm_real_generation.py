"""The `vllm` generation backend on a real vLLM engine, in the three settings of paper B.

What runs where: on a CPU machine with vLLM's CPU build (`vllm-cpu`) everything here runs, on
the embedded SmolLM2-135M-Instruct, through one engine for the whole module (the single, tool
and agentic generators share it through `llm=`: the settings differ in how prompts are
rendered, not in the engine). The engine gets the CPU defaults of
recode_lib.generation.vllm_backend (float32, eager, a 1 GiB KV cache) when vLLM runs on the
CPU; on CUDA the same tests run with the GPU engine's own defaults (the CPU-defaults test skips).
The data-parallel tests are here too, to share that engine: its seeded batch is the one
engine's samples that two engines (local processes, one core each; then Ray actors on a local
cluster) must reproduce (recode_lib.generation.data_parallel).
Marked `vllm` and `slow`: `pytest -m vllm`; skipped (saying why) without vllm.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from vllm_helpers import VLLM_MARKS, Timer, on_cpu, smollm2_or_skip, vllm_or_skip

from recode_lib.data import load_benchmark
from recode_lib.environments.rollout import tool_options
from recode_lib.evaluation.episodes import generator_for
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.generation import SampleRequest, SamplingConfig, get_generator, sample_seed
from recode_lib.generation import data_parallel as D
from recode_lib.generation.vllm_backend import CPU_KV_CACHE_BYTES

pytestmark = VLLM_MARKS


@pytest.fixture(scope="module")
def single():
    """The single-setting generator on the embedded model; its engine is the module's."""
    vllm_or_skip()
    model = smollm2_or_skip()
    gen = get_generator("vllm", model)
    with Timer("engine load (SmolLM2-135M, vllm backend defaults)"):
        gen.engine()
    yield gen
    gen.close()


def spec_for(setting: str, **kw) -> EvalSpec:
    base = dict(
        backend="vllm",
        setting=setting,
        temperature=0.0,
        n=1,
        max_new_tokens=96,
        workers=2,
        progress=False,
        max_turns=2,
        max_tool_calls=2,
    )
    return EvalSpec(**(base | kw))


def evaluate(setting: str, single, tmp_path, limit: int = 2):
    """spec.evaluate with the setting's own generator (episodes.generator_for, the path
    `recode eval --backend vllm --setting S` takes), sharing the module's engine."""
    spec = spec_for(setting)
    problems = load_benchmark("microbench", limit=limit)
    gen = generator_for(spec, single.model, spec.generator_kwargs() | {"llm": single.engine()})
    summary = spec.evaluate(single.model, problems, tmp_path / setting, generator=gen)
    rows = [json.loads(x) for x in (tmp_path / setting / "samples.jsonl").read_text().splitlines()]
    return gen, summary, rows


def test_cpu_engine_gets_the_documented_defaults(single):
    if not on_cpu():
        pytest.skip("vLLM runs on CUDA here: the GPU engine keeps its own defaults")
    import torch

    engine = single.engine().llm_engine
    assert engine.model_config.dtype == torch.float32
    assert engine.model_config.enforce_eager
    assert engine.vllm_config.cache_config.kv_cache_memory_bytes == CPU_KV_CACHE_BYTES
    assert not engine.vllm_config.scheduler_config.enable_chunked_prefill


def test_seeded_prompts_past_one_steps_token_budget_keep_their_samples(single):
    """24 seeded requests of ~300 prompt tokens (past the CPU engine's 4,096-token step
    budget, so some prompt would be prefilled in parts): with chunked prefill vLLM's model
    runner rewound the request's CPU generator and the engine died ("CPU Generator does not
    use offset"; vllm_backend.CPU_SEEDED_ENGINE_DEFAULTS). Each sample is also the one its
    request gives alone."""
    long = "Write a Python function that returns the sum of the first n odd numbers. " * 20
    prompts = [[{"role": "user", "content": f"{i}. {long}"}] for i in range(12)]
    sampling = SamplingConfig(temperature=0.8, max_new_tokens=4, n=2, seed=5)
    reqs = single.requests_for(prompts, sampling)
    assert sum(len(single.render(r.messages)) for r in reqs) > 4096
    batch = single.generate_samples(reqs, sampling)
    alone = single.generate_samples([reqs[-1]], sampling)
    assert all(c.n_tokens > 0 for c in batch) and alone[0].text == batch[-1].text


PROMPTS = [
    [{"role": "user", "content": f"Write a Python function that returns {i} squared."}]
    for i in range(8)
]
SAMPLING = SamplingConfig(temperature=0.8, max_new_tokens=48, n=4, seed=3)


@pytest.fixture(scope="module")
def one_engine_batch(single):
    """(requests, completions): PROMPTS x SAMPLING.n seeded requests (Generator.requests_for,
    what Generator.generate sends) generated in one batch on the module's engine; also the
    one engine's samples the data-parallel tests below compare with."""
    reqs = single.requests_for(PROMPTS, SAMPLING)
    assert [r.seed for r in reqs] == [sample_seed(3, m, j) for m in PROMPTS for j in range(4)]
    with Timer("32 sampled requests x 48 tokens") as t:
        batch = single.generate_samples(reqs, SAMPLING)
    tokens = sum(c.n_tokens for c in batch)
    print(f"[vllm timing] {tokens} tokens in {t.s:.1f} s = {tokens / t.s:.1f} tok/s")
    return reqs, batch


def test_samples_depend_only_on_their_own_seed(single, one_engine_batch):
    """Each sample is its own request with its own seed: generated alone or among others it
    is the same text; another seed gives another text. Prints tokens/s."""
    reqs, batch = one_engine_batch
    alone = single.generate_samples([reqs[5], reqs[17]], SAMPLING)
    assert [c.text for c in alone] == [batch[5].text, batch[17].text]
    other = single.generate_samples(
        [SampleRequest(reqs[5].messages, 1, reqs[5].seed + 1)], SAMPLING
    )
    assert other[0].text != batch[5].text
    assert all(c.n_tokens > 0 for c in batch)


def test_single_setting_evaluates_on_the_engine(single, tmp_path):
    with Timer("single setting, 2 microbench problems"):
        _, summary, rows = evaluate("single", single, tmp_path)
    assert summary["setting"] == "single" and summary["n_samples"] == 2
    assert all(r["response"].strip() for r in rows)  # the engine answered each


@pytest.mark.parametrize("setting", ["tool", "agentic"])
def test_multi_turn_setting_runs_episodes_on_the_engine(setting, single, tmp_path):
    with Timer(f"{setting} setting, 2 microbench problems"):
        gen, summary, rows = evaluate(setting, single, tmp_path)
    assert summary["setting"] == setting and summary["n_samples"] == 2
    assert summary["episodes"]["mean_turns"] >= 1
    assert all(r["n_tokens"] > 0 for r in rows)  # the engine generated turns
    # the prompt the engine saw rendered the setting's tools (chat template with tools)
    rendered = gen.tokenizer().decode(gen.render([{"role": "user", "content": "hi"}]))
    names = [f.__name__ for f in tool_options(setting)["tools"]]
    assert names and all(n in rendered for n in names), (names, rendered[:400])


# -- data parallel: two real engines give the one engine's samples ------------------------------

CPU_ENGINE = {"dtype": "float32", "enforce_eager": True, "gpu_memory_utilization": 0.3}


def two_devices_or_skip():
    kind = D.device_kind()
    if len(D.visible_devices(kind)) < 2:
        pytest.skip(f"two engines need two {'GPUs' if kind == 'cuda' else 'CPU cores'}")


@pytest.fixture(scope="module")
def two_engines(single):
    """(samples of PROMPTS, pool info) from two local engines (DataParallelGenerator, one core
    each), started, used and closed here: with the module's idle engine, three at most."""
    two_devices_or_skip()
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    gen = D.DataParallelGenerator(single.model, data_parallel_size=2, **CPU_ENGINE)
    try:
        t0 = time.perf_counter()
        gen.pool()
        t1 = time.perf_counter()
        out = gen.generate(PROMPTS, SAMPLING)
        info = gen.pool().info
        print(
            f"[vllm timing] two data-parallel CPU engines: load {t1 - t0:.1f} s, generate "
            f"{time.perf_counter() - t1:.1f} s, loadavg {open('/proc/loadavg').read().split()[:3]}"
        )
    finally:
        gen.close()
    return out, info


def test_two_real_cpu_engines_give_one_engines_samples(two_engines, one_engine_batch):
    out, info = two_engines
    texts = [c.text for o in out for c in o]
    assert len(texts) == len(PROMPTS) * SAMPLING.n
    assert texts == [c.text for c in one_engine_batch[1]]
    assert len(set(texts)) > len(PROMPTS)  # sampled: samples differ
    own = [
        i["env"].get("VLLM_CPU_OMP_THREADS_BIND") or i["env"].get("CUDA_VISIBLE_DEVICES")
        for i in info
    ]
    assert len(set(own)) == 2 and None not in own  # its own core(s) / GPU(s) each


def test_engines_as_ray_actors_on_a_local_cluster_give_the_same_samples(single, one_engine_batch):
    pytest.importorskip("ray", reason="needs ray (pip install 'recode[scale]')")
    import ray

    from recode_lib.core.ray_cluster import start_local

    two_devices_or_skip()
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    started = not ray.is_initialized()
    if started:
        start_local(num_cpus=2)
    try:
        gen = D.DataParallelGenerator(
            single.model, data_parallel_size=2, ray_address="local", **CPU_ENGINE
        )
        try:
            got = gen.generate(PROMPTS, SAMPLING)
            info = gen.pool().info
        finally:
            gen.close()
    finally:
        if started:
            ray.shutdown()
    assert [c.text for o in got for c in o] == [c.text for c in one_engine_batch[1]]
    assert len({i["pid"] for i in info}) == 2
    assert all(i["env"].get("VLLM_CPU_OMP_THREADS_BIND") == "nobind" for i in info)
