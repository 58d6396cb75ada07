"""vLLM backend: request building on CPU (vllm not imported), a real engine run on a GPU."""

from __future__ import annotations

import importlib.util
import sys
from types import SimpleNamespace

import pytest

from recode_lib.generation import SamplingConfig, sample_seed
from recode_lib.generation.hf import HFGenerator
from recode_lib.generation.vllm_backend import VLLMGenerator, build_requests, completion_from_output

PROMPTS = [[{"role": "user", "content": "write add"}], [{"role": "user", "content": "write mul"}]]


def test_requests_one_per_sample_with_own_seed_and_same_prompt_ids_as_hf(tiny_model_dir):
    imported_before = "vllm" in sys.modules  # another test (TRL) may have imported it
    gen = VLLMGenerator(str(tiny_model_dir))
    s = SamplingConfig(
        temperature=0.8, top_p=0.95, max_new_tokens=64, n=3, seed=5, stop=("</answer>",)
    )
    reqs = gen.requests_for(PROMPTS, s)
    built = build_requests(reqs, s, gen.render)
    assert len(built) == 6
    hf = HFGenerator(str(tiny_model_dir))
    text, n = hf.render(PROMPTS[1])
    assert built[4][0]["prompt_token_ids"] == hf.tok(text, add_special_tokens=False)["input_ids"]
    assert len(built[4][0]["prompt_token_ids"]) == n
    kw = built[4][1]
    assert kw == {
        "n": 1,
        "temperature": 0.8,
        "top_p": 0.95,
        "max_tokens": 64,
        "seed": sample_seed(5, PROMPTS[1], 1),
        "stop": ["</answer>"],
        "repetition_penalty": 1.0,
        "skip_special_tokens": True,
    }
    assert len({b[1]["seed"] for b in built}) == 6
    assert ("vllm" in sys.modules) == imported_before  # building requests imports no vllm


def test_completion_from_output_maps_finish_reasons():
    out = SimpleNamespace(
        outputs=[SimpleNamespace(text="x", token_ids=[1, 2, 3], finish_reason="length")]
    )
    c = completion_from_output(out)
    assert (c.text, c.n_tokens, c.finish_reason) == ("x", 3, "length")
    out.outputs[0].finish_reason = "stop"
    assert completion_from_output(out).finish_reason == "stop"


def test_missing_vllm_is_a_clear_error(tiny_model_dir):
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here")
    from recode_lib.generation import GenerationError

    with pytest.raises(GenerationError, match="needs the `vllm` package"):
        VLLMGenerator(str(tiny_model_dir)).engine()


@pytest.mark.gpu
def test_vllm_engine_generates_reproducible_samples(tiny_model_dir):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    pytest.importorskip("vllm")
    gen = VLLMGenerator(str(tiny_model_dir), gpu_memory_utilization=0.2, enforce_eager=True)
    s = SamplingConfig(temperature=1.0, max_new_tokens=16, n=3, seed=0)
    a = gen.generate(PROMPTS, s)
    b = gen.generate(PROMPTS[::-1], s)
    assert [len(r) for r in a] == [3, 3]
    assert a[0] == b[1] and a[1] == b[0]  # per-request seeds: order-independent
    assert all(1 <= c.n_tokens <= 16 for r in a for c in r)
