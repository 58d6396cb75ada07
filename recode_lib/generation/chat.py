"""How the reward-side modules (crpl, lcbrb, judges) reach a generator LLM.

    gen = make_generator("hf", "smollm2")        # or ("vllm", "Qwen/Qwen2.5-Coder-32B-Instruct",
                                                 #     tensor_parallel_size=2)
    outs = generate(gen, [messages, ...], temperature=0.8, max_new_tokens=256, n=2, seed=0)
    outs[i][j].text                              # j-th completion of prompt i

A thin layer over recode_lib.generation (get_generator / SamplingConfig: the hf, vllm and
openai backends, and the resumable cache via `cache=<jsonl path>`). Any object with
`.generate(list_of_messages, sampling) -> list[list[Completion]]` can be used as a generator.
This module does no parsing and no checking of the outputs.
"""

from __future__ import annotations

from recode_lib.generation import SamplingConfig, get_generator

VLLM_BACKENDS = ("vllm", "vllm_standin")


def make_generator(backend: str, model: str, *, tensor_parallel_size: int = 1, **kw):
    """recode_lib.generation.get_generator(backend, model, **kw).
    `tensor_parallel_size` (the notebooks' GENERATOR_TP / JUDGE_TP, chosen by `recode plan`)
    goes to the vLLM engine; other backends run on one device and refuse a size above 1. The
    vllm backend runs as many engines as the visible GPUs hold at that size (data parallel,
    recode_lib.generation.data_parallel) unless `data_parallel_size` says otherwise."""
    tp = int(tensor_parallel_size)
    if tp < 1:
        raise ValueError(f"tensor_parallel_size must be >= 1, got {tensor_parallel_size!r}")
    if backend in VLLM_BACKENDS:
        kw["tensor_parallel_size"] = tp
        if backend == "vllm":
            kw.setdefault("data_parallel_size", 0)
    elif tp != 1:
        raise ValueError(
            f"tensor_parallel_size {tp} applies to the vllm backend only, not {backend!r}"
        )
    return get_generator(backend, model, **kw)


def generate(generator, messages: list[list[dict]], **sampling) -> list[list]:
    """outs[i] = the `n` completions for messages[i]; sampling kwargs -> SamplingConfig."""
    if not messages:
        return []
    return generator.generate(messages, SamplingConfig(**sampling))
