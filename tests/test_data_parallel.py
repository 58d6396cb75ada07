"""recode_lib.generation.data_parallel: several engines side by side, each in its own process on
its own devices, giving the samples one engine gives. Pure tests (placement, devices, alpha
waves) and the stand-in engine in two processes (the whole path without vLLM). The real vLLM
engines' tests share their modules' engines: two engines (one core each) and two Ray actors
give one engine's samples in tests/test_vllm_real_generation.py, the alpha sweep on two
engines equals the live one-engine sweep in tests/test_vllm_real_live.py."""

from __future__ import annotations

import json
import os

import pytest
import torch

from recode_lib.generation import SampleRequest, SamplingConfig, get_generator
from recode_lib.generation import data_parallel as D
from recode_lib.weights.merge import alpha_dirname
from recode_lib.weights.sweep import alpha_waves

MSGS = [[{"role": "user", "content": f"write f{i}"}] for i in range(3)]


# -- pure: devices, placement, waves ------------------------------------------------------------


def test_engine_devices_give_each_engine_its_own_gpus_or_cores():
    assert D.engine_devices(4, 2, "cuda", devices=range(8)) == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert D.engine_env((2, 3), "cuda", 2) == {"CUDA_VISIBLE_DEVICES": "2,3"}
    assert D.engine_devices(2, 1, "cpu", devices=[0, 1]) == [(0,), (1,)]
    assert [
        D.engine_env(s, "cpu")["VLLM_CPU_OMP_THREADS_BIND"]
        for s in D.engine_devices(2, 1, "cpu", devices=[0, 1])
    ] == ["0", "1"]
    # tensor-parallel on CPU: one core list per rank
    assert D.engine_env((4, 5, 6, 7), "cpu", 2)["VLLM_CPU_OMP_THREADS_BIND"] == "4,5|6,7"
    with pytest.raises(ValueError, match="need more than the 4 GPU"):
        D.engine_devices(3, 2, "cuda", devices=range(4))
    with pytest.raises(ValueError, match="CPU core"):
        D.engine_devices(3, 1, "cpu", devices=[0, 1])


def test_engines_for_and_automatic_size():
    assert D.engines_for(8, 1) == 8 and D.engines_for(8, 2) == 4 and D.engines_for(8, 4) == 2
    assert D.engines_for(1, 2) == 1
    assert D.resolve_data_parallel_size(3, 1) == 3
    if not torch.cuda.is_available():
        assert D.resolve_data_parallel_size(0, 1) == 1  # CPU: one engine unless asked
    assert D.resolve_data_parallel_size(0, 1, engine="standin") == 1
    with pytest.raises(ValueError, match="non-negative"):
        D.resolve_data_parallel_size(-1)


def keys(prompts, n):
    return [D.episode_key(SampleRequest(m, i, 0)) for m in prompts for i in range(n)]


def test_assign_keeps_a_prompts_samples_together_when_there_are_enough_prompts():
    prompts = [[{"role": "user", "content": f"p{i}"}] for i in range(8)]
    where = D.assign(keys(prompts, 4), 4)
    per_prompt = [set(where[i * 4 : (i + 1) * 4]) for i in range(8)]
    assert all(len(s) == 1 for s in per_prompt)  # all 4 samples on one engine
    assert sorted(where.count(j) for j in range(4)) == [8, 8, 8, 8]


def test_assign_splits_one_prompt_over_the_engines_when_it_is_all_there_is():
    where = D.assign(keys(MSGS[:1], 16), 8)
    assert sorted(where.count(j) for j in range(8)) == [2] * 8


def test_a_multi_turn_episode_stays_on_the_engine_of_its_first_turn():
    gen = D.DataParallelGenerator("smollm2", data_parallel_size=3, engine="standin")
    first = [SampleRequest(m, i, 0) for m in MSGS for i in range(2)]
    where1 = gen.assign(first)
    # turn 2: every other episode continues (the conversation grows, the index stays)
    cont = [
        SampleRequest(
            r.messages
            + [{"role": "assistant", "content": "call"}, {"role": "tool", "content": "out"}],
            r.index,
            0,
        )
        for r in first[::2]
    ]
    assert gen.assign(cont) == where1[::2]
    assert D.episode_key(cont[0]) == D.episode_key(first[0])
    # a fresh batch (no continuation) forgets the previous placements
    gen.assign([SampleRequest([{"role": "user", "content": "other"}], 0, 0)])
    assert len(gen.placed) == 1


def test_alpha_waves_put_whole_alphas_on_engines_and_split_the_last_ones():
    alphas = [float(a) for a in range(17)]
    waves = alpha_waves(alphas, 8)
    assert len(waves) == 3  # 17 alphas on 8 engines
    assert all(len(w) == 8 and all(len(g) == 1 for _, g in w) for w in waves[:2])
    assert waves[2] == [(16.0, tuple(range(8)))]  # the last one on all 8
    assert [a for w in waves for a, _ in w] == alphas
    assert alpha_waves([0.0, 1.0, 2.0, 3.0, 4.0], 4)[1] == [(4.0, (0, 1, 2, 3))]
    assert alpha_waves([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 4)[1] == [(4.0, (0, 1)), (5.0, (2, 3))]


def test_eval_spec_passes_data_parallel_size_to_the_vllm_backends():
    from recode_lib.evaluation.spec import EvalSpec

    assert EvalSpec(backend="vllm").generator_kwargs() == {
        "tensor_parallel_size": 1,
        "data_parallel_size": 0,
    }
    assert EvalSpec(backend="vllm", data_parallel_size=1).generator_kwargs() == {
        "tensor_parallel_size": 1
    }
    assert "data_parallel_size" not in EvalSpec(backend="hf").generator_kwargs()
    # one engine stays the in-process VLLMGenerator (nothing started)
    gen = get_generator("vllm_standin", "smollm2", data_parallel_size=1)
    assert type(gen).__name__ == "VLLMGenerator"
    gen = get_generator("vllm_standin", "smollm2", data_parallel_size=2)
    assert isinstance(gen, D.DataParallelGenerator) and gen._pool is None


# -- the stand-in engine in two processes --------------------------------------------------------


@pytest.fixture(scope="module")
def standin_pair(tiny_model_dir):
    gen = get_generator("vllm_standin", str(tiny_model_dir), data_parallel_size=2, chunk_size=2)
    yield gen
    gen.close()


def test_two_standin_engines_give_one_engines_samples(standin_pair, tiny_model_dir):
    sampling = SamplingConfig(temperature=0.8, n=3, max_new_tokens=6, seed=5)
    seen = []
    reqs = standin_pair.requests_for(MSGS, sampling)
    two = standin_pair.generate_samples(reqs, sampling, callback=lambda i, c: seen.append(i))
    one = get_generator("vllm_standin", str(tiny_model_dir)).generate_samples(reqs, sampling)
    assert [c.text for c in two] == [c.text for c in one]
    assert [c.n_tokens for c in two] == [c.n_tokens for c in one]
    assert sorted(seen) == list(range(len(reqs)))  # every sample reported once
    info = standin_pair.pool().info
    assert len({i["pid"] for i in info}) == 2 and os.getpid() not in {i["pid"] for i in info}
    if len(os.sched_getaffinity(0)) >= 2:  # each pinned to its own core
        binds = [i["env"]["VLLM_CPU_OMP_THREADS_BIND"] for i in info]
        assert len(set(binds)) == 2


def test_data_parallel_generation_resumes_from_the_cache(standin_pair, tmp_path):
    from recode_lib.generation import CachedGenerator

    sampling = SamplingConfig(temperature=0.8, n=2, max_new_tokens=4, seed=1)
    path = tmp_path / "gen.jsonl"
    first = CachedGenerator(standin_pair, path, model_key="m").generate(MSGS[:2], sampling)
    more = CachedGenerator(standin_pair, path, model_key="m")
    assert len(more.missing(more.requests_for(MSGS, sampling), sampling)) == 2
    both = more.generate(MSGS, sampling)
    assert [c.text for o in both[:2] for c in o] == [c.text for o in first for c in o]
    assert len(path.read_text().splitlines()) == 6


def test_data_parallel_alpha_sweep_equals_the_one_engine_sweep(
    perturbed_checkpoint, tmp_path_factory, tmp_path
):
    """backend vllm_standin with 2 engines: 3 alphas in 2 waves (two alphas one per engine,
    then the third on both), each engine loading theta_alpha in place; every alpha's samples
    equal the one-engine sweep's, and a re-run starts no engine."""
    from recode_lib.data import load_benchmark
    from recode_lib.evaluation.spec import EvalSpec
    from recode_lib.weights import sweep as S

    root = tmp_path_factory.mktemp("dp_ends")
    low = perturbed_checkpoint(root / "low", 1, torch.bfloat16, complete=False)
    high = perturbed_checkpoint(root / "high", 2, torch.bfloat16, complete=False)
    problems = load_benchmark("microbench", limit=2)
    alphas = (-1.0, 0.5, 2.0)
    one = EvalSpec(
        backend="vllm_standin",
        temperature=0.7,
        max_new_tokens=5,
        n=2,
        k=(1, 2),
        workers=1,
        progress=False,
        data_parallel_size=1,
    )
    two = one.replace(data_parallel_size=2)
    logs = []
    res2 = S.sweep_alphas(low, high, alphas, problems, two, tmp_path / "two", log=logs.append)
    res1 = S.sweep_alphas(low, high, alphas, problems, one, tmp_path / "one", log=None)
    assert {a: s["pass@1"] for a, s in res2.summaries.items()} == {
        a: s["pass@1"] for a, s in res1.summaries.items()
    }
    assert len(res2.seconds["waves"]) == 2
    assert any("-1 on engine(s) [0]" in x and "+0.5 on engine(s) [1]" in x for x in logs)
    assert any("+2 on engine(s) [0, 1]" in x for x in logs)

    def responses(folder, a):
        rows = [
            json.loads(x)
            for x in (folder / alpha_dirname(a) / "samples.jsonl").read_text().splitlines()
        ]
        return sorted((r["id"], r["response"]) for r in rows)

    for a in alphas:
        assert responses(tmp_path / "two", a) == responses(tmp_path / "one", a), a
        assert res2.summaries[a]["pass@1"] == res1.summaries[a]["pass@1"]
    again = S.sweep_alphas(low, high, alphas, problems, two, tmp_path / "two", log=None)
    assert again.seconds["waves"] == {}  # all cached: nothing generated
    assert {a: s["pass@1"] for a, s in again.summaries.items()} == {
        a: s["pass@1"] for a, s in res2.summaries.items()
    }


def test_tool_setting_on_two_standin_engines_equals_one_engine(tiny_model_dir, tmp_path):
    """The tool setting through the evaluation loop (tools rendered in the caller, episodes
    split over two stand-in engine processes) gives one engine's rows."""
    from recode_lib.data import load_benchmark
    from recode_lib.evaluation.spec import EvalSpec

    problems = load_benchmark("microbench", limit=2)
    spec = EvalSpec(
        backend="vllm_standin",
        setting="tool",
        temperature=0.8,
        n=2,
        max_new_tokens=8,
        max_turns=2,
        workers=1,
        progress=False,
        data_parallel_size=2,
        seed=4,
    )
    rows = {}
    for k in (2, 1):
        spec_k = spec.replace(data_parallel_size=k)
        spec_k.evaluate(str(tiny_model_dir), problems, tmp_path / str(k))
        rows[k] = sorted(
            (r["id"], r["response"], r["turns"], r["tool_calls"])
            for r in map(json.loads, (tmp_path / str(k) / "samples.jsonl").read_text().splitlines())
        )
    assert rows[2] == rows[1] and len(rows[2]) == 4
