"""How the reward-side modules (crpl, lcbrb, judges) reach a generator LLM.

    gen = make_generator("hf", "smollm2")        # or ("vllm", "Qwen/Qwen2.5-Coder-32B-Instruct")
    outs = generate(gen, [messages, ...], temperature=0.8, max_new_tokens=256, n=2, seed=0)
    outs[i][j].text                              # j-th completion of prompt i

A thin layer over recode_lib.generation (get_generator / SamplingConfig: the hf, vllm and
openai backends, and the resumable cache via `cache=<jsonl path>`). Any object with
`.generate(list_of_messages, sampling) -> list[list[Completion]]` can be used as a generator.
This module does no parsing and no checking of the outputs.
"""

from __future__ import annotations


def make_generator(backend: str, model: str, **kw):
    """recode_lib.generation.get_generator(backend, model, **kw) (imported lazily)."""
    from recode_lib.generation import get_generator

    return get_generator(backend, model, **kw)


def generate(generator, messages: list[list[dict]], **sampling) -> list[list]:
    """outs[i] = the `n` completions for messages[i]; sampling kwargs -> SamplingConfig."""
    from recode_lib.generation import SamplingConfig

    if not messages:
        return []
    return generator.generate(messages, SamplingConfig(**sampling))
