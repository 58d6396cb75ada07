"""A tiny random Qwen2 checkpoint built offline, for tests and dry runs of the pipeline.

    path = build_tiny_model("/tmp/tiny")     # ~0.3M parameters, loads in well under a second

It is loadable by vLLM too (the paper dry run's real engine, vLLM's CPU build): head size
32 (vLLM's CPU attention takes head sizes 32, 64, 80, ... only; vllm/v1/attention/backends/
cpu_attn.py, get_supported_head_sizes), so 2 query heads and 1 KV head at hidden size 64
(grouped-query attention, as Qwen2), and max_position_embeddings 32768 (Qwen2.5's), so an
engine's default context holds the paper recipes' vllm_max_model_length (8192) and a long
benchmark prompt. The weights' shapes are those of 4 heads of 16: the same parameter count.

The tokenizer is a real byte-level BPE (Qwen2's pre-tokenizer regex, so ids survive a reload
through AutoTokenizer) trained on Python standard-library source, with ChatML special tokens
and a ChatML chat template; pad (<|endoftext|>) differs from eos (<|im_end|>).
The weights are random: generations are gibberish, but every code path (generation, reward
training, GRPO, merging) runs exactly as with a real model. It is not a model of anything.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+"
    r"[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
HEAD_DIM = 32  # the smallest head size vLLM's CPU attention takes
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHATML = (
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def _corpus() -> list[str]:
    import argparse
    import collections
    import json as _json
    import textwrap

    texts = [inspect.getsource(m) for m in (argparse, collections, _json, textwrap)]
    texts.append(
        "Write a Python function that returns the sum of a list of numbers. "
        "Think step by step. <think> reasoning </think> ```python\ndef f(x):\n    "
        "return x\n```"
    )
    return texts


def build_tokenizer(vocab_size: int = 1024):
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    tk.normalizer = normalizers.NFC()
    tk.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tk.train_from_iterator(_corpus(), trainer=trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None
    )
    tok.chat_template = CHATML
    return tok


def build_tiny_model(
    path, *, hidden_size: int = 64, layers: int = 2, seed: int = 0, vocab_size: int = 1024
) -> Path:
    """Write a tiny random Qwen2 causal LM + tokenizer to `path` (created) and return it;
    attention heads of HEAD_DIM (hidden_size // HEAD_DIM heads, half as many KV heads)."""
    if hidden_size % (2 * HEAD_DIM):
        raise ValueError(f"hidden_size must be a multiple of {2 * HEAD_DIM}, got {hidden_size}")
    import torch
    from transformers import AutoModelForCausalLM, Qwen2Config

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(vocab_size)
    torch.manual_seed(seed)
    cfg = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=hidden_size // HEAD_DIM,
        num_key_value_heads=hidden_size // HEAD_DIM // 2,
        max_position_embeddings=32768,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(path)
    tok.save_pretrained(path)
    # transformers does not save padding_side; record what we built for humans
    (path / "TINY_MODEL.json").write_text(json.dumps({"random": True, "seed": seed}))
    return path
