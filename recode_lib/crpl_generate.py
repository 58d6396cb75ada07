"""How the reward-side modules (crpl, lcbrb, judges) reach a generator LLM.

    gen = make_generator("hf", "smollm2")                 # or ("vllm", "Qwen/Qwen2.5-Coder-32B-Instruct")
    outs = generate(gen, [messages, ...], temperature=0.8, max_new_tokens=256, n=2, seed=0)
    outs[i][j].text                                       # j-th completion of prompt i

It uses recode_lib.generation (get_generator / SamplingConfig: the hf, vllm and openai backends,
with their resumable cache) whenever that module is importable. Only when it is not (a partial
checkout) does it fall back to a minimal batched transformers `generate` on CPU for backend "hf".
A generator object may also be passed in directly: anything with
`.generate(list_of_messages, sampling) -> list[list[Completion]]`.
This module does no parsing and no checking of the outputs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class _Sampling:
    temperature: float = 0.8
    top_p: float = 0.95
    max_new_tokens: int = 256
    n: int = 1
    seed: int = 0


@dataclass
class _Completion:
    text: str
    n_tokens: int
    finish_reason: str


def _generation_module():
    try:
        from recode_lib import generation
    except ImportError:
        return None
    # a half-written checkout may hold the folder without its API yet
    ok = hasattr(generation, "get_generator") and hasattr(generation, "SamplingConfig")
    return generation if ok else None


def make_generator(backend: str, model: str, **kw):
    """A generator for `model` on `backend` (see the module docstring)."""
    gen_mod = _generation_module()
    if gen_mod is not None:
        return gen_mod.get_generator(backend, model, **kw)
    if backend != "hf":
        raise RuntimeError(f"backend {backend!r} needs recode_lib.generation, which is not installed")
    return _LocalHF(model, batch_size=kw.get("batch_size", 8))


def sampling_config(**kw):
    gen_mod = _generation_module()
    return gen_mod.SamplingConfig(**kw) if gen_mod is not None else _Sampling(**kw)


def generate(generator, messages: list[list[dict]], **sampling) -> list[list]:
    """outs[i] = list of n completions for messages[i]."""
    if not messages:
        return []
    return generator.generate(messages, sampling_config(**sampling))


class _LocalHF:
    """Fallback: batched transformers generate on CPU (no cache)."""

    def __init__(self, model: str, batch_size: int = 8):
        from recode_lib.models import load_model

        self.model, self.tok = load_model(model)
        self.batch_size = batch_size

    def generate(self, messages, sampling):
        import torch

        out: list[list] = []
        for start in range(0, len(messages), self.batch_size):
            chunk = messages[start:start + self.batch_size]
            texts = [self.tok.apply_chat_template(m, tokenize=False, add_generation_prompt=True)
                     for m in chunk]
            enc = self.tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
            torch.manual_seed(sampling.seed + start)
            do_sample = sampling.temperature > 0
            with torch.no_grad():
                ids = self.model.generate(
                    **enc, max_new_tokens=sampling.max_new_tokens, do_sample=do_sample,
                    temperature=sampling.temperature if do_sample else None,
                    top_p=sampling.top_p if do_sample else None,
                    num_return_sequences=sampling.n, pad_token_id=self.tok.pad_token_id)
            new = ids[:, enc["input_ids"].shape[1]:]
            for i in range(len(chunk)):
                comps = []
                for j in range(sampling.n):
                    row = new[i * sampling.n + j]
                    toks = [t for t in row.tolist() if t != self.tok.pad_token_id]
                    eos = self.tok.eos_token_id in toks
                    if eos:
                        toks = toks[:toks.index(self.tok.eos_token_id)]
                    comps.append(_Completion(self.tok.decode(toks, skip_special_tokens=True),
                                             len(toks), "stop" if eos else "length"))
                out.append(comps)
        return out
