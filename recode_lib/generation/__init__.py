"""Generation backends behind one interface, and a resumable cache.

    from recode_lib.generation import SamplingConfig, get_generator
    gen = get_generator("hf", "smollm2", batch_size=16)        # or "vllm", "openai"
    outs = gen.generate(list_of_chat_messages, SamplingConfig(temperature=0.8, n=4))
    gen = get_generator("hf", "smollm2", cache="runs/x/generations.jsonl")   # cached, resumable

Backends: "hf" (transformers, CPU or one GPU, batched; hf.py), "vllm" (offline engine, GPU,
vllm imported lazily; vllm_backend.py), "openai" (OpenAI-compatible HTTP chat completions,
e.g. `vllm serve`; openai_backend.py), "vllm_standin" (the vllm backend's request path with a
transformers stand-in engine, CPU, tiny models: the paper profile's dry run; vllm_standin.py).
Each module's docstring states what it guarantees about
seeds. Keyword arguments go to the backend's constructor, except `cache` (a jsonl path: wrap in
CachedGenerator) and `cache_model_key`.
"""

from __future__ import annotations

from recode_lib.generation.base import (Backend, Completion, FinishReason, GenerationError,
                                        Generator, SampleRequest, SamplingConfig, sample_seed)
from recode_lib.generation.cache import CachedGenerator

BACKENDS = tuple(b.value for b in Backend)   # plain strings: error messages show them

__all__ = ["BACKENDS", "Backend", "CachedGenerator", "Completion", "FinishReason",
           "GenerationError", "Generator", "SampleRequest", "SamplingConfig", "get_generator",
           "sample_seed"]


def get_generator(backend: str, model: str, *, cache=None, cache_model_key: str | None = None,
                  **kw) -> Generator:
    if backend == Backend.HF:
        from recode_lib.generation.hf import HFGenerator as cls
    elif backend in (Backend.VLLM, Backend.VLLM_STANDIN):
        from recode_lib.generation.vllm_backend import VLLMGenerator as cls

        if backend == Backend.VLLM_STANDIN:
            kw["engine"] = "standin"
    elif backend == Backend.OPENAI:
        from recode_lib.generation.openai_backend import OpenAIGenerator as cls
    else:
        raise ValueError(f"unknown generation backend {backend!r}; choose one of {BACKENDS}")
    gen = cls(model, **kw)
    return CachedGenerator(gen, cache, model_key=cache_model_key) if cache is not None else gen
